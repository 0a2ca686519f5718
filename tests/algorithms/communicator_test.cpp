#include "algorithms/ir/communicator.hpp"

#include <gtest/gtest.h>

#include "algorithms/generators/generator.hpp"
#include "topology/error.hpp"

namespace collsim {
namespace {

TEST(Communicator, GridIsNodeMajor) {
  const Communicator c = Communicator::grid(2, 4);
  EXPECT_EQ(c.size(), 8);
  EXPECT_EQ(c.node_count(), 2);
  EXPECT_EQ(c.node_of(5), 1);
  EXPECT_EQ(c.local_rank(5), 1);
  EXPECT_EQ(c.ranks_of_node(1), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_TRUE(c.uniform());
}

// A subset of a cluster: nodes 3 and 7 of the cluster become nodes 0 and 1.
TEST(Communicator, SubsetRenumbersNodesDensely) {
  const Communicator c({3, 3, 7}, {24, 26, 56});
  EXPECT_EQ(c.node_count(), 2);
  EXPECT_EQ(c.node_of(2), 1);
  EXPECT_EQ(c.local_rank(1), 1);
  EXPECT_EQ(c.gpu(2), 56);
  EXPECT_FALSE(c.uniform());
  EXPECT_EQ(c.max_ranks_per_node(), 2);
}

TEST(Communicator, RejectsBadLayouts) {
  EXPECT_THROW(Communicator::flat(0), RequestError);
  EXPECT_THROW(Communicator({0, 0}, {1, 1}), RequestError);
  EXPECT_THROW(Communicator({0}, {1, 2}), RequestError);
}

// Every member of a tree has the parent that lists it as a child, and all reach the root.
void expect_tree(int n, detail::TreeLinks (*links)(int, int)) {
  int roots = 0;
  for (int r = 0; r < n; ++r) {
    const detail::TreeLinks l = links(n, r);
    EXPECT_LE(l.children.size(), 2u);
    if (l.parent < 0) {
      ++roots;
    } else {
      const auto kids = links(n, l.parent).children;
      EXPECT_NE(std::find(kids.begin(), kids.end(), r), kids.end()) << "n " << n << " r " << r;
    }
    int up = r, steps = 0;
    while (links(n, up).parent >= 0 && steps++ <= n) up = links(n, up).parent;
    EXPECT_LE(steps, n);
  }
  EXPECT_EQ(roots, 1) << "n " << n;
}

TEST(Trees, BinaryTreesAreConsistentForEveryCount) {
  for (int n = 1; n <= 70; ++n) {
    expect_tree(n, detail::btree);
    expect_tree(n, detail::dtree);
  }
}

// docs/nccl-model.md §2.2: with 8 nodes, tree0 0->4->{2,6}->{1,3,5,7} and tree1 the mirror.
TEST(Trees, EightNodesMatchNccl) {
  EXPECT_EQ(detail::btree(8, 0).children, std::vector<int>{4});
  EXPECT_EQ(detail::btree(8, 4).children, (std::vector<int>{2, 6}));
  EXPECT_EQ(detail::btree(8, 6).children, (std::vector<int>{5, 7}));
  EXPECT_EQ(detail::dtree(8, 7).children, std::vector<int>{3});
  EXPECT_EQ(detail::dtree(8, 3).children, (std::vector<int>{5, 1}));
}

// With an even count, a member interior to one tree is a leaf of the other.
TEST(Trees, MirrorTreesHaveDisjointInteriors) {
  for (int n = 2; n <= 64; n += 2) {
    for (int r = 0; r < n; ++r) {
      EXPECT_FALSE(!detail::btree(n, r).children.empty() && !detail::dtree(n, r).children.empty())
          << "n " << n << " r " << r;
    }
  }
}

}  // namespace
}  // namespace collsim
