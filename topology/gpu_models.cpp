#include "topology/gpu_models.hpp"

namespace collsim {

namespace {

// PCIe x16 per direction (docs/theory.md §3.3 [S28]): Gen3 15.75 GB/s, Gen4 31.5 GB/s, Gen5 63 GB/s
// (128b/130b encoding on 8/16/32 GT/s lanes).
constexpr double kPcieGen3 = 15.75, kPcieGen4 = 31.5, kPcieGen5 = 63.0;

// NVLink per port, per direction (docs/theory.md §3.1): NVLink2/3/4 run 25 GB/s per link per
// direction, NVLink5 50 GB/s. Port counts: V100 6, A100 12, H100/H200 18, B200/GB200 18 ([S25],
// [S25b], [S25c], [S26]).
const std::vector<GpuModel>& catalogue() {
  static const std::vector<GpuModel> kModels = {
      {"V100-SXM2", 70, 6, GBps(25), GBps(kPcieGen3)},   // NVLink2, 300 GB/s bidir [S26]
      {"V100-PCIe", 70, 0, GBps(25), GBps(kPcieGen3)},
      {"RTX2080Ti", 75, 0, GBps(25), GBps(kPcieGen3)},   // PCIe Gen3 x16 card (TU102)
      {"A100-SXM", 80, 12, GBps(25), GBps(kPcieGen4)},   // NVLink3, 600 GB/s bidir [S25]
      {"A100-PCIe", 80, 0, GBps(25), GBps(kPcieGen4)},   // no NVLink unless bridged
      {"H100-SXM", 90, 18, GBps(25), GBps(kPcieGen5)},   // NVLink4, 900 GB/s bidir [S25b]
      {"H100-PCIe", 90, 0, GBps(25), GBps(kPcieGen5)},
      {"H200", 90, 18, GBps(25), GBps(kPcieGen5)},       // same NVLink4 as H100 [S9]
      {"B200", 100, 18, GBps(50), GBps(kPcieGen5)},      // NVLink5, 1.8 TB/s bidir [S25c]
      {"GB200", 100, 18, GBps(50), GBps(kPcieGen5)},     // NVLink5; Grace over C2C [S21c]
      // Not a GPU: a rank that is a host process (`collsim bench --backend mpi|cpu`). It has no
      // NVLink; its "PCIe" link stands for the memory path between processes, whose speed a
      // config gives or `collsim calibrate` fits (docs/loop.md). Architecture row: the oldest.
      {"host-process", 0, 0, GBps(25), GBps(10)},
  };
  return kModels;
}

}  // namespace

const GpuModel* find_gpu_model(std::string_view name) {
  for (const auto& m : catalogue()) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

std::vector<std::string> gpu_model_names() {
  std::vector<std::string> names;
  for (const auto& m : catalogue()) names.push_back(m.name);
  return names;
}

}  // namespace collsim
