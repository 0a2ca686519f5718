// Communicator::from_topology on a preset cluster.
#include <gtest/gtest.h>

#include "algorithms/generators/generator.hpp"
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

// NCCL's ring leaves a node by the NIC it came in by (src/graph/search.cc): on a DGX H100, whose
// PCIe switches each hold two GPUs and their two NICs, from the GPU beside the one it entered at.
// Every ring channel enters node k at local rank c mod 8 and leaves it from that GPU's PCIe
// neighbour, whose route to the next node goes through the entry GPU's NIC and no NVLink.
TEST(CommunicatorTopology, ARingLeavesANodeByTheNicItCameInBy) {
  const Topology topo = load_topology("h100-2node-ib");
  const Communicator comm = Communicator::from_topology(topo);
  for (int r = 0; r < 8; ++r) EXPECT_EQ(comm.ring_exit(r), r ^ 1) << "rank " << r;
  EXPECT_EQ(comm.ring_exit(9), 8);
  for (int c = 0; c < 16; ++c) {
    const std::vector<int> order = detail::ring_order(comm, c);
    ASSERT_EQ(order.size(), 16u);
    for (int k = 0; k < 2; ++k) {
      const int first = order[static_cast<std::size_t>(8 * k)];
      const int last = order[static_cast<std::size_t>(8 * k + 7)];
      EXPECT_EQ(comm.local_rank(first), c % 8) << "channel " << c;
      EXPECT_EQ(last, comm.ring_exit(first)) << "channel " << c;
      const int next = order[static_cast<std::size_t>((8 * k + 8) % 16)];
      const Route& hop = topo.route(topo.gpu_of(Rank{comm.gpu(last)}),
                                    topo.gpu_of(Rank{comm.gpu(next)}), topo.route_flow(c));
      for (LinkId l : hop.links) {
        EXPECT_NE(topo.link(l).kind, LinkKind::kNvSwitch) << "channel " << c;
      }
      EXPECT_EQ(topo.device(topo.link(hop.links[1]).dst).name,
                "node" + std::to_string(comm.node_of(last)) + "/nic" + std::to_string(c % 8))
          << "channel " << c;
    }
  }
  // Where no GPU shares a NIC's switch (Summit's NICs hang off the CPUs), rings stay rotations.
  const Topology summit = load_topology("summit", LoadOptions{2});
  const Communicator s = Communicator::from_topology(summit);
  for (int r = 0; r < s.size(); ++r) EXPECT_EQ(s.ring_exit(r), -1);
  // One node: no NIC to leave by; the ring is the rotation it always was.
  const Communicator one = Communicator::from_topology(load_topology("dgx-h100"));
  EXPECT_EQ(detail::ring_order(one, 2), (std::vector<int>{2, 3, 4, 5, 6, 7, 0, 1}));
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
