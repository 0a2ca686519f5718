// Facts about devices that every importer shares: PCIe rates by link speed, and the NIC kind a
// set of NIC names suggests.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace collsim {

// GB/s per direction of an x16 link at NCCL's link_speed ("16.0 GT/s PCIe", "32.0 GT/s"):
// 2.5 and 5 GT/s with 8b/10b, 8/16/32 GT/s with 128b/130b (docs/theory.md §3.3 [S28]): 4, 8,
// 15.75, 31.5, 63. ImportError naming `where` for anything else.
double pcie_x16_GBps(std::string_view link_speed, std::string_view where);

// ib, roce or ethernet: `chosen` when given (checked), else from the names (ibp*/ib* ib, roce*
// roce, eth*/en*/bond* ethernet; mlx5_* assumed ib, with a line added to `assumed`).
std::string nic_kind_of(const std::vector<std::string>& names, const std::string& chosen,
                        std::vector<std::string>& assumed);

}  // namespace collsim
