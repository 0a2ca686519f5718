// Every preset in configs/ loads, its device and cable counts are what the hardware has, and it
// takes the default costs.
#include <gtest/gtest.h>

#include <map>

#include "topology/loader.hpp"
#include "topology/summary.hpp"

namespace collsim {
namespace {

struct Expected {
  std::string preset;
  int nodes, gpus, nics;
  std::map<LinkKind, int> cables;
  double injection_gbps;  // per GPU, GB/s
  double bisection_gbps;  // GB/s per direction
};

int cables_of(const TopologySummary& s, LinkKind k) {
  int n = 0;
  for (const auto& g : s.links) n += g.kind == k ? g.cables : 0;
  return n;
}

// Cable counts derived from each preset's structure (PCIe: one cable per GPU, NIC and switch
// uplink; rail-optimized: one per NIC plus leaves x spines).
const std::vector<Expected> kPresets = {
    // 8 GPU->NVSwitch; PCIe 8 GPU + 8 NIC + 4 uplinks; 8 rail leaves x 4 spines + 8 NIC cables.
    {"dgx-h100", 1, 8, 8, {{LinkKind::kNvSwitch, 8}, {LinkKind::kPcie, 20}, {LinkKind::kSmp, 1},
                           {LinkKind::kIb, 40}}, 50, 4 * 450},
    {"dgx-h200", 1, 8, 8, {{LinkKind::kNvSwitch, 8}, {LinkKind::kPcie, 20}, {LinkKind::kSmp, 1},
                           {LinkKind::kIb, 40}}, 50, 4 * 450},
    {"dgx-b200", 1, 8, 8, {{LinkKind::kNvSwitch, 8}, {LinkKind::kPcie, 20}, {LinkKind::kSmp, 1},
                           {LinkKind::kIb, 40}}, 50, 4 * 900},
    {"dgx-a100", 1, 8, 8, {{LinkKind::kNvSwitch, 8}, {LinkKind::kPcie, 20}, {LinkKind::kIb, 40}},
     25, 4 * 300},
    // H800: 8 NVLink4 ports a GPU, 200 GB/s; radix-64 planes: 8 rail leaves x 32 spines + 8 NICs.
    {"hgx-h800", 1, 8, 8, {{LinkKind::kNvSwitch, 8}, {LinkKind::kPcie, 20}, {LinkKind::kSmp, 1},
                           {LinkKind::kIb, 264}}, 50, 4 * 200},
    {"h100-2node-ib", 2, 16, 16, {{LinkKind::kNvSwitch, 16}, {LinkKind::kIb, 16 + 32}}, 50,
     8 * 50},
    {"h100-16node-ib", 16, 128, 128, {{LinkKind::kNvSwitch, 128}, {LinkKind::kIb, 128 + 32}}, 50,
     64 * 50},
    // The same cluster with SHARP on (network.sharp): nothing in its cables changes.
    {"h100-16node-sharp", 16, 128, 128,
     {{LinkKind::kNvSwitch, 128}, {LinkKind::kIb, 128 + 32}}, 50, 64 * 50},
    {"superpod-h100", 32, 256, 256, {{LinkKind::kIb, 256 + 32}}, 50, 128 * 50},
    // Mesh: 6 GPU pairs at 150 GB/s; bisection crosses 4 pairs.
    {"h100-nvlink-4", 1, 4, 0, {{LinkKind::kNvLink, 6}, {LinkKind::kPcie, 6}}, 0, 4 * 150},
    {"h100-4gpu-2node-ndr200", 2, 8, 8, {{LinkKind::kNvLink, 12}, {LinkKind::kIb, 8}}, 25,
     4 * 25},
    // 16 x 100G NICs for 8 GPUs: each GPU's channels take two of them in turn.
    {"a100-2node-roce", 2, 16, 32, {{LinkKind::kNvSwitch, 16}, {LinkKind::kRoce, 32}}, 2 * 12.5,
     16 * 12.5},
    // Two GPUs and one uplink on a P2P-less switch: everything funnels through the uplink.
    {"pcie-2gpu", 1, 2, 0, {{LinkKind::kPcie, 3}}, 0, 15.75},
    // Azure ND H100 v5 VMs: two VMs under one radix-64 leaf (32 spines above it, unused).
    {"nd-h100-v5", 2, 16, 16, {{LinkKind::kNvSwitch, 16}, {LinkKind::kIb, 16 + 32}}, 50, 8 * 50},
    // AWS p5: eight NIC groups of four EFAs, one per PCIe switch with its GPU (8 GPU + 8 NIC + 8
    // uplinks a node), on one non-blocking switch.
    {"aws-p5", 2, 16, 16, {{LinkKind::kNvSwitch, 16}, {LinkKind::kPcie, 48}, {LinkKind::kSmp, 2},
                           {LinkKind::kEfa, 16}}, 50, 8 * 50},
    // Summit: two NVLink2 triads per node (3 + 3 GPU pairs) and 6 GPU->CPU links; IB: 2 NIC
    // cables per node, 512 ToRs x 18 directors. One 12.5 GB/s port per 3 GPUs; non-blocking,
    // so half the NIC ports cross the middle.
    {"summit", 4608, 27648, 9216, {{LinkKind::kNvLink, 27648}, {LinkKind::kC2c, 27648},
                                   {LinkKind::kSmp, 4608}, {LinkKind::kIb, 9216 + 9216}},
     12.5 / 3, 4608 * 12.5},
    // 72 GPUs on one NVLink domain: 36 GPUs x 900 GB/s cross the middle.
    {"gb200-nvl72", 18, 72, 72, {{LinkKind::kNvSwitch, 72}, {LinkKind::kC2c, 72},
                                 {LinkKind::kPcie, 72}, {LinkKind::kIb, 72 + 16}}, 50, 36 * 900},
};

class Presets : public ::testing::TestWithParam<Expected> {};

TEST_P(Presets, LoadsWithTheHardwareCounts) {
  const Expected& e = GetParam();
  const Topology t = load_topology(e.preset);
  const TopologySummary s = summarize(t);
  EXPECT_EQ(s.nodes, e.nodes);
  EXPECT_EQ(s.gpus, e.gpus);
  EXPECT_EQ(s.devices.count(DeviceKind::kNic) ? s.devices.at(DeviceKind::kNic) : 0, e.nics);
  for (const auto& [kind, count] : e.cables) {
    EXPECT_EQ(cables_of(s, kind), count) << to_string(kind);
  }
  EXPECT_DOUBLE_EQ(s.injection_min.gbyte_per_second(), e.injection_gbps);
  EXPECT_DOUBLE_EQ(s.injection_max.gbyte_per_second(), e.injection_gbps);
  EXPECT_NEAR(s.bisection.gbyte_per_second(), e.bisection_gbps, 1e-6 * e.bisection_gbps);
}

INSTANTIATE_TEST_SUITE_P(All, Presets, ::testing::ValuesIn(kPresets), [](const auto& param_info) {
  std::string name = param_info.param.preset;
  for (char& c : name) c = (c == '-') ? '_' : c;
  return name;
});

TEST(Presets, EveryPresetFileIsCovered) {
  std::vector<std::string> tested;
  for (const auto& e : kPresets) tested.push_back(e.preset);
  std::sort(tested.begin(), tested.end());
  EXPECT_EQ(preset_names(), tested);
}

// A preset describes hardware and takes the NCCL-sourced default costs: a fit describes the run
// it was made on as much as the hardware, and none has been shown to carry over to other
// clusters (docs/calibration.md, "Presets carry no fitted values"). Fits are overlays (--costs).
TEST(Presets, NoPresetShipsFittedCosts) {
  for (const std::string& name : preset_names()) {
    EXPECT_TRUE(load_topology(name).cost_settings().empty())
        << name << " has a costs: block; ship the fit as an overlay under docs/validation/";
  }
}

TEST(Presets, NodesOverrideGrowsTheFabric) {
  const Topology t = load_topology("dgx-h100", LoadOptions{64});
  EXPECT_EQ(t.node_count(), 64);
  EXPECT_EQ(t.rank_count(), 512);
  // Two scalable units of 32 nodes; the halves are SU 0 and SU 1. Non-blocking uplinks carry
  // everything SU 0's 256 NICs inject: 256 x 50 GB/s.
  EXPECT_DOUBLE_EQ(t.bisection_bandwidth().gbyte_per_second(), 256 * 50.0);
}

}  // namespace
}  // namespace collsim
