#include "topology/gpu_models.hpp"

namespace collsim {

namespace {

// PCIe x16 per direction (docs/theory.md §3.3 [S28]): Gen3 15.75 GB/s, Gen4 31.5 GB/s, Gen5 63 GB/s
// (128b/130b encoding on 8/16/32 GT/s lanes).
constexpr double kPcieGen3 = 15.75, kPcieGen4 = 31.5, kPcieGen5 = 63.0;
// Gen6 x16: 64 GT/s on 16 lanes, 128 GB/s per direction, less FLIT mode's 14 bytes of every 256
// (CRC and FEC) [S61].
constexpr double kPcieGen6 = 121.0;

// NVLink per port, per direction (docs/theory.md §3.1): NVLink2/3/4 run 25 GB/s per link per
// direction, NVLink5 50 GB/s. Port counts: V100 6, A100 12, H100/H200/H20 18, B200/GB200/B300/
// GB300 18 ([S25], [S25b], [S25c], [S26]); the export variants A800 and H800 8 ([S57], [S58]).
// Device memory, the datasheet's peak ([S48]): the copies and reductions a GPU runs stream at a
// measured fraction of it (simulator/cost_params.cpp).
const std::vector<GpuModel>& catalogue() {
  static const std::vector<GpuModel> kModels = {
      // NVLink2, 300 GB/s bidir [S26]; HBM2 900 GB/s
      {"V100-SXM2", 70, 6, GBps(25), GBps(kPcieGen3), GBps(900)},
      {"V100-PCIe", 70, 0, GBps(25), GBps(kPcieGen3), GBps(900)},
      // PCIe Gen3 x16 card (TU102); GDDR6 616 GB/s
      {"RTX2080Ti", 75, 0, GBps(25), GBps(kPcieGen3), GBps(616)},
      // PCIe Gen4 x16 card (AD102, Ada: compute capability 8.9), no NVLink [S54];
      // GDDR6X 1,008 GB/s
      {"RTX4090", 89, 0, GBps(25), GBps(kPcieGen4), GBps(1008)},
      // NVLink3, 600 GB/s bidir [S25]; 80 GB HBM2e 2,039 GB/s
      {"A100-SXM", 80, 12, GBps(25), GBps(kPcieGen4), GBps(2039)},
      // no NVLink unless bridged; 80 GB HBM2e 1,935 GB/s
      {"A100-PCIe", 80, 0, GBps(25), GBps(kPcieGen4), GBps(1935)},
      // A100 with 8 of its 12 NVLink3 ports, 400 GB/s bidir [S57]; 80 GB HBM2e 2,039 GB/s
      {"A800-SXM", 80, 8, GBps(25), GBps(kPcieGen4), GBps(2039)},
      // Ada PCIe Gen4 x16 cards, no NVLink [S60]: GDDR6 864 GB/s (L40S), 300 GB/s (L4)
      {"L40S", 89, 0, GBps(25), GBps(kPcieGen4), GBps(864)},
      {"L4", 89, 0, GBps(25), GBps(kPcieGen4), GBps(300)},
      // NVLink4, 900 GB/s bidir [S25b]; HBM3 3.35 TB/s
      {"H100-SXM", 90, 18, GBps(25), GBps(kPcieGen5), GBps(3350)},
      {"H100-PCIe", 90, 0, GBps(25), GBps(kPcieGen5), GBps(2000)},  // HBM2e 2 TB/s
      // H100 with 8 of its 18 NVLink4 ports, 400 GB/s bidir [S58]; HBM3 3.35 TB/s
      {"H800", 90, 8, GBps(25), GBps(kPcieGen5), GBps(3350)},
      // all 18 NVLink4 ports, 900 GB/s bidir; 96 GB HBM3 4.0 TB/s [S59]
      {"H20", 90, 18, GBps(25), GBps(kPcieGen5), GBps(4000)},
      // the same NVLink4 as H100 [S44]; HBM3e 4.8 TB/s
      {"H200", 90, 18, GBps(25), GBps(kPcieGen5), GBps(4800)},
      // NVLink5, 1.8 TB/s bidir [S25c]; HBM3e 8 TB/s
      {"B200", 100, 18, GBps(50), GBps(kPcieGen5), GBps(8000)},
      // NVLink5; Grace over C2C [S21c]; HBM3e 8 TB/s per GPU
      {"GB200", 100, 18, GBps(50), GBps(kPcieGen5), GBps(8000)},
      // Blackwell Ultra (compute capability 10.3): NVLink5 1.8 TB/s bidir, 288 GB HBM3e 8 TB/s,
      // PCIe Gen6 x16 [S61]; GB300 beside Grace, as GB200
      {"B300", 103, 18, GBps(50), GBps(kPcieGen6), GBps(8000)},
      {"GB300", 103, 18, GBps(50), GBps(kPcieGen6), GBps(8000)},
      // Not a GPU: a rank that is a host process (`collsim bench --backend mpi|cpu`). It has no
      // NVLink; its "PCIe" link stands for the memory path between processes, whose speed a
      // config gives or `collsim calibrate` fits (docs/loop.md). Architecture row: the oldest;
      // its memory rate, the architecture's.
      {"host-process", 0, 0, GBps(25), GBps(10), GBps(0)},
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

std::string gpu_model_of_device_name(std::string_view name) {
  const auto has = [&](std::string_view s) { return name.find(s) != std::string_view::npos; };
  // A whole word: "H20" in "NVIDIA H20", not in "NVIDIA H200"; "L4" not in "L40S".
  const auto word = [&](std::string_view s) {
    for (std::size_t at = name.find(s); at != std::string_view::npos; at = name.find(s, at + 1)) {
      const std::size_t end = at + s.size();
      const bool starts = at == 0 || name[at - 1] == ' ' || name[at - 1] == '-';
      const bool ends = end == name.size() || name[end] == ' ' || name[end] == '-';
      if (starts && ends) return true;
    }
    return false;
  };
  const bool pcie = has("PCIe") || has("PCIE");
  // Boards collsim does not describe: the NVL parts (PCIe cards bridged by NVLink) and the
  // export parts' PCIe cards.
  if (has(" NVL") && !has("NVLink")) return "";
  if (has("GB300")) return "GB300";
  if (has("B300")) return "B300";
  if (has("GB200")) return "GB200";
  if (has("B200")) return "B200";
  if (has("H200")) return "H200";
  if (word("H20")) return "H20";
  if (has("H800")) return pcie ? "" : "H800";
  if (has("H100")) return pcie ? "H100-PCIe" : "H100-SXM";
  if (has("A800")) return has("SXM") ? "A800-SXM" : "";
  if (has("A100")) return pcie ? "A100-PCIe" : has("SXM") ? "A100-SXM" : "";
  if (has("L40S")) return "L40S";
  if (word("L4")) return "L4";
  if (has("RTX 4090")) return "RTX4090";
  if (has("RTX 2080 Ti")) return "RTX2080Ti";
  if (has("V100")) return pcie ? "V100-PCIe" : has("SXM2") ? "V100-SXM2" : "";
  return "";
}

}  // namespace collsim
