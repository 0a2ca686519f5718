// What the CollNet schedules share (internal to algorithms/generators/): nodes of g ranks
// each, in-network sums (collnet.cpp: CollNet's AllReduce; collnet_blocked.cpp: CollNetDirect's
// AllGather and ReduceScatter, and NVLS's across nodes).
#pragma once

#include <string_view>
#include <vector>

#include "algorithms/generators/group_source.hpp"

namespace collsim::detail {

class CollNetSource : public GroupSource {
 public:
  explicit CollNetSource(Request r)
      : GroupSource(std::move(r)),
        nodes_(req_.comm.node_count()),
        g_(static_cast<int>(req_.comm.ranks_of_node(0).size())) {}

  std::uint64_t buffer_bytes(int rank, BufferKind buffer) const override {
    if (rank < n_) return GeneratedSource::buffer_bytes(rank, buffer);
    return buffer == BufferKind::kScratch ? bytes(vector_elems()) : 0;
  }

 protected:
  // A GPU's scratch holds the partial sum it sends on (a head's or a chain member's).
  std::uint64_t scratch_elems(int /*rank*/) const override { return vector_elems(); }
  // The whole vector: AllReduce's count, or every rank's block of AllGather / ReduceScatter.
  std::uint64_t vector_elems() const {
    return is_blocked(req_.collective) ? static_cast<std::uint64_t>(n_) * req_.count : req_.count;
  }

  int member(int node, int i) const {
    return req_.comm.ranks_of_node(node)[static_cast<std::size_t>(i)];
  }
  // The switch's up templates for a region: node 0's sum, then every other node's, reducing;
  // the last reduction is the whole sum's and applies the post-op.
  std::vector<Op> switch_up(int local, std::uint64_t off, std::uint64_t len) const {
    const BufferRef acc = ops::scratch(off);
    std::vector<Op> v = {ops::recv(member(0, local), acc, len)};
    for (int k = 1; k < nodes_; ++k) {
      v.push_back(ops::recv_reduce(member(k, local), acc, len, k == nodes_ - 1));
    }
    return v;
  }

  int nodes_;
  int g_;  // ranks per node
};

// Refuses (RequestError) a communicator whose nodes hold different numbers of ranks: local rank
// b of every node feeds the same switch.
void check_collnet(const Request& r, std::string_view name);

// collnet_direct's AllGather and ReduceScatter (collnet_blocked.cpp).
Schedule make_collnet_direct_blocked(const Request& r);

}  // namespace collsim::detail
