// Pipelined trees: reduce toward the root, broadcast away from it, chunk by chunk (internal to
// algorithms/). `tree`, `dbtree` and `binomial` (Broadcast, Reduce) differ only in the shape.
//
// Each request channel carries `trees` trees, tree t on part t of the channel's data (dbtree: two
// trees, half the data each). AllReduce runs the reduction and the broadcast as two concurrent
// IR channels, as NCCL splits a tree channel's CTA into a reducing and a broadcasting group
// (`src/device/all_reduce.h` runTreeSplit, docs/nccl-model.md §2.2); the root's broadcast of chunk
// k depends on its reduction of chunk k (an explicit Dependency). IR channel of (request channel
// c, tree t, part d) = (c x trees + t) x parts + d, parts = 2 for AllReduce (d = 0 reduce,
// 1 broadcast), else 1.
//
// Per chunk, a member with children c1..cm and parent p does
//   reduce:    recv-reduce-copy c1 (input -> scratch), recv-reduce c2..c(m-1) (scratch),
//              recv-reduce-send cm -> p; a leaf sends its input; the root accumulates into its
//              output and marks its last reduction postop
//   broadcast: recv-copy-send p -> c1 (into output), send c2..cm; a leaf receives; the root
//              sends (Broadcast: from its input, plus a local copy to its output)
// Cost of one pipelined tree (one-port, depth d, k chunks): about 2(k + d - 1)(α + nβ/k) for
// Broadcast (docs/theory.md §1.5); AllReduce doubles it.
#pragma once

#include <vector>

#include "algorithms/generators/group_source.hpp"

namespace collsim::detail {

class PipelinedTreeSource : public GroupSource {
 public:
  PipelinedTreeSource(const Request& r, int trees);

  int ir_channels() const { return channels_ * trees_ * parts_; }
  void groups(int rank, int channel, std::vector<Group>& out) const override;
  std::vector<Dependency> dependencies(int rank) const override;
  // One run per tree rooted at `rank`: its broadcast's piece k waits for its reduction's.
  void append_dependency_runs(int rank, int first_channel, int end_channel,
                              std::vector<DependencyRun>& out) const override;

 protected:
  // Parent (-1 at the root) and children of `rank` in tree t of request channel c.
  virtual TreeLinks links(int rank, int c, int t) const = 0;
  virtual int root(int c, int t) const = 0;
  std::uint64_t scratch_elems(int rank) const override;

 private:
  Span region(int c, int t) const;
  std::vector<Op> reduce_templates(int rank, const TreeLinks& l, std::uint64_t off,
                                   std::uint64_t len) const;
  std::vector<Op> broadcast_templates(int rank, const TreeLinks& l, std::uint64_t off,
                                      std::uint64_t len) const;

  int trees_;
  int parts_;
};

}  // namespace collsim::detail
