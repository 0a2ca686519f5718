// Fabrics grown by --nodes (network.radix: leaves, spines, a third tier) and the three routing
// modes (dmodk, ecmp, adaptive) of topology/route.cpp.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>
#include <set>
#include <thread>

#include "topology/error.hpp"
#include "topology/loader.hpp"

namespace collsim {
namespace {

DeviceId gpu(const Topology& t, int node) { return t.gpus_of_node(node).at(0); }

std::vector<std::string> switches(const Topology& t, const Route& r) {
  std::vector<std::string> out;
  for (LinkId l : r.links) {
    const Device& d = t.device(t.link(l).dst);
    if (d.kind == DeviceKind::kSwitch) out.push_back(d.name);
  }
  return out;
}

int switch_count(const Topology& t) {
  int n = 0;
  for (const Device& d : t.devices()) n += d.kind == DeviceKind::kSwitch;
  return n;
}

// One GPU and one 400 Gb/s NIC per node on radix-8 switches: a leaf takes 4 nodes and sends 4
// ports up, so 4 spines; one spine layer connects 8 leaves (32 nodes).
std::string radix8(const std::string& routing = "dmodk") {
  return fmt::format(R"(
nodes: 4
node:
  gpu: H100-SXM
  gpus: 1
  pcie: {{latency: 0.5us, switches: 1}}
  nics: {{count: 1, bandwidth: 400Gbps, latency: 0.3us, kind: ib}}
network: {{topology: fat_tree, radix: 8, latency: 0.1us, routing: {}}}
)",
                     routing);
}

Topology grown(int nodes, const std::string& routing = "dmodk") {
  return parse_topology(radix8(routing), "radix8.yaml", LoadOptions{nodes});
}

TEST(Fabric, TwoTiersUpToWhatTheSpinesConnect) {
  const Topology t = grown(32);
  EXPECT_EQ(t.fabric(), "2 tiers: 8 leaves of 4 nodes, 4 spines");
  EXPECT_EQ(switch_count(t), 8 + 4);
  // Same leaf: up and down once; another leaf: through a spine.
  EXPECT_EQ(switches(t, t.route(gpu(t, 0), gpu(t, 3))), (std::vector<std::string>{"leaf0"}));
  EXPECT_EQ(switches(t, t.route(gpu(t, 0), gpu(t, 31))).size(), 3u);
}

TEST(Fabric, GrowsAThirdTierPastTheSpineRadix) {
  const Topology t = grown(33);  // 9 leaves: more than a radix-8 spine takes
  EXPECT_EQ(t.fabric(),
            "3 tiers (radix 8): 9 leaves of 4 nodes in 3 pods of 4, 4 spines per pod, 4 core "
            "planes of 4");
  EXPECT_EQ(switch_count(t), 9 + 3 * 4 + 4 * 4);
  // Same pod (leaves 0 and 1): leaf, spine, leaf; another pod: leaf, spine, core, spine, leaf.
  EXPECT_EQ(switches(t, t.route(gpu(t, 0), gpu(t, 4))).size(), 3u);
  const auto cross = switches(t, t.route(gpu(t, 0), gpu(t, 32)));
  ASSERT_EQ(cross.size(), 5u);
  EXPECT_EQ(cross[0], "leaf0");
  EXPECT_EQ(cross[1].substr(0, 5), "pod0/");
  EXPECT_EQ(cross[2].substr(0, 4), "core");
  EXPECT_EQ(cross[3].substr(0, 5), "pod2/");
  EXPECT_EQ(cross[4], "leaf8");
  // Non-blocking at every tier: the bisection is half the NIC ports.
  EXPECT_DOUBLE_EQ(grown(64).bisection_bandwidth().gbyte_per_second(), 32 * 50.0);
}

TEST(Fabric, RefusesMoreNodesThanThreeTiersConnect) {
  // 8 pods of 4 leaves of 4 nodes = 128 nodes at most.
  EXPECT_NO_THROW(grown(128));
  try {
    grown(129);
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("radix: 129 nodes need 9 pods of 4 leaves, more than a "
                                         "three-tier fat tree of radix 8 connects (8 pods, 128 "
                                         "nodes)"),
              std::string::npos)
        << e.what();
  }
}

TEST(Fabric, DmodKTakesSuccessiveDigitsOfTheDestination) {
  const Topology t = grown(128);
  // Destination NIC d: spine d mod 4 in the source pod, core (d / 4) mod 4 of that plane.
  for (int d : {4, 21, 38, 127}) {
    const auto s = switches(t, t.route(gpu(t, 0), gpu(t, d)));
    if (d < 16) continue;  // same pod
    ASSERT_EQ(s.size(), 5u) << d;
    EXPECT_EQ(s[1], fmt::format("pod0/spine{}", d % 4)) << d;
    EXPECT_EQ(s[2], fmt::format("core{}/{}", d % 4, d / 4 % 4)) << d;
  }
}

TEST(Fabric, EcmpHashesFlowsAndStaysPut) {
  const Topology t = grown(32, "ecmp");
  EXPECT_EQ(t.routing(), Routing::kEcmp);
  std::set<std::string> used;
  std::map<std::pair<int, int>, std::string> first;
  for (int flow = 0; flow < 16; ++flow) {
    for (int dst = 4; dst < 32; dst += 4) {
      const auto s = switches(t, t.route(gpu(t, 0), gpu(t, dst), flow));
      ASSERT_EQ(s.size(), 3u);
      used.insert(s[1]);
      // The same flow always takes the same spine.
      EXPECT_EQ(switches(t, t.route(gpu(t, 0), gpu(t, dst), flow))[1], s[1]);
    }
  }
  EXPECT_EQ(used.size(), 4u);  // the hash reaches every spine
  // Flows of one pair are told apart: 16 flows do not all land on one spine.
  std::set<std::string> one_pair;
  for (int flow = 0; flow < 16; ++flow) {
    one_pair.insert(switches(t, t.route(gpu(t, 0), gpu(t, 8), flow))[1]);
  }
  EXPECT_GT(one_pair.size(), 1u);
  // Under D-mod-k the flow key does not matter.
  const Topology d = grown(32);
  EXPECT_EQ(&d.route(gpu(d, 0), gpu(d, 8), 3), &d.route(gpu(d, 0), gpu(d, 8), 0));
}

TEST(Fabric, AdaptiveRoutingIsOneSwitchPerTierWithAllTheirCapacity) {
  const Topology t = grown(33, "adaptive");
  EXPECT_EQ(t.fabric(),
            "3 tiers (radix 8): 9 leaves of 4 nodes in 3 pods of 4, 4 spines per pod, 4 core "
            "planes of 4, spread adaptively (built as one)");
  EXPECT_EQ(switch_count(t), 9 + 3 + 1);
  const Route& r = t.route(gpu(t, 0), gpu(t, 32));
  // A leaf's 4 uplinks of 50 GB/s as one 200 GB/s link; the non-blocking bisection is kept.
  bool saw_up = false;
  for (LinkId l : r.links) {
    if (t.device(t.link(l).dst).name == "pod0/spines") {
      EXPECT_DOUBLE_EQ(t.link(l).bandwidth.gbyte_per_second(), 200.0);
      saw_up = true;
    }
  }
  EXPECT_TRUE(saw_up);
  EXPECT_DOUBLE_EQ(grown(64, "adaptive").bisection_bandwidth().gbyte_per_second(),
                   grown(64).bisection_bandwidth().gbyte_per_second());
}

TEST(Fabric, RoutesMayBeAskedFromSeveralThreads) {
  // The evaluator costs candidates on several threads over one topology (predict/parallel.hpp).
  const Topology t = grown(64, "ecmp");
  std::vector<std::vector<std::vector<LinkId>>> seen(4);
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&, k] {
      for (int a = 0; a < 64; ++a) {
        for (int b = 0; b < 64; ++b) seen[k].push_back(t.route(gpu(t, a), gpu(t, b), k % 2).links);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(seen[0], seen[2]);
  EXPECT_EQ(seen[1], seen[3]);
}

TEST(Fabric, SummitNodeHasTwoTriadsAndCrossesTheXBus) {
  const Topology t = load_topology("summit", LoadOptions{2});
  const auto& g = t.gpus_of_node(0);
  auto kinds = [&](const Route& r) {
    std::vector<std::string> out;
    for (LinkId l : r.links) out.emplace_back(to_string(t.link(l).kind));
    return out;
  };
  EXPECT_EQ(kinds(t.route(g[0], g[2])), (std::vector<std::string>{"nvlink"}));
  EXPECT_EQ(kinds(t.route(g[2], g[3])), (std::vector<std::string>{"c2c", "smp", "c2c"}));
  EXPECT_EQ(t.route_bandwidth(t.route(g[0], g[1])), GBps(50));
  // GPUs 0-2 leave through port 0 (socket 0), 3-5 through port 1.
  EXPECT_EQ(t.device(*t.nic_of(g[1])).name, "node0/nic0");
  EXPECT_EQ(t.device(*t.nic_of(g[4])).name, "node0/nic1");
}

}  // namespace
}  // namespace collsim
