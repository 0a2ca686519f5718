// Private to algorithms/: NCCL's tuning constants for the versions collsim models.
//
// Values from docs/nccl-model.md §1.4, §1.5 and §1.8, which restate src/graph/tuning.cc at
// NVIDIA/nccl tags v2.22.3-1 (178b6b75) and v2.30.7-1 (73cf1122).
// Indices: algorithm as NcclAlgo, protocol as Protocol (LL, LL128, Simple), architecture as
// kVolta..kBlackwell, node class N1/N2/N4 (1, 2, >= 3 nodes).
#pragma once

#include <array>

#include "algorithms/models/nccl_model.hpp"

namespace collsim::detail {

enum Arch { kVolta, kAmpere, kHopper, kBlackwell, kArchCount };
enum HwPath { kHwNvlink, kHwPci, kHwNet };

using PerProto = std::array<double, 3>;         // LL, LL128, Simple
using PerAlgo = std::array<PerProto, kNcclAlgoCount>;
using PerNodes = std::array<double, 3>;         // N1, N2, N4
using PerArch = std::array<PerNodes, kArchCount>;

struct NcclConstants {
  PerAlgo base_lat;
  std::array<PerAlgo, 3> hw_lat;  // by HwPath
  PerArch ll_max_bw;              // rows: arch for 1 node; row 0 Intel/other, 1 AMD multi-node
  PerArch per_ch_max_ring_ll128_bw;
  PerArch per_ch_max_tree_ll128_bw;
  PerArch per_ch_max_tree_bw;
  PerArch per_ch_max_nvls_tree_bw;
  std::array<double, kArchCount> nvls_efficiency;
};

const NcclConstants& nccl_constants(NcclVersion v);
// The set a release tuned with, as that release had it: 2.30.7's (k2_30) walked back through the
// releases from 2.27 on that changed its Blackwell rows and NVLSTree's constants
// (docs/nccl-model.md §1.8); the other two sets as they are.
NcclConstants nccl_constants(NcclVersion v, NcclRelease r);

// treeCorrectionFactor[proto][log2(nBytes >> 6)], unchanged since <= v2.12 (24th entry v2.29.2).
inline constexpr std::array<std::array<double, 24>, 3> kTreeCorrection{{
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0,
     1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0,
     1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9,
     .9},
}};

}  // namespace collsim::detail
