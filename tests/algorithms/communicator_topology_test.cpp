// Communicator::from_topology on a preset cluster.
#include <gtest/gtest.h>

#include "algorithms/generators/registry.hpp"
#include "algorithms/ir/communicator.hpp"
#include "topology/error.hpp"
#include "topology/loader.hpp"

namespace collsim {
namespace {

TEST(CommunicatorTopology, WholeClusterAndSubset) {
  const Topology topo = load_topology("h100-2node-ib");
  const Communicator all = Communicator::from_topology(topo);
  EXPECT_EQ(all.size(), topo.rank_count());
  EXPECT_EQ(all.node_count(), topo.node_count());
  for (int r = 0; r < all.size(); ++r) {
    EXPECT_EQ(all.node_of(r), topo.node_of(Rank{r}));
    EXPECT_EQ(all.local_rank(r), topo.local_rank(Rank{r}));
  }
  const int last = topo.rank_count() - 1;
  const Communicator sub = Communicator::from_topology(topo, {Rank{1}, Rank{last}});
  EXPECT_EQ(sub.size(), 2);
  EXPECT_EQ(sub.node_count(), 2);
  EXPECT_EQ(sub.gpu(1), last);
  EXPECT_THROW(Communicator::from_topology(topo, {Rank{0}, Rank{0}}), RequestError);
  EXPECT_THROW(Communicator::from_topology(topo, {Rank{last + 1}}), RequestError);
  Request r;
  r.algorithm = "dbtree";
  r.count = 1000;
  r.comm = sub;
  EXPECT_EQ(plan(r).rank_count(), 2);
}

}  // namespace
}  // namespace collsim
