// Every malformed config in tests/data/configs/bad gives exactly this message: file:line:col,
// the key path, and what was expected (docs/style.md: pin every user-facing message).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "topology/error.hpp"
#include "topology/loader.hpp"

namespace collsim {
namespace {

struct BadConfig {
  std::string file;
  std::string message;  // after "<path>:"
};

const std::vector<BadConfig> kBadConfigs = {
    {"syntax-error.yaml", "3:5: invalid YAML: end of sequence flow not found"},
    {"top-level-list.yaml", "1:1: expected a mapping of cluster settings at the top level"},
    {"unknown-top-key.yaml",
     "1:1: nodez: unknown key; expected one of name, description, nodes, node, network, costs, "
     "faults; did you mean \"nodes\"?"},
    {"duplicate-key.yaml", "2:1: nodes: duplicate key"},
    {"nodes-not-integer.yaml", "1:8: nodes: expected an integer from 1 to 1048576, got \"two\""},
    {"unknown-gpu-model.yaml",
     "3:8: node.gpu: unknown GPU model \"H100-SMX\"; expected one of V100-SXM2, V100-PCIe, "
     "RTX2080Ti, RTX4090, A100-SXM, A100-PCIe, A800-SXM, L40S, L4, H100-SXM, H100-PCIe, H800, "
     "H20, H200, B200, GB200, B300, GB300, host-process; "
     "did you mean \"H100-SXM\"?"},
    {"missing-gpus.yaml", "3:3: node: missing required key \"gpus\""},
    {"zero-nic-bandwidth.yaml",
     "6:31: node.nics.bandwidth: expected a positive bandwidth such as \"400Gbps\", got \"0Gbps\""},
    {"negative-pcie-bandwidth.yaml",
     "6:16: node.pcie.bandwidth: expected a positive bandwidth such as \"400Gbps\", "
     "got \"-63GB/s\""},
    {"bandwidth-without-unit.yaml",
     "7:16: node.nvlink.bandwidth: expected a bandwidth such as \"400Gbps\", got \"fast\""},
    {"negative-latency.yaml",
     "5:35: node.nvlink.latency: expected a non-negative time such as \"0.6us\", got \"-1us\""},
    {"misspelled-fabric.yaml",
     "5:20: node.nvlink.fabric: unknown NVLink fabric \"nvswich\"; expected one of nvswitch, "
     "mesh; did you mean \"nvswitch\"?"},
    {"misspelled-nic-key.yaml",
     "8:5: node.nics.bandwith: unknown key; expected one of count, bandwidth, latency, kind, "
     "in_order, plugin_latency; did you mean \"bandwidth\"?"},
    {"efa-without-in-order.yaml",
     "7:5: node.nics: missing required key \"in_order\" for EFA NICs: false on the first EFA "
     "generation (p3dn, p4d, p4de: aws-ofi-nccl then runs NCCL with the Simple protocol only), "
     "true on p5 and later"},
    {"plugin-latency-too-large.yaml", "12:21: node.nics.plugin_latency: expected at most 1000us"},
    // EFA's 10 us a link written as 10 ms: a typo, not a cluster.
    {"nic-latency-in-ms.yaml",
     "9:14: node.nics.latency: expected at most 1 ms for a link's latency, got \"10ms\""},
    {"ethernet-with-gdr.yaml",
     "9:8: network.gdr: node.nics.kind ethernet is NCCL's socket transport, which moves host "
     "memory only; NICs that reach GPU memory over Ethernet are kind roce (or efa)"},
    {"p2p-not-bool.yaml", "5:44: node.pcie.p2p: expected true or false, got \"maybe\""},
    {"too-many-nics-for-lanes.yaml",
     "8:12: node.pcie.lanes: PCIe switch 0 would carry 2 GPUs and 2 NICs at x16 plus its "
     "uplink = 80 lanes, more than its 64"},
    {"layout-gpu-twice.yaml",
     "10:17: node.pcie.layout[1].gpus[0]: GPU 1 is already under switch 0"},
    {"network-missing.yaml", "1:1: missing required key \"network\" (2 nodes must be connected)"},
    {"network-without-nics.yaml",
     "7:3: network: the nodes have no NICs to attach (node.nics.count is 0)"},
    {"spines-missing.yaml",
     "8:3: network: missing required key \"spines\" (2 leaves need a spine layer)"},
    {"routing-misspelled.yaml",
     "7:87: network.routing: unknown routing \"ecpm\"; expected one of dmodk, ecmp, adaptive; "
     "did you mean \"ecmp\"?"},
    {"radix-too-small.yaml",
     "7:57: network.radix: a leaf of 32 down ports (nodes_per_leaf 4 x 8 NICs) needs 32 up ports "
     "at oversubscription 1: 64 ports, more than the radix 32"},
    {"mesh-groups-uneven.yaml",
     "5:34: node.nvlink.groups: 6 GPUs do not split into 4 equal groups"},
    {"explicit-disconnected-gpu.yaml",
     "4:5: devices[2]: GPU \"gpu2\" is not connected to GPU \"gpu0\""},
    {"explicit-unknown-device.yaml",
     "5:19: links[0].ends[1]: unknown device \"gpu_1\"; expected one of gpu0, gpu1; "
     "did you mean \"gpu1\"?"},
    {"explicit-bad-link-kind.yaml",
     "5:32: links[0].kind: unknown link kind \"infiniband\"; expected one of nvlink, nvswitch, "
     "pcie, smp, ib, roce, ethernet, c2c"},
    {"explicit-no-gpu.yaml", "2:3: devices: expected at least one device of kind gpu"},
    {"empty.yaml", " expected a mapping of cluster settings at the top level"},
    {"tab-indent.yaml", "4:5: invalid YAML: illegal map value"},
    {"undefined-alias.yaml", "5:9: invalid YAML: the referenced anchor is not defined"},
    {"zero-gpus.yaml", "5:9: node.gpus: expected an integer from 1 to 4096, got 0"},
    {"too-many-nodes.yaml", "2:8: nodes: expected an integer from 1 to 1048576, got 99999999"},
    {"too-many-gpus.yaml",
     "2:8: nodes: 200000 nodes x 8 GPUs = 1600000 GPUs; expected at most 1048576"},
    {"nics-as-list.yaml", "6:9: node.nics: expected a mapping"},
    {"zero-nvlink-bandwidth.yaml",
     "6:37: node.nvlink.bandwidth: expected a positive bandwidth such as \"400Gbps\", got "
     "\"0GB/s\""},
    {"oversubscription-below-one.yaml",
     "14:21: network.oversubscription: expected a number from 1 to 1024, got 0.5"},
};

class ConfigErrors : public ::testing::TestWithParam<BadConfig> {};

TEST_P(ConfigErrors, GivesThePinnedMessage) {
  const std::string path =
      std::string(COLLSIM_SOURCE_DIR) + "/tests/data/configs/bad/" + GetParam().file;
  try {
    load_topology(path);
    FAIL() << path << " loaded without error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), path + ":" + GetParam().message);
  }
}

INSTANTIATE_TEST_SUITE_P(BadConfigs, ConfigErrors, ::testing::ValuesIn(kBadConfigs),
                         [](const auto& param_info) {
                           std::string name = param_info.param.file.substr(0, param_info.param.file.size() - 5);
                           for (char& c : name) c = (c == '-') ? '_' : c;
                           return name;
                         });

TEST(ConfigErrors, UnknownPresetSuggestsTheNearest) {
  try {
    load_topology("dgx-h10");
    FAIL();
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("unknown config \"dgx-h10\": not a file and not a preset; expected one of ",
                        0),
              0u)
        << msg;
    EXPECT_NE(msg.find("did you mean \"dgx-h100\"?"), std::string::npos) << msg;
  }
}

TEST(ConfigErrors, NodesOverrideIsRejectedOnExplicitConfigs) {
  const std::string text =
      "devices:\n  - {name: g, kind: gpu, node: 0, model: H100-SXM}\nlinks: []\n";
  EXPECT_THROW(parse_topology(text, "x.yaml", LoadOptions{4}), ConfigError);
}

// The GPU cap names --nodes when the override pushed the count over it, and a caller (the config
// fuzzer) may lower it: capped at 2,048 GPUs, Summit (6 per node) loads at 341 nodes, not 342.
TEST(ConfigErrors, GpuCapNamesNodesAndCanBeLowered) {
  try {
    load_topology("dgx-h100", LoadOptions{.nodes = 200000});
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "--nodes: 200000 nodes x 8 GPUs = 1600000 GPUs; expected at most 1048576");
  }
  LoadOptions capped{.nodes = 341};
  capped.max_gpus = 2048;
  EXPECT_EQ(load_topology("summit", capped).rank_count(), 2046);
  capped.nodes = 342;
  EXPECT_THROW(load_topology("summit", capped), ConfigError);
}

}  // namespace
}  // namespace collsim
