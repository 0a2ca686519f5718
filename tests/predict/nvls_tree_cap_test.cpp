// NVLSTree's split CTA (CostParams::nvls_tree_channel_bandwidth): a channel of `nvls_tree`
// moves at most that much of its part of the vector a second, so at large sizes the algorithm
// bandwidth is the channels times the cap; NVLS and the ring keep their own caps.
#include <gtest/gtest.h>

#include <algorithm>

#include "algorithms/generators/registry.hpp"
#include "calibrate/nccl_tests_reader.hpp"
#include "calibrate/row_model.hpp"
#include "predict/predict.hpp"
#include "topology/loader.hpp"

namespace collsim {
namespace {

Request allreduce(const Topology& topo, const std::string& algo, std::uint64_t bytes,
                  int channels) {
  Request r;
  r.collective = Collective::kAllReduce;
  r.algorithm = algo;
  r.protocol = Protocol::kSimple;
  r.channels = channels;
  r.comm = Communicator::from_topology(topo);
  r.count = count_for_bytes(r.collective, Bytes(bytes), r.dtype, r.comm.size());
  return r;
}

double algbw(const Request& r, const std::optional<Prediction>& p) {
  return static_cast<double>(r.count) * 4 / (p->time.us() * 1e-6);
}

TEST(NvlsTreeCap, AChannelMovesAtMostItsCap) {
  const Topology topo = load_topology("h100-2node-ib");
  const CostParams costs = default_cost_params(topo);
  // NCCL's perChMaxNVLSTreeBw, 57.7 GB/s a search channel on 2 Hopper nodes, as a runtime
  // channel's part of the vector (57.7 / 2 x 16 / 30), over the share of it a simulated channel
  // keeps after its per-piece costs, its step overhead first (0.773, cost_params.cpp).
  EXPECT_NEAR(costs.nvls_tree_channel_bandwidth.bytes_per_second(),
              57.7e9 / 2 * 16 / 30 / 0.773, 1e6);
  EXPECT_EQ(costs.channel_cap(Protocol::kSimple, ChannelKernel::kNvlsTree),
            costs.nvls_tree_channel_bandwidth.bytes_per_second());
  CostParams uncapped = costs;
  uncapped.nvls_tree_channel_bandwidth = Bandwidth{};
  const Request r = allreduce(topo, "nvls_tree", std::uint64_t{4} << 30, 16);
  const auto capped = predict(r, topo, costs, Model::kMaxMin);
  const auto free = predict(r, topo, uncapped, Model::kMaxMin);
  ASSERT_TRUE(capped && free);
  const double cap_bw = 16 * costs.nvls_tree_channel_bandwidth.bytes_per_second();
  // At most the channels' cap, and within 1 % of NCCL's own figure for it at 4 GiB: 8 search
  // channels x 57.7 GB/s x 16 / 30 = 246.2 GB/s algbw.
  EXPECT_LE(algbw(r, capped), cap_bw);
  EXPECT_NEAR(algbw(r, capped), 8 * 57.7e9 * 16 / 30, 0.01 * 8 * 57.7e9 * 16 / 30);
  // Without the cap the NVSwitch's NVLS rate bounds it, well above.
  EXPECT_GT(algbw(r, free), 1.05 * algbw(r, capped));
}

TEST(NvlsTreeCap, BeyondTwoNodesAChannelKeepsNcclsShare) {
  // perChMaxNVLSTreeBw: 45.5 GB/s beyond two Hopper nodes against 57.7 on two (80.0 / 96.0 on
  // Blackwell): an interior node's CTA also combines two children's sums.
  const Topology two = load_topology("h100-2node-ib");
  const CostParams costs = default_cost_params(two);
  EXPECT_DOUBLE_EQ(costs.nvls_tree_deep_share, 45.5 / 57.7);
  EXPECT_DOUBLE_EQ(default_cost_params(100).nvls_tree_deep_share, 80.0 / 96.0);
  EXPECT_DOUBLE_EQ(costs.channel_cap(Protocol::kSimple, ChannelKernel::kNvlsTreeDeep),
                   costs.nvls_tree_channel_bandwidth.bytes_per_second() * 45.5 / 57.7);
  LoadOptions at4;
  at4.nodes = 4;
  const Topology four = load_topology("h100-2node-ib", at4);
  const Request r2 = allreduce(two, "nvls_tree", 64 << 20, 16);
  const Request r4 = allreduce(four, "nvls_tree", 64 << 20, 16);
  EXPECT_EQ(channel_kernel(generate(r2).info()), ChannelKernel::kNvlsTree);
  EXPECT_EQ(channel_kernel(generate(r4).info()), ChannelKernel::kNvlsTreeDeep);
  // At 4 GiB on 4 nodes the 16 channels' reduced cap bounds the algorithm bandwidth.
  const Request big = allreduce(four, "nvls_tree", std::uint64_t{4} << 30, 16);
  const auto p = predict(big, four, costs, Model::kMaxMin);
  ASSERT_TRUE(p);
  EXPECT_LE(algbw(big, p),
            16 * costs.channel_cap(Protocol::kSimple, ChannelKernel::kNvlsTreeDeep));
}

TEST(NvlsTreeCap, OtherAlgorithmsKeepTheirOwnCap) {
  const Topology topo = load_topology("h100-2node-ib");
  const CostParams costs = default_cost_params(topo);
  CostParams uncapped = costs;
  uncapped.nvls_tree_channel_bandwidth = Bandwidth{};
  for (const char* algo : {"ring", "dbtree"}) {
    const Request r = allreduce(topo, algo, 64 << 20, 16);
    EXPECT_EQ(predict(r, topo, costs, Model::kMaxMin)->time,
              predict(r, topo, uncapped, Model::kMaxMin)->time)
        << algo;
  }
  const Topology one = load_topology("dgx-h100");
  const Request nvls = allreduce(one, "nvls", 64 << 20, 16);
  EXPECT_EQ(predict(nvls, one, default_cost_params(one), Model::kMaxMin)->time,
            predict(nvls, one, uncapped, Model::kMaxMin)->time);
}

// A table run with NCCL_MIN_NCHANNELS=32 (the H200 Spectrum-X one, NCCL 2.30.4): it raises the
// communicator's ring and tree channels to 32, which the largest tree rows fill, while a 1 KiB
// row still launches one (the minimum is not a floor for topoGetAlgoInfo, nor for the division
// among channels). The NVLSTree rows run on NCCL's NVLS channels (16), which only NCCL_MIN_CTAS
// raises (transport/nvls.cc).
TEST(NvlsTreeCap, MinNChannelsLeavesNvlsChannelsAlone) {
  const Topology topo =
      load_topology(COLLSIM_SOURCE_DIR "/tests/data/configs/held-out/h200-spectrumx.yaml");
  const FilePlan plan = plan_measurements(
      topo, read_measurements(COLLSIM_SOURCE_DIR
                              "/tests/data/nccl-tests/h200x16_2node_allreduce_dell-xe9680-"
                              "spectrumx-roce-8x400G_openshift-spx-doc.txt"));
  int nvls_rows = 0, fewest = 1 << 20, most = 0;
  for (const RowCase& c : plan.cases) {
    if (c.request.algorithm == "nvls_tree") {
      ++nvls_rows;
      EXPECT_EQ(c.request.channels, 16) << "line " << c.line;
    } else {
      fewest = std::min(fewest, c.request.channels);
      most = std::max(most, c.request.channels);
    }
  }
  EXPECT_GT(nvls_rows, 0);
  EXPECT_EQ(fewest, 1);
  EXPECT_EQ(most, 32);
}

}  // namespace
}  // namespace collsim
