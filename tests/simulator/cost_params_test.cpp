// Cost parameters: NCCL-sourced defaults and the `costs:` YAML overlay with located errors.
#include "simulator/cost_params.hpp"

#include <gtest/gtest.h>

#include "topology/config_node.hpp"
#include "topology/error.hpp"

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
