// How NCCL divides one collective among its channels, release by release
// (algorithms/models/nccl_channels.hpp). Every expected split is worked by hand, in the comment
// above it, from NCCL's code at the tag the release names (`src/enqueue.cc`).
#include "algorithms/models/nccl_channels.hpp"

#include <gtest/gtest.h>

#include "algorithms/models/nccl_model.hpp"
#include "topology/error.hpp"

namespace collsim {
namespace {

TEST(NcclRelease, ReadsReleasesAsNcclPrintsThem) {
  EXPECT_EQ(parse_nccl_release("2.26.2+cuda12.8"), (NcclRelease{26, 2}));
  EXPECT_EQ(parse_nccl_release("2.22.3-1"), (NcclRelease{22, 3}));
  EXPECT_EQ(parse_nccl_release("2.19"), (NcclRelease{19, -1}));
  EXPECT_EQ(parse_nccl_release("2.30.9"), (NcclRelease{30, 9}));
  EXPECT_EQ(parse_nccl_release("head"), kNewestNccl);
  EXPECT_EQ(to_string(NcclRelease{26, 2}), "2.26.2");
  EXPECT_EQ(to_string(parse_nccl_release("2.26")), "2.26");
  for (const char* bad : {"1.0", "2", "2.", "2.31", "2.26.x", "2.26.2abc", "", "v2.26"}) {
    EXPECT_THROW(parse_nccl_release(bad), RequestError) << bad;
  }
  EXPECT_TRUE((NcclRelease{26, 2}).at_least(26));
  EXPECT_FALSE((NcclRelease{25, 9}).at_least(26));
  // Named without its patch, a release is its minor's first (--nccl-version 2.26 once ran 2.25's
  // division and 2.27 2.22.3's constants).
  EXPECT_TRUE(parse_nccl_release("2.26").at_least(26));
  EXPECT_FALSE(parse_nccl_release("2.26").at_least(26, 2));
  EXPECT_EQ(nccl_constants_for(parse_nccl_release("2.27")), NcclVersion::k2_30);
}

// The tuning model's constant set nearest to each release (docs/nccl-model.md §1.8).
TEST(NcclRelease, TakesTheNearestConstantSet) {
  EXPECT_EQ(nccl_constants_for({19, 3}), NcclVersion::k2_22);
  EXPECT_EQ(nccl_constants_for({22, 3}), NcclVersion::k2_22);
  EXPECT_EQ(nccl_constants_for({23, 4}), NcclVersion::k2_26);
  EXPECT_EQ(nccl_constants_for({26, 6}), NcclVersion::k2_26);
  EXPECT_EQ(nccl_constants_for({27, 0}), NcclVersion::k2_30);
  EXPECT_EQ(parse_nccl_version("2.29.2"), NcclVersion::k2_30);
}

// An f32 AllReduce on 16 ranks (two nodes of 8) of `bytes`, `algorithm`/`protocol`.
Request all_reduce(const char* algorithm, Protocol p, std::uint64_t bytes, int ranks = 16) {
  Request r;
  r.collective = Collective::kAllReduce;
  r.algorithm = algorithm;
  r.protocol = p;
  r.dtype = DataType::kF32;
  r.count = bytes / 4;
  r.comm = Communicator::grid(ranks / 8 > 0 ? ranks / 8 : 1, ranks < 8 ? ranks : 8);
  return r;
}

NcclChannels split(const char* release, const Request& r, int comm_channels) {
  const NcclRelease v = parse_nccl_release(release);
  const NcclLaunch l =
      nccl_launch(r.algorithm, r.protocol, r.comm.size(),
                  r.count * 4 * (is_blocked(r.collective) ? r.comm.size() : 1), comm_channels, v);
  return nccl_channels(v, r, l, comm_channels);
}

ChannelSplit parts(std::uint64_t lo, std::uint64_t mid, int mids, std::uint64_t hi) {
  return {lo / 4, mid / 4, hi / 4, mids};
}

// Tree LL, 64 KiB, on a communicator of 32 channels. topoGetAlgoInfo: 4 KiB a channel (512
// threads x 8 B), so nc = 16 whatever the release.
TEST(NcclChannels, TreeLlAt64KiBFollowsEachRelease) {
  const Request r = all_reduce("dbtree", Protocol::kLL, 64 << 10);
  // Up to 2.19 the kernel strides over all 16: near-equal parts, no split.
  NcclChannels c = split("2.19.3", r, 32);
  EXPECT_EQ(c.channels, 16);
  EXPECT_TRUE(c.split.empty());
  // 2.20: 64 KiB / 16 = 4 KiB (1024 f32), already a multiple of LL's 8 B x 512 threads.
  c = split("2.20.3", r, 32);
  EXPECT_EQ(c.channels, 16);
  EXPECT_EQ(c.split, parts(4096, 4096, 14, 4096));
  // 2.22: traffic 128 KiB, 8 KiB a channel (above the 512 B minimum), 16 B cells of 32 B of
  // traffic: 256 cells a channel, 4096 cells: lo 256, 15 more, the last of which is hi.
  c = split("2.22.3", r, 32);
  EXPECT_EQ(c.channels, 16);
  EXPECT_EQ(c.split, parts(4096, 4096, 14, 4096));
  // 2.24: a channel gets at least 16 KiB of traffic: cells of 16 KiB / 2 = 8 KiB, one cell a
  // channel, 8 cells: 8 channels of 8 KiB.
  c = split("2.24.3", r, 32);
  EXPECT_EQ(c.channels, 8);
  EXPECT_EQ(c.split, parts(8192, 8192, 6, 8192));
  // 2.26: LL's traffic counts four times, the collective's (512 KiB, 32 KiB a channel) and a
  // cell's (16 KiB / 8 = 2 KiB cells of 16 KiB of traffic): two cells a channel, 16 channels of
  // 4 KiB.
  c = split("2.26.2", r, 32);
  EXPECT_EQ(c.channels, 16);
  EXPECT_EQ(c.split, parts(4096, 4096, 14, 4096));
  // 2.29: 32 KiB of traffic at least; 128 KiB / 16 = 8 KiB a channel, cells of 32 KiB / 8 =
  // 4 KiB (one a channel): 16 channels of 4 KiB.
  c = split("2.29.2", r, 32);
  EXPECT_EQ(c.channels, 16);
  EXPECT_EQ(c.split, parts(4096, 4096, 14, 4096));
}

// 2.26, Tree LL, 256 KiB on 32 channels: nc = 32 (4 KiB a channel); 2 MiB of LL traffic, 64 KiB
// a channel; 2 KiB cells of 16 KiB of traffic, four a channel: 32 channels of 8 KiB. LL's
// fourfold traffic changes the cell, not the parts.
TEST(NcclChannels, LlTrafficCountsFourTimesFrom2_26) {
  const NcclChannels c = split("2.26.2", all_reduce("dbtree", Protocol::kLL, 256 << 10), 32);
  EXPECT_EQ(c.channels, 32);
  EXPECT_EQ(c.split, parts(8192, 8192, 30, 8192));
  EXPECT_EQ(c.split.total(), (256u << 10) / 4);
  // Where the minimum binds it binds in LL's traffic: 2.26, Tree LL, 8 KiB: nc = 2 (4 KiB a
  // channel), 64 KiB of traffic, 32 KiB a channel (above the 16 KiB minimum): two 2 KiB cells a
  // channel, 2 channels of 4 KiB; Simple's 8 KiB cells (16 KiB minimum) give one channel.
  EXPECT_EQ(split("2.26.2", all_reduce("dbtree", Protocol::kLL, 8 << 10), 32).split,
            parts(4096, 0, 0, 4096));
  EXPECT_EQ(split("2.26.2", all_reduce("dbtree", Protocol::kSimple, 8 << 10), 32).split,
            parts(8192, 0, 0, 0));
}

// 2.20 rounds each channel's 1/n up to LL's alignment (8 B x 512 threads of f32: 1024
// elements): 10 KiB on nc = 2 gives 5 KiB (1280 f32), rounded to 2048, and the last channel the
// 512 left.
TEST(NcclChannels, Release2_20RoundsToTheProtocolsAlignment) {
  const NcclChannels c = split("2.20.3", all_reduce("dbtree", Protocol::kLL, 10 << 10), 32);
  EXPECT_EQ(c.channels, 2);
  EXPECT_EQ(c.split, parts(8192, 0, 0, 2048));
}

// AllGather counts the traffic of every rank's block. 2.26, Ring LL on 8 ranks, 256 KiB in all
// (32 KiB a rank): Ring LL's threshold is 8 B x 8 ranks a thread, 32 KiB a channel: nc = 8.
// Traffic 8 x 32 KiB x 4 (LL) = 1 MiB, 128 KiB a channel; cells of 16 KiB / (8 x 4) = 512 B of
// each block, 16 KiB of traffic each: 8 a channel, 64 cells: 8 channels of 4 KiB of each block.
TEST(NcclChannels, AllGatherDividesEveryBlock) {
  Request r;
  r.collective = Collective::kAllGather;
  r.algorithm = "ring";
  r.protocol = Protocol::kLL;
  r.count = (32 << 10) / 4;
  r.comm = Communicator::flat(8);
  const NcclChannels c = split("2.26.2", r, 16);
  EXPECT_EQ(c.channels, 8);
  EXPECT_EQ(c.split, parts(4096, 4096, 6, 4096));
}

// PAT keeps every channel of the communicator whatever the size: NCCL has no maxThreads entry
// for it, so topoGetAlgoInfo's `nBytes < nc * nt * threshold` never holds (src/enqueue.cc,
// 2.23 to 2.30). A 64 KiB AllGather on 8 ranks of one GPU, 4 channels, 2.26: Ring/Simple's
// loop stops at 2 (64 KiB = 2 x 512 threads x 64 B); PAT's division takes 64 KiB of traffic,
// 16 KiB a channel, cells of 2 KiB (16 KiB of traffic each): 4 channels of 2 KiB.
TEST(NcclChannels, PatKeepsTheCommunicatorsChannels) {
  const NcclRelease v = parse_nccl_release("2.26.2");
  EXPECT_EQ(nccl_launch("ring", Protocol::kSimple, 8, 64 << 10, 4, v).channels, 2);
  EXPECT_EQ(nccl_launch("pat", Protocol::kSimple, 8, 64 << 10, 4, v).channels, 4);
  EXPECT_EQ(nccl_launch("pat", Protocol::kSimple, 8, 64, 4, v).threads, 640);
  Request r;
  r.collective = Collective::kAllGather;
  r.algorithm = "pat";
  r.protocol = Protocol::kSimple;
  r.count = (8 << 10) / 4;
  r.comm = Communicator::grid(8, 1);
  const NcclChannels c = split("2.26.2", r, 4);
  EXPECT_EQ(c.channels, 4);
  EXPECT_EQ(c.split, parts(2048, 2048, 2, 2048));
}

// A ring PCIe bounds (bwIntra x nChannels of its graph at most PCI_BW, 12 GB/s) runs Simple on
// 256 threads, not 512 (src/graph/tuning.cc simpleDefaultThreads), so the threshold loop keeps
// twice the channels: 32 KiB on 2 GPUs over one PCIe Gen3 ring graph of 12 GB/s is
// 2 x 256 x 64 B, two channels, where 512 threads leave one. Tree/Simple keeps 512.
TEST(NcclChannels, PcieBoundRingsRunSimpleOnHalfTheThreads) {
  EXPECT_EQ(nccl_ring_simple_threads(12.0, 1), 256);
  EXPECT_EQ(nccl_ring_simple_threads(6.0, 2), 256);
  EXPECT_EQ(nccl_ring_simple_threads(20.0, 1), 512);
  const NcclRelease v = kNewestNccl;
  EXPECT_EQ(nccl_launch("ring", Protocol::kSimple, 2, 32 << 10, 2, v, 256).channels, 2);
  EXPECT_EQ(nccl_launch("ring", Protocol::kSimple, 2, 32 << 10, 2, v, 256).threads, 256 + 32);
  EXPECT_EQ(nccl_launch("ring", Protocol::kSimple, 2, 32 << 10, 2, v).channels, 1);
  EXPECT_EQ(nccl_launch("dbtree", Protocol::kSimple, 2, 32 << 10, 2, v, 256).channels, 1);
  Request r = all_reduce("ring", Protocol::kSimple, 32 << 10, 2);
  NcclCommChannels comm;
  comm.channels = 2;
  comm.ring_simple_threads = 256;
  nccl_schedule_channels(r, comm);
  EXPECT_EQ(r.channels, 2);
}

// NVLS divides too, over comm->nvlsChannels: 2.26, 64 KiB on 8 GPUs of one node, 16 NVLS
// channels: 16 KiB of traffic a channel, 8 KiB cells: 8 channels.
TEST(NcclChannels, NvlsDividesOverItsOwnChannels) {
  Request r = all_reduce("nvls", Protocol::kSimple, 64 << 10, 8);
  r.comm = Communicator::flat(8);
  const NcclChannels c = split("2.26.2", r, 16);
  EXPECT_EQ(c.channels, 8);
  EXPECT_EQ(c.split, parts(8192, 8192, 6, 8192));
}

// NVLS across nodes is scheduled as CollNet: equal parts on its channels, no split.
TEST(NcclChannels, NvlsAcrossNodesIsNotDivided) {
  const NcclChannels c = split("2.26.2", all_reduce("nvls", Protocol::kSimple, 64 << 10, 16), 16);
  EXPECT_EQ(c.channels, 16);
  EXPECT_TRUE(c.split.empty());
}

// From 2.28 NVLS across nodes runs on no more than the communicator's channels
// (src/enqueue.cc topoGetAlgoInfo): 16 NVLS channels on a communicator of 8 give 8; before,
// all 16.
TEST(NcclChannels, NvlsAcrossNodesKeepsToTheCommunicatorsChannelsFrom228) {
  Request r = all_reduce("nvls", Protocol::kSimple, 64 << 20, 16);
  NcclCommChannels comm;
  comm.channels = 8;
  comm.nvls_channels = 16;
  comm.release = parse_nccl_release("2.28.3");
  nccl_schedule_channels(r, comm);
  EXPECT_EQ(r.channels, 8);
  comm.release = parse_nccl_release("2.27.7");
  nccl_schedule_channels(r, comm);
  EXPECT_EQ(r.channels, 16);
}

// A communicator of one channel puts everything on it; a size that is not a whole number of
// cells leaves the last cell short.
TEST(NcclChannels, OneChannelAndShortCells) {
  NcclChannels c = split("2.29.2", all_reduce("ring", Protocol::kSimple, 1 << 20), 1);
  EXPECT_EQ(c.channels, 1);
  EXPECT_EQ(c.split, parts(1 << 20, 0, 0, 0));
  // 2.24, Ring Simple, 100 000 B: nc = 3 (32 KiB a channel), 200 000 B of traffic, 66 666 a
  // channel; cells of 8 KiB (16 KiB of traffic): 13, ceil(66 666 / 16 384) = 5 a channel: lo 5,
  // one middle channel of 5, and the last 3 less what the 13th cell lacks.
  c = split("2.24.3", all_reduce("ring", Protocol::kSimple, 100000), 32);
  EXPECT_EQ(c.channels, 3);
  EXPECT_EQ(c.split, parts(5 * 8192, 5 * 8192, 1, 100000 - 10 * 8192));
}

// A split scaled to another size keeps its shape, the last part taking the rounding; a size
// too small for every part to keep an element gives the near-equal parts back.
TEST(NcclChannels, SplitsScaleWithTheSize) {
  const ChannelSplit s{100, 50, 300, 2};
  EXPECT_EQ(s.scaled_to(1000), (ChannelSplit{200, 100, 600, 2}));
  EXPECT_EQ(s.scaled_to(1001), (ChannelSplit{200, 100, 601, 2}));
  EXPECT_EQ(s.scaled_to(1001).total(), 1001u);
  EXPECT_TRUE(s.scaled_to(3).empty());
  EXPECT_EQ((ChannelSplit{40, 20, 0, 3}).scaled_to(51), (ChannelSplit{21, 10, 0, 3}));
}

// collsim's own algorithms, CollNet and point-to-point collectives keep their channels.
TEST(NcclChannels, OnlyNcclsDividedAlgorithmsSplit) {
  const NcclChannels c = split("2.26.2", all_reduce("bintree", Protocol::kLL, 64 << 10), 24);
  EXPECT_EQ(c.channels, 24);
  EXPECT_TRUE(c.split.empty());
}

// comm->nvlsChannels's default release by release (`src/transport/nvls.cc` at v2.24.3, v2.25.1,
// v2.27.3 and v2.30.4): Hopper always 16; Blackwell 16, then 32, then 24 inside one NVLink
// domain, and from 2.30 by the network across domains.
TEST(NcclChannels, NvlsChannelsFollowTheReleaseAndArchitecture) {
  const auto at = [](const char* release, int sm, int domains, int ppn, double net) {
    return nccl_nvls_channels(parse_nccl_release(release), NvlsShape{sm, domains, ppn, net});
  };
  EXPECT_EQ(at("2.30.7", 90, 1, 8, 50), 16);
  EXPECT_EQ(at("2.30.7", 90, 4, 8, 50), 16);
  EXPECT_EQ(at("2.24.3", 100, 1, 8, 50), 16);
  EXPECT_EQ(at("2.25.1", 100, 1, 8, 50), 32);
  EXPECT_EQ(at("2.26", 100, 2, 8, 50), 32);
  EXPECT_EQ(at("2.27", 100, 1, 72, 50), 24);  // one NVL72 rack: one MNNVL clique
  EXPECT_EQ(at("2.29.2", 100, 4, 8, 50), 32);
  EXPECT_EQ(at("2.30.7", 100, 1, 8, 50), 24);
  EXPECT_EQ(at("2.30.7", 100, 2, 8, 50), 32);   // two domains, 400 Gb/s a head
  EXPECT_EQ(at("2.30.7", 100, 4, 8, 50), 24);   // more than two, 400 Gb/s
  EXPECT_EQ(at("2.30.7", 100, 4, 8, 100), 24);  // 800 Gb/s, up to 8 a domain
  EXPECT_EQ(at("2.30.7", 100, 4, 72, 100), 32);
  EXPECT_EQ(at("2.30.7", 100, 4, 8, 25), 32);  // 200 Gb/s: the default across domains
}

// comm->nvlsChunkSize and nvlsTreeMaxChunkSize: 128 KiB and NCCL's fallback (0) everywhere but
// Blackwell across NVLink domains from 2.30 (ncclNvlsTreeSm100Tuning, v2.30.4).
TEST(NcclChannels, NvlsChunksFollowBlackwellsTuning) {
  const auto at = [](const char* release, int sm, int domains, int ppn, double net, bool near) {
    const NvlsChunks c =
        nccl_nvls_chunks(parse_nccl_release(release), NvlsShape{sm, domains, ppn, net, near});
    return std::pair{c.chunk, c.tree_max};
  };
  using P = std::pair<std::uint64_t, std::uint64_t>;
  EXPECT_EQ(at("2.30.7", 90, 4, 8, 50, true), (P{131072, 0}));    // Hopper
  EXPECT_EQ(at("2.29.2", 100, 4, 8, 50, true), (P{131072, 0}));   // before the tuning
  EXPECT_EQ(at("2.30.7", 100, 1, 72, 50, true), (P{131072, 0}));  // one NVL72 rack
  EXPECT_EQ(at("2.30.7", 100, 2, 4, 50, true), (P{262144, 262144}));
  EXPECT_EQ(at("2.30.7", 100, 2, 8, 50, true), (P{131072, 65536}));  // NIC near, < 96 GB/s
  EXPECT_EQ(at("2.30.7", 100, 2, 8, 50, false), (P{131072, 131072}));
  EXPECT_EQ(at("2.30.7", 100, 2, 72, 100, false), (P{131072, 65536}));  // 16 or more a domain
  EXPECT_EQ(at("2.30.7", 100, 4, 8, 100, true), (P{262144, 262144}));
  EXPECT_EQ(at("2.30.7", 100, 4, 16, 100, true), (P{131072, 131072}));
  EXPECT_EQ(at("2.30.7", 100, 4, 72, 100, true), (P{131072, 65536}));
  EXPECT_EQ(at("2.30.7", 100, 4, 8, 50, true), (P{131072, 65536}));
  EXPECT_EQ(at("2.30.7", 100, 4, 8, 50, false), (P{131072, 131072}));
  EXPECT_EQ(at("2.30.7", 100, 4, 8, 25, true), (P{131072, 0}));
}

// What NVLSTree's chunk becomes (request.cpp nvls_chunk, calcCollChunking): the tuned cap, then
// the size rules; an untuned communicator keeps 64 KiB on 4 nodes or more.
TEST(NcclChannels, NvlsTreeChunkTakesTheTunedCap) {
  Request r;
  r.algorithm = "nvls_tree";
  r.comm = Communicator::grid(4, 8);
  r.channels = 24;
  r.count = (std::uint64_t{1} << 30) / 4;
  EXPECT_EQ(chunking(r).chunk_bytes, 65536u);
  r.nvls_chunk_bytes = r.nvls_tree_max_chunk = 262144;
  EXPECT_EQ(chunking(r).chunk_bytes, 262144u);  // 1 GiB >= 16 x 192 heads x 256 KiB
  r.count = (std::uint64_t{64} << 20) / 4;
  EXPECT_EQ(chunking(r).chunk_bytes, 65536u);  // 64 MiB < 4 x 192 x 128 KiB
}

// NVLS across nodes (with SHARP) cuts NVLS's chunk, at most 32 KiB where NCCL's model gives it
// less than 150 GB/s (Request::nvls_across_max_chunk); on one node the cap does not apply.
TEST(NcclChannels, NvlsAcrossNodesChunkTakesItsCap) {
  Request r;
  r.algorithm = "nvls";
  r.comm = Communicator::grid(4, 8);
  r.channels = 16;
  r.count = (std::uint64_t{1} << 30) / 4;
  EXPECT_EQ(chunking(r).chunk_bytes, 131072u);
  r.nvls_across_max_chunk = 32768;
  EXPECT_EQ(chunking(r).chunk_bytes, 32768u);
  r.comm = Communicator::flat(8);
  EXPECT_EQ(chunking(r).chunk_bytes, 131072u);
}

}  // namespace
}  // namespace collsim
