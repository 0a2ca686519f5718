// Cost parameters: NCCL-sourced defaults and the `costs:` YAML overlay with located errors.
#include "simulator/cost_params.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>

#include "topology/config_node.hpp"
#include "topology/error.hpp"
#include "topology/loader.hpp"

namespace collsim {
namespace {

TEST(CostParams, HopperDefaultsComeFromNccl) {
  const CostParams c = default_cost_params(90);
  EXPECT_DOUBLE_EQ(c.protocol(Protocol::kLL).efficiency, 0.5);
  EXPECT_DOUBLE_EQ(c.protocol(Protocol::kLL128).efficiency, 120.0 / 128.0);
  EXPECT_DOUBLE_EQ(c.efficiency(LinkKind::kNvSwitch), 20.6 / 25.0);
  EXPECT_EQ(c.protocol(Protocol::kLL).launch, us(6.6));
  EXPECT_EQ(c.protocol(Protocol::kSimple).hop_latency[0], us(2.8));
  EXPECT_DOUBLE_EQ(c.protocol(Protocol::kLL128).channel_bandwidth.gbyte_per_second(), 18.35);
}

// An Ampere node of a multi-node cluster charges an intra-node LL hop 1.8 x NCCL's 0.6 us, as
// NCCL's Ampere-era releases did (src/graph/tuning.cc, 2.7 to 2.17): 0.48 us over the links'
// 0.6 on NVLink, nothing on PCIe or the network, and nothing on one node, on Hopper or on Volta.
TEST(CostParams, AmpereAcrossNodesChargesNcclsMultiNodeLlHop) {
  const auto ll_hop = [](const char* preset, std::optional<int> nodes = std::nullopt) {
    return default_cost_params(load_topology(preset, LoadOptions{nodes}))
        .protocol(Protocol::kLL)
        .hop_latency;
  };
  const auto nvlink = static_cast<std::size_t>(RouteClass::kNvLink);
  const auto network = static_cast<std::size_t>(RouteClass::kNetwork);
  EXPECT_EQ(ll_hop("a100-2node-roce")[nvlink], us(0.48));
  EXPECT_EQ(ll_hop("a100-2node-roce")[network], ll_hop("dgx-a100")[network]);
  EXPECT_EQ(ll_hop("a100-2node-roce")[static_cast<std::size_t>(RouteClass::kPcie)], us(0.0));
  EXPECT_EQ(ll_hop("a100-2node-roce", 1)[nvlink], us(0.0));
  EXPECT_EQ(ll_hop("dgx-a100")[nvlink], us(0.0));
  EXPECT_EQ(ll_hop("h100-2node-ib")[nvlink], us(0.0));
  EXPECT_EQ(ll_hop("summit")[nvlink], us(0.0));
  EXPECT_EQ(default_cost_params(load_topology("a100-2node-roce"))
                .protocol(Protocol::kLL128)
                .hop_latency[nvlink],
            default_cost_params(80).protocol(Protocol::kLL128).hop_latency[nvlink]);
}

// Copies and reductions stream at a fraction of the GPU model's own memory bandwidth, not the
// architecture's: an H200 (4.8 TB/s) is not an H100 (3.35), nor an RTX 2080 Ti (616 GB/s) an A100.
TEST(CostParams, MemoryRatesFollowTheGpuModel) {
  const auto rates = [](const std::string& gpu) {
    const CostParams c = default_cost_params(
        parse_topology("name: t\nnodes: 1\nnode: {gpu: " + gpu +
                           ", gpus: 2, pcie: {bandwidth: 16GB/s, latency: 1us, switches: 0}}\n",
                       "t.yaml"));
    return std::pair(c.copy_bandwidth.gbyte_per_second(), c.reduce_bandwidth.gbyte_per_second());
  };
  const auto [h100_copy, h100_reduce] = rates("H100-SXM");
  EXPECT_NEAR(h100_copy, 3350 * 0.905 / 2, 1e-9);  // 1.516 TB/s, measured 1.49-1.52 (docs/gpu.md)
  EXPECT_NEAR(h100_reduce, 3350 * 0.905 / 3, 1e-9);
  EXPECT_NEAR(rates("H200").first, 4800 * 0.905 / 2, 1e-9);  // measured 2.02-2.12 TB/s
  EXPECT_NEAR(rates("RTX2080Ti").first, 616 * 0.905 / 2, 1e-9);
  EXPECT_NEAR(rates("A100-SXM").first, 2039 * 0.905 / 2, 1e-9);
  // The architecture's default where no model is known (sm alone).
  EXPECT_NEAR(default_cost_params(90).copy_bandwidth.gbyte_per_second(), h100_copy, 1e-9);
}

TEST(CostParams, YamlOverridesReplaceOnlyWhatIsGiven) {
  CostParams c = default_cost_params(90);
  const ConfigNode root = ConfigNode::parse(R"(
costs:
  link_efficiency: {nvswitch: 0.9}
  reduce_bandwidth: free
  protocols:
    simple: {channel_bandwidth: none, launch: 5us, hop_latency: {network: 10us}}
    ll: {efficiency: 0.25}
)",
                                            "x.yaml");
  apply_cost_settings(read_cost_settings(root.at("costs")), c);
  EXPECT_DOUBLE_EQ(c.efficiency(LinkKind::kNvSwitch), 0.9);
  EXPECT_DOUBLE_EQ(c.efficiency(LinkKind::kNvLink), 20.6 / 25.0);
  EXPECT_EQ(c.reduce_bandwidth, Bandwidth());
  EXPECT_EQ(c.protocol(Protocol::kSimple).channel_bandwidth, Bandwidth());
  EXPECT_EQ(c.protocol(Protocol::kSimple).launch, us(5));
  EXPECT_EQ(c.protocol(Protocol::kSimple).hop_latency[2], us(10));
  EXPECT_EQ(c.protocol(Protocol::kSimple).hop_latency[0], us(2.8));
  EXPECT_DOUBLE_EQ(c.protocol(Protocol::kLL).efficiency, 0.25);
}

TEST(CostParams, YamlErrorsSayWhereAndWhat) {
  auto error = [](const std::string& yaml) {
    CostParams c = default_cost_params(90);
    try {
      apply_cost_settings(read_cost_settings(ConfigNode::parse(yaml, "x.yaml").at("costs")), c);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(error("costs:\n  protocols:\n    simpel: {launch: 1us}\n"),
            "x.yaml:3:5: costs.protocols.simpel: unknown key; expected one of ll, ll128, "
            "simple; did you mean \"simple\"?");
  EXPECT_EQ(error("costs:\n  link_efficiency: {ib: 1.5}\n"),
            "x.yaml:2:25: costs.link_efficiency.ib: expected a number from 0.01 to 1, got 1.5");
}

}  // namespace
}  // namespace collsim
