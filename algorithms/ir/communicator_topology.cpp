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
  return Communicator(nodes, std::move(gpus));
}

}  // namespace collsim
