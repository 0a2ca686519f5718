// NCCL's point-to-point kernel (ScheduleInfo::p2p): a `direct` SendRecv / AllToAll / Gather /
// Scatter moves at most CostParams::p2p_channel_bandwidth a channel, under every collsim model;
// collectives and collsim's own direct AllGather do not.
#include <gtest/gtest.h>

#include "predict/predict.hpp"
#include "topology/loader.hpp"

namespace collsim {
namespace {

Request direct(const Topology& topo, Collective c, std::uint64_t bytes, int channels) {
  Request r;
  r.collective = c;
  r.algorithm = "direct";
  r.protocol = Protocol::kSimple;
  r.channels = channels;
  r.comm = Communicator::from_topology(topo);
  r.count = count_for_bytes(c, Bytes(bytes), r.dtype, r.comm.size());
  return r;
}

double seconds(const std::optional<Prediction>& p) { return p->time.us() * 1e-6; }

TEST(P2pChannels, ASendRecvChannelMovesAtTheP2pRate) {
  const Topology topo = load_topology("dgx-h100");
  const CostParams costs = default_cost_params(topo);
  // 0.733 of Hopper's 30 GB/s Simple cap (cost_params.cpp).
  EXPECT_NEAR(costs.p2p_channel_bandwidth.bytes_per_second(), 22.0e9, 1e6);
  EXPECT_EQ(costs.channel_cap(Protocol::kSimple, ChannelKernel::kP2p),
            costs.p2p_channel_bandwidth.bytes_per_second());
  EXPECT_EQ(costs.channel_cap(Protocol::kSimple, ChannelKernel::kCollective), 30e9);
  // LL's own cap is lower still, and stays.
  EXPECT_EQ(costs.channel_cap(Protocol::kLL, ChannelKernel::kP2p),
            costs.protocol(Protocol::kLL).channel_bandwidth.bytes_per_second());
  CostParams uncapped = costs;
  uncapped.p2p_channel_bandwidth = Bandwidth{};
  const std::uint64_t bytes = 64 << 20;
  for (Model m : {Model::kMaxMin, Model::kContentionFree, Model::kClosedForm}) {
    const auto capped = predict(direct(topo, Collective::kSendRecv, bytes, 4), topo, costs, m);
    const auto free = predict(direct(topo, Collective::kSendRecv, bytes, 4), topo, uncapped, m);
    ASSERT_TRUE(capped && free) << to_string(m);
    // 16 MiB a channel at 22.0 GB/s at least; without the p2p cap, Simple's 30 GB/s.
    EXPECT_GE(seconds(capped), 16.0 * (1 << 20) / 22.0e9) << to_string(m);
    EXPECT_LT(seconds(free), 16.0 * (1 << 20) / 22.0e9) << to_string(m);
  }
}

// NCCL's p2p kernel runs a channel's send and its receive on their own warps at once, so a send
// never waits for the receive beside it: with enough channels a large SendRecv is bound by the
// GPU's NVLink. 1 GiB on 8x H100 runs 32 channels (nccl_p2p.hpp), 32 x 22 GB/s of channels for
// 450 GB/s x 20.6/25 = 370.8 GB/s of NVLink; the launch and each 512 KiB piece's step overhead
// (1.5 us) leave it 3.7 % over the link's time. When each piece's send waited for the receive,
// whose piece arrives a hop's latency (3.4 us) after it is sent, it was 8.7 % over
// (h100x8_1node_sendrecv_xxrjun-cluster01.txt measures 367.7 GB/s from 1 to 16 GiB, within 1 %
// of the link).
TEST(P2pChannels, ASendNeverWaitsForTheReceiveBesideIt) {
  const Topology topo = load_topology("dgx-h100");
  const CostParams costs = default_cost_params(topo);
  const std::uint64_t bytes = std::uint64_t{1} << 30;
  const auto p =
      predict(direct(topo, Collective::kSendRecv, bytes, 32), topo, costs, Model::kMaxMin);
  ASSERT_TRUE(p);
  const double link_bound = static_cast<double>(bytes) / (450e9 * 20.6 / 25.0);
  EXPECT_GE(seconds(p), link_bound);
  EXPECT_LT(seconds(p), 1.05 * link_bound);
}

TEST(P2pChannels, CollectivesKeepTheirOwnCap) {
  const Topology topo = load_topology("dgx-h100");
  const CostParams costs = default_cost_params(topo);
  CostParams uncapped = costs;
  uncapped.p2p_channel_bandwidth = Bandwidth{};
  const Request ag = direct(topo, Collective::kAllGather, 64 << 20, 1);
  EXPECT_EQ(predict(ag, topo, costs, Model::kMaxMin)->time,
            predict(ag, topo, uncapped, Model::kMaxMin)->time);
}

}  // namespace
}  // namespace collsim
