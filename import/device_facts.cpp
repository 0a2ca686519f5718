#include "import/device_facts.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <map>

#include "import/imported_node.hpp"
#include "import/xml.hpp"
#include "topology/gpu_models.hpp"

namespace collsim {

double pcie_x16_GBps(std::string_view link_speed, std::string_view where) {
  const std::string s(link_speed);
  char* end = nullptr;
  const double gts = std::strtod(s.c_str(), &end);
  const struct {
    double gts;
    double x16;
  } kRates[] = {{2.5, 4.0}, {5.0, 8.0}, {8.0, 15.75}, {16.0, 31.5}, {32.0, 63.0}};
  for (const auto& r : kRates) {
    if (end != s.c_str() && gts == r.gts) return r.x16;
  }
  throw ImportError(
      fmt::format("{}: link_speed: expected a PCIe rate such as \"32.0 GT/s PCIe\" "
                  "(2.5, 5, 8, 16 or 32 GT/s), got \"{}\"",
                  where, link_speed));
}

std::string nic_kind_of(const std::vector<std::string>& names, const std::string& chosen,
                        std::vector<std::string>& assumed) {
  if (!chosen.empty()) {
    if (chosen != "ib" && chosen != "roce" && chosen != "ethernet" && chosen != "efa") {
      throw ImportError(
          fmt::format("--nic-kind: expected ib, roce, ethernet or efa, got \"{}\"", chosen));
    }
    return chosen;
  }
  auto all = [&](auto pred) {
    for (const std::string& n : names) {
      if (!pred(n)) return false;
    }
    return true;
  };
  if (all([](const std::string& n) { return n.starts_with("roce"); })) return "roce";
  // EFA devices are named rdmapNsM by their PCI location (rdma-core's efa driver).
  if (all([](const std::string& n) { return n.starts_with("rdmap"); })) return "efa";
  if (all([](const std::string& n) {
        return n.starts_with("eth") || n.starts_with("en") || n.starts_with("bond");
      })) {
    return "ethernet";
  }
  if (all([](const std::string& n) { return n.starts_with("ib"); })) return "ib";
  assumed.push_back(fmt::format("NICs {} taken as InfiniBand (--nic-kind roce|ethernet if not)",
                                fmt::join(names, ", ")));
  return "ib";
}

void infer_efa_delivery(ImportedNode& n) {
  if (n.nic_kind != "efa") return;
  const GpuModel* m = find_gpu_model(n.gpu_model);
  const int sm = m != nullptr ? m->sm : 0;
  n.nic_in_order = sm >= 90;
  n.assumed.push_back(fmt::format(
      "EFA {} deliver 128-byte blocks in order, as on instances of {} GPUs (in_order; "
      "docs/config.md, Transports)",
      *n.nic_in_order ? "does" : "does not", n.gpu_model));
}

// NCCL's CPU-to-CPU bandwidths (src/graph/topo.h [S7]; docs/nccl-model.md): Intel by model
// number (Broadwell 6, Skylake 0x55 10, Sapphire Rapids 0x8F 22, Emerald Rapids 0xCF 40 GB/s),
// AMD 16 GB/s.
std::optional<double> smp_bandwidth(const std::string& vendor, const std::string& model,
                                    std::string& what) {
  if (vendor == "AuthenticAMD" || vendor == "AMD") {
    what = "AMD CPUs: NCCL's AMD_BW 16 GB/s between sockets";
    return 16.0;
  }
  if (vendor != "GenuineIntel" || model.empty()) return std::nullopt;
  const int m = std::atoi(model.c_str());
  const struct {
    int model;
    double bw;
    const char* name;
  } kIntel[] = {{0xCF, 40, "Emerald Rapids"}, {0x8F, 22, "Sapphire Rapids"}, {0x55, 10, "Skylake"}};
  for (const auto& k : kIntel) {
    if (m >= k.model) {
      what = fmt::format("Intel model {}: NCCL's {} QPI bandwidth {:g} GB/s", m, k.name, k.bw);
      return k.bw;
    }
  }
  what = fmt::format("Intel model {}: NCCL's Broadwell QPI bandwidth 6 GB/s", m);
  return 6.0;
}

// The PCI device ids of the SXM/PCIe boards collsim models (NVIDIA's PCI id list; H800 and later
// [S62]), then the architecture when the id is not known.
std::string gpu_model_of(const std::string& pci_device, int sm, bool has_nvlink) {
  static const std::map<std::string, std::string> kDevice = {
      {"0x1db1", "V100-SXM2"}, {"0x1db5", "V100-SXM2"}, {"0x1db4", "V100-PCIe"},
      {"0x1e07", "RTX2080Ti"}, {"0x20b0", "A100-SXM"},  {"0x20b2", "A100-SXM"},
      {"0x20f1", "A100-PCIe"}, {"0x20b5", "A100-PCIe"}, {"0x2330", "H100-SXM"},
      {"0x2331", "H100-PCIe"}, {"0x2335", "H200"},      {"0x2901", "B200"},
      {"0x2324", "H800"},      {"0x2329", "H20"},       {"0x26b9", "L40S"},
      {"0x27b8", "L4"},        {"0x2941", "GB200"},     {"0x31c2", "GB300"},
      {"0x31c3", "GB300"}};
  if (auto it = kDevice.find(pci_device); it != kDevice.end()) return it->second;
  switch (sm) {
    case 70:
      return has_nvlink ? "V100-SXM2" : "V100-PCIe";
    case 75:
      return "RTX2080Ti";
    case 80:
      return has_nvlink ? "A100-SXM" : "A100-PCIe";
    case 90:
      return has_nvlink ? "H100-SXM" : "H100-PCIe";
    case 100:
      return "B200";
    case 103:
      return "B300";
    default:
      return "";
  }
}

}  // namespace collsim
