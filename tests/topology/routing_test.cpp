// Routing rules (topology/route.cpp): NVLink first, P2P-off detours, rail-local NICs, D-mod-k
// spine spreading, and the link kinds a cross-node route crosses in order.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "tests/preset_with.hpp"
#include "topology/error.hpp"
#include "topology/loader.hpp"

namespace collsim {
namespace {

std::vector<std::string> kinds(const Topology& t, const Route& r) {
  std::vector<std::string> out;
  for (LinkId l : r.links) out.emplace_back(to_string(t.link(l).kind));
  return out;
}

std::vector<std::string> hops(const Topology& t, const Route& r) {
  std::vector<std::string> out;
  for (LinkId l : r.links) out.push_back(t.device(t.link(l).dst).name);
  return out;
}

DeviceId gpu(const Topology& t, int node, int local) { return t.gpus_of_node(node).at(local); }

TEST(Routing, NvSwitchIsPreferredOverPcie) {
  const Topology t = load_topology("dgx-h100");
  const Route& r = t.route(gpu(t, 0, 0), gpu(t, 0, 5));
  EXPECT_EQ(kinds(t, r), (std::vector<std::string>{"nvswitch", "nvswitch"}));
  EXPECT_EQ(t.route_latency(r), us(1.0));  // 0.5 us a link through the switch (§3.2 of theory.md)
  EXPECT_EQ(t.route_bandwidth(r), GBps(450));
}

TEST(Routing, MeshGoesDirect) {
  const Topology t = load_topology("h100-nvlink-4");
  const Route& r = t.route(gpu(t, 0, 1), gpu(t, 0, 3));
  EXPECT_EQ(hops(t, r), (std::vector<std::string>{"node0/gpu3"}));
  EXPECT_EQ(t.route_bandwidth(r), GBps(150));
}

TEST(Routing, PeerToPeerOffClimbsToTheCpu) {
  const Topology t = load_topology("pcie-2gpu");
  const Route& r = t.route(gpu(t, 0, 0), gpu(t, 0, 1));
  EXPECT_EQ(hops(t, r),
            (std::vector<std::string>{"node0/pcie0", "node0/cpu0", "node0/pcie0", "node0/gpu1"}));
}

TEST(Routing, RailLocalNicAndKindsInOrder) {
  const Topology t = load_topology("h100-2node-ib");
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(t.device(*t.nic_of(gpu(t, 0, i))).name, "node0/nic" + std::to_string(i));
  }
  const Route& r = t.route(gpu(t, 0, 3), gpu(t, 1, 3));
  EXPECT_EQ(hops(t, r), (std::vector<std::string>{"node0/pcie1", "node0/nic3", "su0/rail3",
                                                  "node1/nic3", "node1/pcie1", "node1/gpu3"}));
  EXPECT_EQ(kinds(t, r), (std::vector<std::string>{"pcie", "pcie", "ib", "ib", "pcie", "pcie"}));
}

TEST(Routing, PxnKeepsCrossRailTrafficOnTheDestinationRail) {
  const Topology t = load_topology("h100-2node-ib");
  ASSERT_TRUE(t.pxn());
  // GPU 0 sends to the destination's rail. NIC 1 shares its PCIe switch (path PXB): straight
  // through it, as NCCL does, with no NVLink hop.
  const Route& r = t.route(gpu(t, 0, 0), gpu(t, 1, 1));
  EXPECT_EQ(hops(t, r), (std::vector<std::string>{"node0/pcie0", "node0/nic1", "su0/rail1",
                                                  "node1/nic1", "node1/pcie0", "node1/gpu1"}));
  EXPECT_TRUE(t.nic_at_pxb(gpu(t, 0, 0), *t.nic_of(gpu(t, 0, 1))));
  // NIC 2 sits under another switch: GPU 0 hands the data over NVLink to GPU 2, which owns it.
  EXPECT_FALSE(t.nic_at_pxb(gpu(t, 0, 0), *t.nic_of(gpu(t, 0, 2))));
  const Route& far = t.route(gpu(t, 0, 0), gpu(t, 1, 2));
  EXPECT_EQ(hops(t, far),
            (std::vector<std::string>{"node0/nvswitch", "node0/gpu2", "node0/pcie1", "node0/nic2",
                                      "su0/rail2", "node1/nic2", "node1/pcie1", "node1/gpu2"}));
}

TEST(Routing, WithoutPxnCrossRailTrafficCrossesTheSpine) {
  const Topology t =
      parse_topology(test::preset_with("h100-2node-ib", "pxn: false"), "no-pxn.yaml");
  ASSERT_FALSE(t.pxn());
  const Route& r = t.route(gpu(t, 0, 0), gpu(t, 1, 1));
  EXPECT_EQ(kinds(t, r),
            (std::vector<std::string>{"pcie", "pcie", "ib", "ib", "ib", "ib", "pcie", "pcie"}));
  // D-mod-k: node1/nic1 is NIC number 9 overall; 9 mod 4 spines = spine1.
  EXPECT_EQ(hops(t, r)[3], "spine1");
}

TEST(Routing, WithoutGpuDirectRdmaTheDataIsStagedInHostMemory) {
  const Topology t =
      parse_topology(test::preset_with("h100-2node-ib", "gdr: false"), "no-gdr.yaml");
  ASSERT_FALSE(t.gdr());
  // Rule 5: up to the GPU's host CPU and down to its NIC, then up to the receiver's host CPU
  // and down to the GPU; PXN's NVLink hand-over is not taken even across rails.
  const std::vector<std::string> staged = {"node0/pcie1", "node0/cpu0", "node0/pcie1", "node0/nic3",
                                           "su0/rail3",   "node1/nic3", "node1/pcie1", "node1/cpu0",
                                           "node1/pcie1", "node1/gpu3"};
  EXPECT_EQ(hops(t, t.route(gpu(t, 0, 3), gpu(t, 1, 3))), staged);
  const Route& cross = t.route(gpu(t, 0, 0), gpu(t, 1, 1));
  EXPECT_EQ(hops(t, cross).front(), "node0/pcie0");
  const std::vector<std::string> cross_kinds = kinds(t, cross);
  EXPECT_EQ(std::count(cross_kinds.begin(), cross_kinds.end(), "nvswitch"), 0);
  // Inside a node nothing changes: GPUDirect RDMA is about the NIC.
  EXPECT_EQ(kinds(t, t.route(gpu(t, 0, 0), gpu(t, 0, 5))),
            (std::vector<std::string>{"nvswitch", "nvswitch"}));
}

TEST(Routing, GdrMustBeABoolean) {
  try {
    parse_topology(test::preset_with("h100-2node-ib", "gdr: sometimes"), "bad-gdr.yaml");
    FAIL() << "gdr: sometimes was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("bad-gdr.yaml:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("gdr"), std::string::npos) << e.what();
  }
}

TEST(Routing, SpinesAreSpreadByDestination) {
  // 8 nodes of one GPU and one NIC, 2 per leaf (4 leaves), 4 spines.
  const std::string yaml = R"(
nodes: 8
node:
  gpu: H100-SXM
  gpus: 1
  pcie: {latency: 0.5us, switches: 1}
  nics: {count: 1, bandwidth: 400Gbps, latency: 0.3us, kind: ib}
network: {topology: fat_tree, nodes_per_leaf: 2, spines: 4, latency: 0.1us}
)";
  const Topology t = parse_topology(yaml, "fat.yaml");
  std::set<std::string> spines;
  for (int dst = 2; dst < 8; ++dst) {
    const Route& r = t.route(gpu(t, 0, 0), gpu(t, dst, 0));
    ASSERT_EQ(kinds(t, r).size(), 8u);
    const std::string spine = hops(t, r)[3];
    EXPECT_EQ(spine, "spine" + std::to_string(dst % 4)) << "to node " << dst;
    spines.insert(spine);
  }
  EXPECT_EQ(spines.size(), 4u);
  // Same-leaf traffic never climbs.
  EXPECT_EQ(hops(t, t.route(gpu(t, 0, 0), gpu(t, 1, 0)))[2], "leaf0");
  EXPECT_EQ(t.route(gpu(t, 0, 0), gpu(t, 1, 0)).links.size(), 6u);
}

TEST(Routing, OversubscriptionNarrowsTheUplinks) {
  const std::string yaml = R"(
nodes: 4
node:
  gpu: H100-SXM
  gpus: 1
  pcie: {latency: 0.5us, switches: 1}
  nics: {count: 1, bandwidth: 400Gbps, latency: 0.3us, kind: ib}
network: {topology: fat_tree, nodes_per_leaf: 2, spines: 1, oversubscription: 2, latency: 0.1us}
)";
  const Topology t = parse_topology(yaml, "fat.yaml");
  // A leaf's two 50 GB/s ports share one uplink of 2 x 50 / 2 = 50 GB/s.
  EXPECT_EQ(t.route_bandwidth(t.route(gpu(t, 0, 0), gpu(t, 2, 0))), GBps(50));
  EXPECT_DOUBLE_EQ(t.bisection_bandwidth().gbyte_per_second(), 50.0);
}

TEST(Routing, NvlinkDomainSpansTrays) {
  const Topology t = load_topology("gb200-nvl72");
  const Route& r = t.route(gpu(t, 0, 0), gpu(t, 17, 3));
  EXPECT_EQ(kinds(t, r), (std::vector<std::string>{"nvswitch", "nvswitch"}));
  // Beyond the rack (--nodes 36: two racks) the network takes over.
  const Topology two = load_topology("gb200-nvl72", LoadOptions{36});
  EXPECT_EQ(kinds(two, two.route(gpu(two, 0, 0), gpu(two, 18, 0))),
            (std::vector<std::string>{"c2c", "pcie", "ib", "ib", "pcie", "c2c"}));
}

TEST(Routing, IsDeterministic) {
  const Topology a = load_topology("superpod-h100");
  const Topology b = load_topology("superpod-h100");
  for (int n = 1; n < 32; n += 5) {
    EXPECT_EQ(a.route(gpu(a, 0, 2), gpu(a, n, 6)).links, b.route(gpu(b, 0, 2), gpu(b, n, 6)).links);
  }
}

TEST(Routing, NoNicMeansNoRouteAcrossNodes) {
  const std::string yaml = R"(
devices:
  - {name: a, kind: gpu, node: 0, model: H100-SXM}
  - {name: b, kind: gpu, node: 1, model: H100-SXM}
  - {name: s, kind: switch}
links:
  - {ends: [a, s], kind: ib, bandwidth: 50GB/s, latency: 1us}
  - {ends: [b, s], kind: ib, bandwidth: 50GB/s, latency: 1us}
)";
  const Topology t = parse_topology(yaml, "x.yaml");
  try {
    t.route(t.gpu_of(Rank{0}), t.gpu_of(Rank{1}));
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "no route from a to b: a reaches no NIC");
  }
}

DeviceId device_named(const Topology& t, const std::string& name) {
  for (const Device& d : t.devices()) {
    if (d.name == name) return d.id;
  }
  ADD_FAILURE() << "no device " << name;
  return DeviceId{0};
}

TEST(Routing, ASharpSwitchIsReachedThroughTheGpusNic) {
  // A CollNet switch actor runs on a network switch (schedule.hpp): GPU -> its NIC -> the
  // switch, and back down to another node's GPU through that GPU's NIC.
  const Topology t =
      parse_topology(test::preset_with("h100-2node-ib", "sharp: true"), "sharp.yaml");
  ASSERT_TRUE(t.sharp());
  const DeviceId rail3 = device_named(t, "su0/rail3");
  EXPECT_EQ(hops(t, t.route(gpu(t, 0, 3), rail3)),
            (std::vector<std::string>{"node0/pcie1", "node0/nic3", "su0/rail3"}));
  EXPECT_EQ(hops(t, t.route(rail3, gpu(t, 1, 3))),
            (std::vector<std::string>{"node1/nic3", "node1/pcie1", "node1/gpu3"}));
  EXPECT_EQ(kinds(t, t.route(rail3, gpu(t, 1, 3))),
            (std::vector<std::string>{"ib", "pcie", "pcie"}));
  // Under another leaf, the route climbs to a spine and comes down to the switch's leaf.
  const std::string yaml = R"(
nodes: 4
node:
  gpu: H100-SXM
  gpus: 1
  pcie: {latency: 0.5us, switches: 1}
  nics: {count: 1, bandwidth: 400Gbps, latency: 0.3us, kind: ib}
network: {topology: fat_tree, nodes_per_leaf: 2, spines: 2, latency: 0.1us, sharp: true}
)";
  const Topology fat = parse_topology(yaml, "fat-sharp.yaml");
  const DeviceId leaf0 = device_named(fat, "leaf0");
  const std::vector<std::string> up = hops(fat, fat.route(gpu(fat, 3, 0), leaf0));
  ASSERT_EQ(up.size(), 5u);  // PCIe switch, NIC, its leaf, a spine, the SHARP switch's leaf
  EXPECT_EQ(up[1], "node3/nic0");
  EXPECT_EQ(up[2], "leaf1");
  EXPECT_EQ(up[3].rfind("spine", 0), 0u) << up[3];
  EXPECT_EQ(up[4], "leaf0");
}

TEST(Routing, SharpRunsInInfinibandSwitchesOnly) {
  try {
    parse_topology(test::preset_with("a100-2node-roce", "sharp: true"), "roce-sharp.yaml");
    FAIL() << "sharp: true on RoCE was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("roce-sharp.yaml:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("SHARP runs in InfiniBand switches; node.nics.kind is "
                                         "roce"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace collsim
