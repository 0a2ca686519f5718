// `tree`: one pipelined binary tree over all ranks, ignoring nodes (docs/nccl-model.md §2.2 shape,
// NCCL `src/graph/trees.cc` ncclGetBtree; pipelined-tree cost ≈ 2(k + d - 1)(α + nβ/k) per
// direction, docs/theory.md §1.5). AllReduce = reduce up + broadcast down (rooted at rank 0);
// Broadcast and Reduce are rooted at the request's root by relabelling v = (rank - root) mod p.
#include "algorithms/generators/tree_source.hpp"

namespace collsim::detail {

namespace {

class FlatTreeSource final : public PipelinedTreeSource {
 public:
  explicit FlatTreeSource(const Request& r)
      : PipelinedTreeSource(r, 1), root_(r.collective == Collective::kAllReduce ? 0 : r.root) {}

 protected:
  TreeLinks links(int rank, int /*c*/, int /*t*/) const override {
    TreeLinks l = btree(n_, (rank - root_ + n_) % n_);
    if (l.parent >= 0) l.parent = (l.parent + root_) % n_;
    for (int& ch : l.children) ch = (ch + root_) % n_;
    return l;
  }
  int root(int /*c*/, int /*t*/) const override { return root_; }

 private:
  int root_;
};

}  // namespace

Schedule make_tree(const Request& r) {
  auto src = std::make_shared<FlatTreeSource>(r);
  const int channels = src->ir_channels();
  return Schedule(make_info(r, channels), std::move(src));
}

}  // namespace collsim::detail
