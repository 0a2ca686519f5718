// Communicator::from_topology on a preset cluster.
#include <gtest/gtest.h>

#include "algorithms/generators/registry.hpp"
#include "algorithms/ir/communicator.hpp"
#include "topology/error.hpp"
#include "topology/loader.hpp"

namespace collsim {
namespace {

// NCCL's node is an NVLink domain: GB200 NVL72's 18 trays of 4 are one node of 72 ranks (local
// ranks in tray order), two racks two nodes, and a subset keeps the domains of its ranks.
TEST(CommunicatorTopology, AnNvlinkDomainIsOneNode) {
  const Topology rack = load_topology("gb200-nvl72");
  const Communicator one = Communicator::from_topology(rack);
  EXPECT_EQ(one.node_count(), 1);
  EXPECT_EQ(one.max_ranks_per_node(), 72);
  for (int r = 0; r < one.size(); ++r) EXPECT_EQ(one.local_rank(r), r);
  const Topology two = load_topology("gb200-nvl72", LoadOptions{36});
  const Communicator both = Communicator::from_topology(two);
  EXPECT_EQ(both.node_count(), 2);
  EXPECT_EQ(both.node_of(71), 0);
  EXPECT_EQ(both.node_of(72), 1);
  EXPECT_EQ(both.local_rank(72), 0);
  const Communicator pair = Communicator::from_topology(two, {Rank{3}, Rank{4}, Rank{100}});
  EXPECT_EQ(pair.node_count(), 2);  // ranks 3 and 4 sit on different trays of one rack
  EXPECT_EQ(pair.node_of(1), 0);
  // A node with its own NVSwitch stays its own node.
  const Topology h100 = load_topology("h100-2node-ib");
  EXPECT_EQ(Communicator::from_topology(h100).node_count(), 2);
}

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
