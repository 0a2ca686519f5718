// `dbtree`: NCCL's double binary tree for AllReduce (docs/nccl-model.md §2.2; NCCL
// `src/graph/trees.cc` ncclGetBtree / ncclGetDtree, `src/graph/connect.cc`; Sanders, Speck &
// Träff 2009 for two complementary trees). Two binary trees over the *nodes*: tree 0 the
// btree, tree 1 its mirror (even node count) or its shift by one (odd), so a node interior in
// one is a leaf in the other. Inside a node the ranks form a chain by local rank; the chain's
// head (local rank 0) carries the node's links in the inter-node tree, so it has up to three
// children (next in chain + two child nodes' heads), as NCCL's tree does. Each channel sends
// half its data down each tree. Per rank the traffic is ≈ 2n sent and 2n received, like the
// ring's 2(p-1)/p·n, with a latency of 2((g-1) + log2(nodes)) hops (docs/theory.md §1.2, §1.6 d).
// Nodes may hold different numbers of ranks (each chain is as long as its node). One node
// degenerates to a chain.
#include "algorithms/generators/tree_source.hpp"

namespace collsim::detail {

namespace {

class DoubleTreeSource final : public PipelinedTreeSource {
 public:
  explicit DoubleTreeSource(const Request& r) : PipelinedTreeSource(r, 2) {}

 protected:
  TreeLinks links(int rank, int /*c*/, int t) const override {
    const Communicator& comm = req_.comm;
    const int node = comm.node_of(rank);
    const int local = comm.local_rank(rank);
    const std::vector<int>& chain = comm.ranks_of_node(node);
    TreeLinks l;
    if (local > 0) {
      l.parent = chain[local - 1];
      if (local + 1 < static_cast<int>(chain.size())) l.children.push_back(chain[local + 1]);
      return l;
    }
    const int nodes = comm.node_count();
    const TreeLinks inter = t == 0 ? btree(nodes, node) : dtree(nodes, node);
    if (inter.parent >= 0) l.parent = comm.ranks_of_node(inter.parent)[0];
    if (chain.size() > 1) l.children.push_back(chain[1]);
    for (int child : inter.children) l.children.push_back(comm.ranks_of_node(child)[0]);
    return l;
  }
  int root(int /*c*/, int t) const override {
    const int nodes = req_.comm.node_count();
    int root_node = 0;
    if (t == 1 && nodes > 1) root_node = nodes % 2 == 0 ? nodes - 1 : 1;
    return req_.comm.ranks_of_node(root_node)[0];
  }
};

}  // namespace

Schedule make_dbtree(const Request& r) {
  auto src = std::make_shared<DoubleTreeSource>(r);
  const int channels = src->ir_channels();
  return Schedule(make_info(r, channels), std::move(src));
}

}  // namespace collsim::detail
