#include "algorithms/models/nccl_constants.hpp"

namespace collsim::detail {

namespace {

// Algorithm order: Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT.
const NcclConstants kHead = {
    // baseLat (docs/nccl-model.md §1.5)
    {{{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0},
      {8.0, 8.0, 8.0}}},
    // hwLat NVLINK, PCI, NET (§1.5)
    {{{{{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 25}, {0, 0, 25},
        {0, 0, 4.0}}},
      {{{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0},
        {0, 0, 4.0}}},
      {{{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 20.9},
        {0, 0, 14}}}}},
    // llMaxBws, perChMaxRingLL128Bws, perChMaxTreeLL128Bws, perChMaxTreeBws,
    // perChMaxNVLSTreeBws (§1.4)
    {{{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}}},
    {{{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}}},
    {{{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}}},
    {{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}}},
    {{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}}},
    // nvlsEfficiency
    {0.0, 0.0, 0.85, 0.74},
};

// v2.22.3: Tree Simple base 0 and hwLat 28 everywhere; PAT absent; NVLSTree NET 14;
// Blackwell rows did not exist yet (the Hopper row stands in; never selected for sm < 100).
const NcclConstants k222 = {
    {{{6.8, 14.0, 0}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}}},
    {{{{{0.6, 1.25, 28}, {0.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 25}, {0, 0, 25},
        {0, 0, 0}}},
      {{{1.0, 1.9, 28}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0},
        {0, 0, 0}}},
      {{{5.0, 8.5, 28}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 14},
        {0, 0, 0}}}}},
    {{{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {141.0, 45.0, 35.0}}},
    {{{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}, {36.7, 36.7, 36.7}}},
    {{{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}, {36.7, 36.7, 29.0}}},
    {{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {38.7, 41.4, 36.0}}},
    {{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}}},
    {0.0, 0.0, 0.0, 0.0},
};

// v2.26.2 (2.23 to 2.26): 2.22.3's, but Tree Simple base 8.4 and hwLat 4.0 / 4.0 / 14 (2.23),
// PAT's base 8 and network 14 (2.23), and Blackwell rows twice Hopper's (2.25).
const NcclConstants k226 = {
    // baseLat
    {{{6.8, 14.0, 8.4},
      {6.6, 14.0, 8.4},
      {0, 0, 0},
      {0, 0, 0},
      {0, 0, 0},
      {0, 0, 0},
      {8.0, 8.0, 8.0}}},
    // hwLat NVLINK, PCI, NET
    {{{{{0.6, 1.25, 4.0},
        {0.6, 1.9, 3.4},
        {0, 0, 3.7},
        {0, 0, 2.8},
        {0, 0, 25},
        {0, 0, 25},
        {0, 0, 4.0}}},
      {{{1.0, 1.9, 4.0},
        {1.0, 2.5, 5.7},
        {0, 0, 3.7},
        {0, 0, 2.8},
        {0, 0, 0},
        {0, 0, 0},
        {0, 0, 4.0}}},
      {{{5.0, 8.5, 14},
        {2.7, 4.0, 14.0},
        {0, 0, 31},
        {0, 0, 30},
        {0, 0, 18},
        {0, 0, 14},
        {0, 0, 14}}}}},
    // llMaxBws, perChMaxRingLL128Bws, perChMaxTreeLL128Bws, perChMaxTreeBws,
    // perChMaxNVLSTreeBws (none before 2.28.3)
    {{{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}}},
    {{{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}, {73.4, 73.4, 73.4}}},
    {{{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}, {73.4, 73.4, 58.0}}},
    {{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {77.4, 82.8, 72.0}}},
    {{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}}},
    // nvlsEfficiency (none before 2.28.3)
    {0.0, 0.0, 0.0, 0.0},
};

}  // namespace

const NcclConstants& nccl_constants(NcclVersion v) {
  return v == NcclVersion::k2_22 ? k222 : v == NcclVersion::k2_26 ? k226 : kHead;
}

// Each step back undoes one release's change to src/graph/tuning.cc, read at that release's tag
// (NVIDIA/nccl v2.27.7-1, v2.28.3-1, v2.28.7-1, v2.28.9-1, v2.29.2-1, v2.29.7-1, v2.30.3-1).
// The first published release of 2.28, 2.29 and 2.30 is 2.28.3, 2.29.2 and 2.30.3, so a release
// named by its minor alone ("2.29") takes that first release's constants.
NcclConstants nccl_constants(NcclVersion v, NcclRelease r) {
  NcclConstants k = nccl_constants(v);
  if (v != NcclVersion::k2_30) return k;
  PerNodes& ring_ll128 = k.per_ch_max_ring_ll128_bw[kBlackwell];
  PerNodes& nvls_tree = k.per_ch_max_nvls_tree_bw[kBlackwell];
  double& nvls_tree_net = k.hw_lat[kHwNet][static_cast<int>(NcclAlgo::kNvlsTree)][2];
  if (!r.at_least(30)) nvls_tree[2] = 43.8;                 // 2.30.3: 80.0 beyond two nodes
  if (!r.at_least(29, 7)) ring_ll128 = {34.5, 34.6, 34.5};  // 2.29.7: 40.0 everywhere
  if (!r.at_least(29)) ring_ll128 = {73.4, 34.6, 73.4};     // 2.29.2: 34.5 on one node and N4
  if (!r.at_least(28, 9)) {
    nvls_tree_net = 14.0;  // 2.28.9: 20.9
    nvls_tree[2] = 43.1;   // 2.28.9: 43.8
  }
  if (!r.at_least(28, 7)) ring_ll128[1] = 73.4;  // 2.28.7: 34.6 on two nodes
  if (!r.at_least(28)) {
    // 2.28.3 brought Blackwell's own tree rows, perChMaxNVLSTreeBws and nvlsEfficiency (with
    // the NVLS formula that reads them, nccl_model.cpp); 2.27's Blackwell rows are twice
    // Hopper's, as 2.25's were.
    k.per_ch_max_tree_ll128_bw[kBlackwell] = k226.per_ch_max_tree_ll128_bw[kBlackwell];
    k.per_ch_max_tree_bw[kBlackwell] = k226.per_ch_max_tree_bw[kBlackwell];
    k.per_ch_max_nvls_tree_bw = k226.per_ch_max_nvls_tree_bw;
    k.nvls_efficiency = k226.nvls_efficiency;
  }
  return k;
}

}  // namespace collsim::detail
