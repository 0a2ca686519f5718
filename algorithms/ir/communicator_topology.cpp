// The one place the algorithms module reads a Topology: the rank layout of a cluster, or of a
// subset of its GPUs. It uses only Topology::rank_count() and Topology::node_of().
#include <fmt/format.h>

#include <set>

#include "algorithms/ir/communicator.hpp"
#include "topology/error.hpp"
#include "topology/topology.hpp"

namespace collsim {

Communicator Communicator::from_topology(const Topology& topo, const std::vector<Rank>& subset) {
  std::vector<Rank> ranks = subset;
  if (ranks.empty()) {
    for (int r = 0; r < topo.rank_count(); ++r) ranks.push_back(Rank{r});
  }
  if (ranks.empty()) throw RequestError("communicator: the cluster has no GPUs");
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
    nodes.push_back(topo.node_of(r));
    gpus.push_back(r.value);
  }
  // Local ranks are dense in communicator order; with the default (all ranks, node-major with
  // Topology's local order) they equal Topology::local_rank().
  return Communicator(nodes, std::move(gpus));
}

}  // namespace collsim
