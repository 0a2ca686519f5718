// The rank layout a schedule is built for: how many ranks, which node each one sits on, its local
// rank within that node, and which GPU of the cluster it runs on.
//
// Algorithms see only this (never the Topology), so the same generator serves a whole cluster, a
// subset of its GPUs, or a synthetic grid in a test. Node ids are dense (0..node_count()-1, in
// order of first appearance); local ranks are dense within a node, in communicator rank order.
//
//   Communicator c = Communicator::grid(2, 4);       // 8 ranks, node-major: rank 5 = node 1, local
//   1 Communicator s = Communicator::from_topology(topo, {Rank{0}, Rank{2}, Rank{8}});  // 3 GPUs
//   for (int r : c.ranks_of_node(1)) ...             // 4, 5, 6, 7
#pragma once

#include <vector>

#include "topology/device.hpp"

namespace collsim {

class Topology;

class Communicator {
 public:
  // All ranks on one node.
  static Communicator flat(int ranks);
  // nodes x gpus_per_node ranks, node-major (rank = node * gpus_per_node + local).
  static Communicator grid(int nodes, int gpus_per_node);
  // The cluster's ranks (all of them, or `subset` in the given order). Throws RequestError on an
  // empty subset, a rank outside the cluster or a repeated rank. Defined in
  // communicator_topology.cpp, the only file of this module that reads a Topology.
  static Communicator from_topology(const Topology& topo, const std::vector<Rank>& subset = {});

  // rank i runs on node `nodes[i]` (any ids; renumbered densely) and cluster GPU `gpus[i]`.
  // Throws RequestError when empty, sizes differ or a GPU repeats.
  Communicator(const std::vector<int>& nodes, std::vector<int> gpus);

  int size() const { return static_cast<int>(node_.size()); }
  int node_count() const { return static_cast<int>(node_ranks_.size()); }
  int node_of(int rank) const { return node_.at(rank); }
  int local_rank(int rank) const { return local_.at(rank); }
  // The cluster rank (index into Topology::gpus()) this communicator rank runs on.
  int gpu(int rank) const { return gpu_.at(rank); }
  // Ranks of a node, by local rank.
  const std::vector<int>& ranks_of_node(int node) const { return node_ranks_.at(node); }
  // Whether every node holds the same number of ranks.
  bool uniform() const { return uniform_; }
  int max_ranks_per_node() const { return max_per_node_; }
  int min_ranks_per_node() const { return min_per_node_; }
  // The rank of the same node that ends a ring entering the node at `rank`, so that the ring
  // leaves by the NIC it came in by (from_topology: a GPU that reaches every NIC of `rank`
  // through PCIe switches alone); -1 where none does, or the communicator has no topology.
  int ring_exit(int rank) const {
    return ring_exit_.empty() ? -1 : ring_exit_.at(static_cast<std::size_t>(rank));
  }

 private:
  std::vector<int> node_;
  std::vector<int> local_;
  std::vector<int> gpu_;
  std::vector<std::vector<int>> node_ranks_;
  bool uniform_ = true;
  int max_per_node_ = 0;
  int min_per_node_ = 0;
  std::vector<int> ring_exit_;  // by rank; empty without a topology
};

}  // namespace collsim
