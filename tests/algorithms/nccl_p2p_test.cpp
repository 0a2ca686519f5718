// NCCL's point-to-point channel rule (algorithms/models/nccl_p2p.hpp), worked by hand from
// src/graph/paths.cc and src/enqueue.cc, and checked against what the published tables show.
#include "algorithms/models/nccl_p2p.hpp"

#include <gtest/gtest.h>

#include "algorithms/ir/communicator.hpp"
#include "algorithms/models/nccl_channels.hpp"
#include "algorithms/models/nccl_release.hpp"
#include "topology/loader.hpp"

namespace collsim {
namespace {

constexpr std::uint64_t kMiB = 1 << 20;

// 8 H100 on NVSwitch: 24 channels -> 32 p2p channels; 18 NVLinks a pair -> 36 per peer, at most
// 32. One send starts on 32 halved while x 8 ranks > 32: 4, and doubles while its parts exceed
// 16 MiB. nccl-tests' sendrecv on 8 H100 (h100x8_1node_sendrecv_xxrjun-cluster01.txt) moves
// 79.5 and 81.8 GB/s at 32 and 64 MiB, 162.5 at 128 MiB, 299.5 at 256 MiB: 4, 4, 8, 16 channels.
TEST(NcclP2p, SendRecvOnEightH100sDoublesItsChannelsWithTheSize) {
  const Topology topo = load_topology("dgx-h100");
  const Communicator comm = Communicator::from_topology(topo);
  const NcclP2p p2p = nccl_p2p_shape(topo, comm, 24);
  EXPECT_EQ(p2p.channels, 32);
  EXPECT_EQ(p2p.per_peer, 32);
  auto ch = [&](std::uint64_t b) {
    return nccl_p2p_launched_channels(Collective::kSendRecv, p2p, comm, b);
  };
  EXPECT_EQ(ch(32 * kMiB), 4);
  EXPECT_EQ(ch(64 * kMiB), 4);
  EXPECT_EQ(ch(128 * kMiB), 8);
  EXPECT_EQ(ch(256 * kMiB), 16);
  EXPECT_EQ(ch(512 * kMiB), 32);
  EXPECT_EQ(ch(16384 * kMiB), 32);
  // Parts of at least 64 KiB: 128 KiB fills two channels, 8 B one.
  EXPECT_EQ(ch(128 << 10), 2);
  EXPECT_EQ(ch(8), 1);
}

// AllToAll: every peer gets its 4 channels at once, and 8 peers fill all 32.
TEST(NcclP2p, AllToAllKeepsEveryP2pChannelBusy) {
  const Topology topo = load_topology("dgx-h100");
  const Communicator comm = Communicator::from_topology(topo);
  const NcclP2p p2p = nccl_p2p_shape(topo, comm, 24);
  EXPECT_EQ(nccl_p2p_launched_channels(Collective::kAllToAll, p2p, comm, 1024 * kMiB), 32);
  // 8 x 64 KiB: one part per peer, 8 channels.
  EXPECT_EQ(nccl_p2p_launched_channels(Collective::kAllToAll, p2p, comm, 512 << 10), 8);
}

// Across nodes every rank has network peers and the per-peer count is the least over all peers.
// What a network peer gets changed (src/graph/paths.cc ncclTopoGetNchannels and
// ncclTopoComputeP2pChannels): 2 until 2.20 (NCCL_NCHANNELS_PER_NET_PEER); from 2.21 2, halved
// while 2 x the ranks pass 4 x the p2p channels, or the GPU's local NICs if more; from 2.29 one
// per 14 GB/s of its NICs (a 400 Gb/s NIC, 50 GB/s: 4), halved until every peer fits one round
// of 8-peer batches.
TEST(NcclP2p, NetworkPeersGetWhatTheReleaseGives) {
  const Topology topo = load_topology("h100-2node-ib");
  const Communicator comm = Communicator::from_topology(topo);
  const auto per_peer = [&](const Topology& t, const Communicator& c, const char* release) {
    return nccl_p2p_shape(t, c, 32, parse_nccl_release(release)).per_peer;
  };
  EXPECT_EQ(nccl_p2p_shape(topo, comm, 32, parse_nccl_release("2.20.3")).channels, 32);
  EXPECT_EQ(per_peer(topo, comm, "2.20.3"), 2);
  EXPECT_EQ(per_peer(topo, comm, "2.22.3"), 2);
  EXPECT_EQ(per_peer(topo, comm, "2.30.7"), 4);
  const NcclP2p p2p = nccl_p2p_shape(topo, comm, 32, parse_nccl_release("2.30.7"));
  EXPECT_EQ(nccl_p2p_launched_channels(Collective::kSendRecv, p2p, comm, 1024 * kMiB), 4);
  // 128 ranks on 32 p2p channels: 2.22 halves to 1 (2 x 128 > 4 x 32), 2.30 to 2 (16 batches).
  const Topology big = load_topology("h100-16node-ib", {.nodes = 16});
  const Communicator many = Communicator::from_topology(big);
  EXPECT_EQ(per_peer(big, many, "2.20.3"), 2);
  EXPECT_EQ(per_peer(big, many, "2.22.3"), 1);
  EXPECT_EQ(per_peer(big, many, "2.30.7"), 2);
  // 16 x 100 Gb/s for 8 A100s: each GPU takes its two NICs (2 x 12.5 GB/s reach its Gen4 x16
  // path's 24 GB/s), 25 GB/s, so 2 from 2.29 where a 400 Gb/s NIC gives 4.
  const Topology roce = load_topology("a100-2node-roce");
  EXPECT_EQ(per_peer(roce, Communicator::from_topology(roce), "2.30.7"), 2);
}

// A multi-node NVLink domain (GB200 NVL72's trays) has NVLink peers across its trays: 18 NVLink5
// ports a pair, 36 channels, at most the 32 p2p channels. (Its 18 trays are one node to NCCL.)
TEST(NcclP2p, ANvlinkDomainAcrossNodesKeepsNvlinkPeers) {
  const Topology topo = load_topology("gb200-nvl72");
  ASSERT_GT(topo.node_count(), 1);
  const Communicator comm = Communicator::from_topology(topo);
  EXPECT_EQ(nccl_p2p_shape(topo, comm, 32).per_peer, 32);
}

// A PCIe peer gets 2 channels (no NVLink between the pair).
TEST(NcclP2p, PciePeersGetTwoChannels) {
  const Topology topo = load_topology("pcie-2gpu");
  const Communicator comm = Communicator::from_topology(topo);
  EXPECT_EQ(nccl_p2p_shape(topo, comm, 2).per_peer, 2);
}

// Only `direct` p2p collectives take the p2p rule; collectives keep NCCL's collective rule.
TEST(NcclP2p, RequestChannelsDispatchOnTheCollective) {
  const Topology topo = load_topology("dgx-h100");
  Request r;
  r.comm = Communicator::from_topology(topo);
  NcclCommChannels comm;
  comm.channels = 24;
  comm.p2p = nccl_p2p_shape(topo, r.comm, 24);
  auto channels = [&] {
    r.count = count_for_bytes(r.collective, Bytes(64 * kMiB), r.dtype, r.comm.size());
    nccl_schedule_channels(r, comm);
    return r.channels;
  };
  r.collective = Collective::kSendRecv;
  r.algorithm = "direct";
  EXPECT_EQ(channels(), 4);
  EXPECT_TRUE(r.split.empty());
  r.collective = Collective::kAllGather;  // collsim's own direct AllGather keeps its channels
  EXPECT_EQ(channels(), 24);
  r.collective = Collective::kAllReduce;
  r.algorithm = "ring";
  r.protocol = Protocol::kSimple;
  EXPECT_EQ(channels(), 24);
  // One rank: NCCL copies the buffer, on one channel.
  r.comm = Communicator::flat(1);
  EXPECT_EQ(channels(), 1);
}

}  // namespace
}  // namespace collsim
