#include "algorithms/models/nccl_p2p.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "topology/topology.hpp"

namespace collsim {

namespace {

constexpr std::uint64_t kMinPart = 64 << 10;    // a part is at least 64 KiB
constexpr std::uint64_t kNvlChunk = 512 << 10;  // NCCL_P2P_NVL_CHUNKSIZE
constexpr std::uint64_t kNetChunk = 128 << 10;  // NCCL_P2P_NET_CHUNKSIZE
constexpr double kP2pPerChannelNetBw = 14;      // NCCL_P2P_PER_CHANNEL_NET_BW, GB/s (2.29+)
constexpr int kP2pPerBatch = 8;                 // NCCL_MAX_DEV_WORK_P2P_PER_BATCH

int pow2_up(int v) {
  int p = 1;
  while (p < v) p *= 2;
  return p;
}

// NCCL's local network devices of a GPU (`src/graph/topo.cc` getLocalNetCountByBw, from 2.29
// ncclTopoGetLocalNetCountByBw): the NICs its channels take in turn (Topology::nics_of), counted
// until their bandwidth reaches the GPU's bandwidth to its CPU as NCCL rates it (nccl_pcie_gbps);
// a GPU on C2C is not held back. Until 2.28 that bandwidth is the GPU's own link to a CPU, none
// behind a PCIe switch (so no NIC counts there); from 2.29 its path to the CPU, whose first link we
// take.
struct LocalNets {
  int count = 0;
  double gbps = 0;  // GB/s, their sum
};

LocalNets local_nets(const Topology& topo, DeviceId gpu, NcclRelease v) {
  double gpu_gbps = 0;
  for (LinkId l : topo.out_links(gpu)) {
    const Link& link = topo.link(l);
    const bool to_cpu = topo.device(link.dst).kind == DeviceKind::kCpu;
    if (link.kind == LinkKind::kPcie && (to_cpu || v.at_least(29))) {
      gpu_gbps = std::max(gpu_gbps, nccl_pcie_gbps(link.bandwidth.gbyte_per_second()));
    }
    if (link.kind == LinkKind::kC2c) gpu_gbps = std::numeric_limits<double>::infinity();
  }
  LocalNets n;
  if (gpu_gbps <= 0) return n;
  for (DeviceId nic : topo.nics_of(gpu)) {
    for (LinkId l : topo.out_links(nic)) {
      if (is_network(topo.link(l).kind)) {
        n.gbps += topo.link(l).bandwidth.gbyte_per_second();
        break;
      }
    }
    ++n.count;
    if (n.gbps >= gpu_gbps) break;
  }
  return n;
}

// The channels NCCL gives a peer across the network, `NCCL_NCHANNELS_PER_NET_PEER` unset
// (`src/graph/paths.cc` ncclTopoGetNchannels): 2 until 2.20; from 2.21 2, halved while 2 x the
// ranks pass 4 x the p2p channels, or the GPU's local NICs if more; from 2.29 its local NICs, or
// one per 14 GB/s of their bandwidth if more.
int net_peer_channels(const Topology& topo, int gpu, int ranks, int p2p_channels, NcclRelease v) {
  if (!v.at_least(21)) return 2;
  const LocalNets nets = local_nets(topo, topo.gpu_of(Rank{gpu}), v);
  if (v.at_least(29)) {
    if (nets.count == 0) return 2;
    return std::max(nets.count,
                    static_cast<int>(std::ceil(static_cast<int>(nets.gbps) / kP2pPerChannelNetBw)));
  }
  int most = 2;
  while (most * ranks > p2p_channels * 4 && most > 1) most /= 2;
  return std::max(nets.count, most);
}

// ncclTopoGetNchannels for a pair: 2 x the NVLinks between the two GPUs (their route's narrowest
// link over one NVLink port; a multi-node NVLink domain counts as NVLink), 2 for a PCIe peer,
// `net` for a peer across the network.
int peer_channels(const Topology& topo, int from, int to, int net) {
  const Route& r = topo.route(topo.gpu_of(Rank{from}), topo.gpu_of(Rank{to}));
  bool nvlink = true;
  for (LinkId l : r.links) {
    if (is_network(topo.link(l).kind)) return net;
    nvlink = nvlink && is_nvlink_class(topo.link(l).kind);
  }
  if (!nvlink) return 2;
  const double port = topo.gpu_model().nvlink_bandwidth.bytes_per_second();
  if (port <= 0) return 2;
  const int links = static_cast<int>(topo.route_bandwidth(r).bytes_per_second() / port + 1e-9);
  return 2 * std::max(1, links);
}

}  // namespace

NcclP2p nccl_p2p_shape(const Topology& topo, const Communicator& comm, int comm_channels,
                       NcclRelease release) {
  NcclP2p p;
  p.channels = pow2_up(std::clamp(comm_channels, 1, nccl_max_channels(release)));
  int least = p.channels;
  // The nodes of a cluster are alike: node 0's pairs, and one pair across nodes, stand for all.
  const std::vector<int>& local = comm.ranks_of_node(0);
  const bool across = comm.node_count() > 1;
  if (across) {
    const int remote = comm.ranks_of_node(1).front();
    const int g = comm.gpu(local.front());
    const int net = net_peer_channels(topo, g, comm.size(), p.channels, release);
    least = std::min(least, peer_channels(topo, g, comm.gpu(remote), net));
  }
  for (int a : local) {
    for (int b : local) {
      // Node 0's own pairs never cross the network: the network count does not apply.
      if (a != b) least = std::min(least, peer_channels(topo, comm.gpu(a), comm.gpu(b), 2));
    }
  }
  p.per_peer = std::min(pow2_up(least), p.channels);
  // From 2.29, across nodes (NCCL_NCHANNELS_PER_NET_PEER unset), a peer's channels halve until
  // every peer fits one round of the p2p channels, NCCL_MAX_DEV_WORK_P2P_PER_BATCH peers a batch.
  if (across && release.at_least(29)) {
    const int batches = (comm.size() + kP2pPerBatch - 1) / kP2pPerBatch;
    while (p.per_peer * batches > p.channels && p.per_peer > 1) p.per_peer /= 2;
  }
  return p;
}

int nccl_p2p_launched_channels(Collective c, const NcclP2p& p2p, const Communicator& comm,
                               std::uint64_t bytes) {
  const int ranks = std::max(1, comm.size());
  const bool send_recv = c == Collective::kSendRecv;
  const std::uint64_t peer_bytes = nccl_p2p_peer_bytes(c, bytes, ranks);
  int first = p2p.per_peer;
  while (first > 1 && first * ranks > p2p.channels) first /= 2;
  const std::uint64_t max_part = 32 * (comm.node_count() > 1 ? kNetChunk : kNvlChunk);
  int k = first;
  while (k <= p2p.per_peer / 2 && (peer_bytes + k - 1) / static_cast<std::uint64_t>(k) > max_part) {
    k *= 2;
  }
  const std::uint64_t parts = std::max<std::uint64_t>(1, (peer_bytes + kMinPart - 1) / kMinPart);
  k = static_cast<int>(std::min<std::uint64_t>(static_cast<std::uint64_t>(k), parts));
  const int peers = send_recv ? 1 : ranks;
  return std::clamp(k * peers, 1, p2p.channels);
}

}  // namespace collsim
