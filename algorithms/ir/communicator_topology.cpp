// The one place the algorithms module reads a Topology: the rank layout of a cluster, or of a
// subset of its GPUs. It uses Topology::rank_count(), node_of() and, to find NVLink domains, the
// links from each node's GPUs to NVSwitches.
#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <unordered_map>

#include "algorithms/ir/communicator.hpp"
#include "topology/error.hpp"
#include "topology/topology.hpp"

namespace collsim {

namespace {

// A communicator's node is an NVLink domain, as NCCL's is: nodes whose GPUs share an NVSwitch (an
// NVL72 rack's trays under MNNVL) are one node to it. NCCL counts nodes by the first rank of
// their intra-node ring (`src/init.cc`), which under MNNVL runs through the whole clique, and
// gives its NVLink domains as that count (nvlDomainInfo.nNvlDomains = nNodes). Each node maps to
// the first node of its domain; a node with its own NVSwitch, or none, to itself.
std::vector<int> nvlink_domains(const Topology& topo) {
  std::vector<int> domain(static_cast<std::size_t>(topo.node_count()));
  std::unordered_map<std::int32_t, int> first_node;  // NVSwitch device -> first node on it
  for (int n = 0; n < topo.node_count(); ++n) {
    domain[n] = n;
    for (DeviceId g : topo.gpus_of_node(n)) {
      for (LinkId l : topo.out_links(g)) {
        const Link& link = topo.link(l);
        if (link.kind != LinkKind::kNvSwitch) continue;
        domain[n] = std::min(domain[n], first_node.emplace(link.dst.value, n).first->second);
      }
    }
  }
  return domain;
}

// Where NCCL's ring leaves a node (`src/graph/search.cc`, ncclTopoSearchRecGpu): its search
// starts a ring at a NIC, visits every GPU and returns from the last one to a NIC that
// ncclTopoSelectNets offers that GPU, the ring's own first NIC (NCCL_CROSS_NIC 0, or its
// default 2 on a rail-optimized fabric, where another NIC would cross rails). A GPU under the
// same PCIe switch as that NIC reaches it directly (path PXB, GPUDirect RDMA), so the ring ends
// there and leaves without PXN's NVLink hop: on a DGX, whose PCIe switches each hold two GPUs and
// their NICs, the GPU beside the one the ring came in by. Per rank: the lowest local rank of
// its node (not itself, not across hosts) that reaches every NIC of the rank's GPU that way;
// -1 where none does (NICs on the CPUs' root ports, one GPU a switch).
std::vector<int> ring_exits(const Topology& topo, const Communicator& c) {
  std::vector<int> exit(static_cast<std::size_t>(c.size()), -1);
  for (int r = 0; r < c.size(); ++r) {
    const DeviceId gpu = topo.gpu_of(Rank{c.gpu(r)});
    const std::vector<DeviceId>& nics = topo.nics_of(gpu);
    if (nics.empty()) continue;
    for (int q : c.ranks_of_node(c.node_of(r))) {
      const DeviceId other = topo.gpu_of(Rank{c.gpu(q)});
      if (q == r || topo.device(other).node != topo.device(gpu).node) continue;
      if (std::all_of(nics.begin(), nics.end(),
                      [&](DeviceId nic) { return topo.nic_at_pxb(other, nic); })) {
        exit[static_cast<std::size_t>(r)] = q;
        break;
      }
    }
  }
  return exit;
}

}  // namespace

Communicator Communicator::from_topology(const Topology& topo, const std::vector<Rank>& subset) {
  std::vector<Rank> ranks = subset;
  if (ranks.empty()) {
    for (int r = 0; r < topo.rank_count(); ++r) ranks.push_back(Rank{r});
  }
  if (ranks.empty()) throw RequestError("communicator: the cluster has no GPUs");
  const std::vector<int> domain = nvlink_domains(topo);
  std::set<int> seen;
  std::vector<int> nodes;
  std::vector<int> gpus;
  for (Rank r : ranks) {
    if (r.value < 0 || r.value >= topo.rank_count()) {
      throw RequestError(fmt::format("communicator: rank {} is not in the cluster (ranks 0..{})",
                                     r.value, topo.rank_count() - 1));
    }
    if (!seen.insert(r.value).second) {
      throw RequestError(fmt::format("communicator: rank {} appears twice", r.value));
    }
    nodes.push_back(domain[static_cast<std::size_t>(topo.node_of(r))]);
    gpus.push_back(r.value);
  }
  // Local ranks are dense in communicator order; with the default (all ranks, node-major with
  // Topology's local order) they equal Topology::local_rank().
  Communicator c(nodes, std::move(gpus));
  c.ring_exit_ = ring_exits(topo, c);
  return c;
}

}  // namespace collsim
