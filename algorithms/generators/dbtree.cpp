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
//
// Channels spread over the node's NICs as NCCL's do: the tree search gives each channel its own
// network device and starts the channel's intra-node chain at a GPU next to it, so on a node
// with a NIC per GPU channel c's chain is rotated to start at local rank c mod g and that GPU
// carries the channel's inter-node traffic. With every channel on local rank 0, 64 channels of a
// 16-node, 8-NIC cluster all crossed one NIC.
#include "algorithms/generators/tree_source.hpp"

namespace collsim::detail {

namespace {

class DoubleTreeSource final : public PipelinedTreeSource {
 public:
  explicit DoubleTreeSource(const Request& r) : PipelinedTreeSource(r, 2) {}

 protected:
  TreeLinks links(int rank, int c, int t) const override {
    const Communicator& comm = req_.comm;
    const int node = comm.node_of(rank);
    const int g = static_cast<int>(comm.ranks_of_node(node).size());
    const int pos = (comm.local_rank(rank) - rotation(c, g) + g) % g;  // place in c's chain
    TreeLinks l;
    if (pos > 0) {
      l.parent = chain_member(node, c, pos - 1);
      if (pos + 1 < g) l.children.push_back(chain_member(node, c, pos + 1));
      return l;
    }
    const int nodes = comm.node_count();
    const TreeLinks inter = t == 0 ? btree(nodes, node) : dtree(nodes, node);
    if (inter.parent >= 0) l.parent = chain_member(inter.parent, c, 0);
    if (g > 1) l.children.push_back(chain_member(node, c, 1));
    for (int child : inter.children) l.children.push_back(chain_member(child, c, 0));
    return l;
  }
  int root(int c, int t) const override {
    const int nodes = req_.comm.node_count();
    int root_node = 0;
    if (t == 1 && nodes > 1) root_node = nodes % 2 == 0 ? nodes - 1 : 1;
    return chain_member(root_node, c, 0);
  }

 private:
  // The rank at place `pos` of channel c's chain on `node`: the node's ranks by local rank,
  // rotated to start at local rank c mod g (on one node there is no NIC to spread over, and the
  // chain stays in local-rank order).
  int chain_member(int node, int c, int pos) const {
    const std::vector<int>& ranks = req_.comm.ranks_of_node(node);
    const int g = static_cast<int>(ranks.size());
    return ranks[static_cast<std::size_t>((pos + rotation(c, g)) % g)];
  }
  int rotation(int c, int g) const { return req_.comm.node_count() > 1 ? c % g : 0; }
};

}  // namespace

Schedule make_dbtree(const Request& r) {
  auto src = std::make_shared<DoubleTreeSource>(r);
  const int channels = src->ir_channels();
  return Schedule(make_info(r, channels), std::move(src));
}

}  // namespace collsim::detail
