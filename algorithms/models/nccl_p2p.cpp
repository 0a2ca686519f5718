#include "algorithms/models/nccl_p2p.hpp"

#include <algorithm>

#include "topology/topology.hpp"

namespace collsim {

namespace {

constexpr int kMaxP2pChannels = 64;             // MAXCHANNELS
constexpr std::uint64_t kMinPart = 64 << 10;    // a part is at least 64 KiB
constexpr std::uint64_t kNvlChunk = 512 << 10;  // NCCL_P2P_NVL_CHUNKSIZE
constexpr std::uint64_t kNetChunk = 128 << 10;  // NCCL_P2P_NET_CHUNKSIZE
constexpr int kNetPeerChannels = 2;             // NCCL_NCHANNELS_PER_NET_PEER

int pow2_up(int v) {
  int p = 1;
  while (p < v) p *= 2;
  return p;
}

// ncclTopoGetNchannels for a pair: 2 x the NVLinks between the two GPUs (their route's narrowest
// link over one NVLink port; a multi-node NVLink domain counts as NVLink), 2 for a PCIe peer,
// NCCL_NCHANNELS_PER_NET_PEER for a peer across the network.
int peer_channels(const Topology& topo, int from, int to) {
  const Route& r = topo.route(topo.gpu_of(Rank{from}), topo.gpu_of(Rank{to}));
  bool nvlink = true;
  for (LinkId l : r.links) {
    if (is_network(topo.link(l).kind)) return kNetPeerChannels;
    nvlink = nvlink && is_nvlink_class(topo.link(l).kind);
  }
  if (!nvlink) return 2;
  const double port = topo.gpu_model().nvlink_bandwidth.bytes_per_second();
  if (port <= 0) return 2;
  const int links = static_cast<int>(topo.route_bandwidth(r).bytes_per_second() / port + 1e-9);
  return 2 * std::max(1, links);
}

}  // namespace

NcclP2p nccl_p2p_shape(const Topology& topo, const Communicator& comm, int comm_channels) {
  NcclP2p p;
  p.channels = pow2_up(std::clamp(comm_channels, 1, kMaxP2pChannels));
  int least = p.channels;
  // The nodes of a cluster are alike: node 0's pairs, and one pair across nodes, stand for all.
  const std::vector<int>& local = comm.ranks_of_node(0);
  if (comm.node_count() > 1) {
    const int remote = comm.ranks_of_node(1).front();
    least = std::min(least, peer_channels(topo, comm.gpu(local.front()), comm.gpu(remote)));
  }
  for (int a : local) {
    for (int b : local) {
      if (a != b) least = std::min(least, peer_channels(topo, comm.gpu(a), comm.gpu(b)));
    }
  }
  p.per_peer = std::min(pow2_up(least), p.channels);
  return p;
}

int nccl_p2p_launched_channels(Collective c, const NcclP2p& p2p, const Communicator& comm,
                               std::uint64_t bytes) {
  const int ranks = std::max(1, comm.size());
  const bool send_recv = c == Collective::kSendRecv;
  const std::uint64_t peer_bytes = send_recv ? bytes : bytes / static_cast<std::uint64_t>(ranks);
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
