// The GPU catalogue: each model's NVLink ports, host interface and memory rate, as its datasheet
// gives them (docs/sources.md), and a config naming one gets its NVLink without stating it.
#include "topology/gpu_models.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>

#include "topology/loader.hpp"
#include "topology/topology.hpp"

namespace collsim {
namespace {

struct Row {
  const char* name;
  int sm;
  int nvlinks;
  double nvlink_GBps;  // per port, per direction
  double pcie_GBps;    // x16, per direction
  double memory_GBps;
};

// [S57] A800: 8 NVLink3 ports, 400 GB/s bidirectional; [S58] H800: 8 NVLink4 ports, 400 GB/s;
// [S59] H20: 18 ports, 4.0 TB/s; [S60] L40S 864 GB/s and L4 300 GB/s on PCIe Gen4, no NVLink;
// [S61] B300 and GB300: NVLink5 1.8 TB/s bidirectional, 8 TB/s, PCIe Gen6.
const Row kRows[] = {
    {"A800-SXM", 80, 8, 25, 31.5, 2039}, {"H800", 90, 8, 25, 63, 3350},
    {"H20", 90, 18, 25, 63, 4000},       {"L40S", 89, 0, 25, 31.5, 864},
    {"L4", 89, 0, 25, 31.5, 300},        {"B300", 103, 18, 50, 121, 8000},
    {"GB300", 103, 18, 50, 121, 8000},
};

TEST(GpuModels, DatasheetFigures) {
  for (const Row& r : kRows) {
    SCOPED_TRACE(r.name);
    const GpuModel* m = find_gpu_model(r.name);
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->sm, r.sm);
    EXPECT_EQ(m->nvlinks, r.nvlinks);
    EXPECT_DOUBLE_EQ(m->nvlink_bandwidth.gbyte_per_second(), r.nvlink_GBps);
    EXPECT_DOUBLE_EQ(m->pcie_bandwidth.gbyte_per_second(), r.pcie_GBps);
    EXPECT_DOUBLE_EQ(m->memory_bandwidth.gbyte_per_second(), r.memory_GBps);
  }
}

// An NVSwitch node of H800s without `nvlink.bandwidth`: each GPU's switch link is the model's
// 8 ports x 25 GB/s, 200 GB/s a direction, where H100's 18 give 450.
TEST(GpuModels, AConfigGetsItsModelsNvlink) {
  for (const auto& [model, expected] : {std::pair{"H800", 200.0}, std::pair{"H100-SXM", 450.0}}) {
    SCOPED_TRACE(model);
    const Topology t =
        parse_topology(std::string("name: t\nnodes: 1\nnode:\n  gpu: ") + model +
                           "\n  gpus: 8\n  nvlink:\n    fabric: nvswitch\n    latency: 0.5us\n  "
                           "pcie:\n    latency: 0.5us\n    switches: 0\n",
                       "t.yaml");
    double most = 0;
    for (const Link& l : t.links()) {
      if (l.kind == LinkKind::kNvSwitch) most = std::max(most, l.bandwidth.gbyte_per_second());
    }
    EXPECT_DOUBLE_EQ(most, expected);
  }
}

// Device names as NVML and nccl-tests' "# Using devices" lines print them.
TEST(GpuModels, DeviceNamesNameTheirModel) {
  const std::pair<const char*, const char*> kNames[] = {
      {"NVIDIA H100 80GB HBM3", "H100-SXM"},
      {"NVIDIA H100 PCIe", "H100-PCIe"},
      {"NVIDIA H100 NVL", ""},  // two PCIe cards bridged by NVLink: not in the catalogue
      {"NVIDIA H200", "H200"},
      {"NVIDIA H20", "H20"},
      {"NVIDIA H800 80GB HBM3", "H800"},
      {"NVIDIA H800 PCIe", ""},
      {"NVIDIA A100-SXM4-80GB", "A100-SXM"},
      {"A100-SXM4-40GB", "A100-SXM"},  // nccl-tests before 2.13 printed no "NVIDIA"
      {"NVIDIA A100-PCIE-40GB", "A100-PCIe"},
      {"NVIDIA A100 80GB PCIe", "A100-PCIe"},
      {"NVIDIA A800-SXM4-80GB", "A800-SXM"},
      {"NVIDIA L40S", "L40S"},
      {"NVIDIA L4", "L4"},
      {"NVIDIA B200", "B200"},
      {"NVIDIA GB200", "GB200"},
      {"NVIDIA GB300", "GB300"},
      {"Tesla V100-SXM2-32GB", "V100-SXM2"},
      {"Tesla V100-PCIE-16GB", "V100-PCIe"},
      {"NVIDIA GeForce RTX 4090", "RTX4090"},
      {"NVIDIA GeForce RTX 2080 Ti", "RTX2080Ti"},
      {"MetaX C500", ""},
  };
  for (const auto& [name, model] : kNames) EXPECT_EQ(gpu_model_of_device_name(name), model) << name;
}

}  // namespace
}  // namespace collsim
