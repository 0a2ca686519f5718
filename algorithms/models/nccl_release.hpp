// Which NCCL release a prediction is for, as its banner prints it ("NCCL version 2.26.2"): how
// NCCL divides a collective among its channels changed with the release (nccl_channels.hpp), and
// so did the constants of its tuning model (NcclVersion, nccl_model.hpp).
//
//   NcclRelease v = parse_nccl_release("2.26.2+cuda12.8");   // {26, 2}
//   if (v.at_least(26)) ...                                   // 2.26.0 or newer
//   to_string(v);                                             // "2.26.2"
#pragma once

#include <algorithm>
#include <string>
#include <string_view>

namespace collsim {

struct NcclRelease {
  int minor = 30;  // NCCL 2.minor.patch (every release collsim models is 2.x)
  int patch = 7;   // -1: not given ("2.26")

  // A release named without its patch ("2.26") is that minor's first: at least 2.26, not 2.26.2.
  bool at_least(int m, int p = 0) const {
    return minor > m || (minor == m && std::max(patch, 0) >= p);
  }
  friend bool operator==(const NcclRelease&, const NcclRelease&) = default;
};

// NCCL's MAXCHANNELS (src/include/device.h): the most channels a communicator runs, 32 until
// 2.24 and 64 from 2.25; its ring search finds at most half of them (init.cc, ringGraph->
// maxChannels = MAXCHANNELS/2).
inline int nccl_max_channels(NcclRelease v) { return v.at_least(25) ? 64 : 32; }

// NCCL's rating of a PCIe link, width x GT/s / 80 (`src/graph/topo.cc`; Gen5 x16: 48 GB/s),
// from the 128b/130b payload rate our links carry (63 GB/s): 80/105 of it in every generation.
inline double nccl_pcie_gbps(double payload_gbps) { return payload_gbps * 80.0 / 105.0; }

// The newest release collsim models (the constants of docs/nccl-model.md §1.4, HEAD = 2.30.7).
inline constexpr NcclRelease kNewestNccl{30, 7};

// "2.26", "2.26.2", "2.26.2+cuda12.8", "2.26.2-1" or "head" (the newest). RequestError for
// anything else, and for a minor version after the newest (collsim does not know what it
// changed).
NcclRelease parse_nccl_release(std::string_view text);
std::string to_string(NcclRelease v);  // "2.26.2", or "2.26" without a patch

}  // namespace collsim
