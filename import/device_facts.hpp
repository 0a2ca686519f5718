// Facts about devices that the importers share: PCIe rates by link speed, the NIC kind a set of
// NIC names suggests, NCCL's CPU-to-CPU bandwidths and the GPU model of a PCI device id.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collsim {

// GB/s per direction of an x16 link at NCCL's link_speed ("16.0 GT/s PCIe", "32.0 GT/s"):
// 2.5 and 5 GT/s with 8b/10b, 8/16/32 GT/s with 128b/130b (docs/theory.md §3.3 [S28]): 4, 8,
// 15.75, 31.5, 63. ImportError naming `where` for anything else.
double pcie_x16_GBps(std::string_view link_speed, std::string_view where);

// ib, roce, ethernet or efa: `chosen` when given (checked), else from the names (ibp*/ib* ib,
// roce* roce, rdmap* efa, eth*/en*/bond* ethernet; mlx5_* assumed ib, with a line added to
// `assumed`).
std::string nic_kind_of(const std::vector<std::string>& names, const std::string& chosen,
                        std::vector<std::string>& assumed);

struct ImportedNode;
// For EFA NICs (nic_kind "efa"): whether they deliver 128-byte blocks in order, which no dump
// says, taken from the GPU generation of the instance (pre-Hopper GPUs: the first EFA
// generation, p3dn/p4d/p4de, out of order; Hopper and later: p5 on, in order), with a line in
// `assumed`. Nothing for other kinds.
void infer_efa_delivery(ImportedNode& n);

// NCCL's socket-to-socket bandwidth in GB/s for a CPU vendor ("GenuineIntel", "AuthenticAMD")
// and model number as its dump writes them, with a sentence saying which constant; nullopt when
// unknown.
std::optional<double> smp_bandwidth(const std::string& vendor, const std::string& model,
                                    std::string& what);

// The collsim GPU model (topology/gpu_models) of a PCI device id ("0x2330"), else of the
// architecture (sm 90 and NVLink: H100-SXM); "" when neither is known.
std::string gpu_model_of(const std::string& pci_device, int sm, bool has_nvlink);

}  // namespace collsim
