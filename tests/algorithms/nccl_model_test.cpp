// NCCL's tuning model reproduces NCCL's own logged estimates and the reference figures of
// docs/nccl-model.md §1.9 and §1.10.
#include "algorithms/models/nccl_model.hpp"

#include <gtest/gtest.h>

#include "algorithms/ir/communicator.hpp"
#include "tests/preset_with.hpp"
#include "topology/error.hpp"
#include "topology/loader.hpp"

namespace collsim {
namespace {

// NVIDIA/nccl#1453: NCCL 2.22.3, 3 nodes x 8 H100, ring and tree graphs of 8 channels at
// 24 GB/s, tree pattern TREE (x0.85), Intel-class llMaxBw 20.4; NCCL printed
// "<bytes> -> Algo a proto p time t". Required: within 0.01 %.
TEST(NcclModel, ReproducesTheEstimatesNccl222Logged) {
  NcclModelInput in;
  in.version = NcclVersion::k2_22;
  in.sm = 90;
  in.nodes = 3;
  in.ranks = 24;
  in.cpu = CpuVendor::kIntel;
  in.ring = in.tree = NcclGraph{8, 24.0, 24.0};
  in.tree_pattern_is_tree = true;
  in.runtime_channels = 16;
  const NcclModel m(in);
  struct Logged {
    std::uint64_t bytes;
    NcclAlgo algo;
    Protocol proto;
    double time_us;
  };
  const Logged kLog[] = {
      {64, NcclAlgo::kTree, Protocol::kLL, 25.207382},
      {65536, NcclAlgo::kTree, Protocol::kLL, 37.798233},
      {131072, NcclAlgo::kTree, Protocol::kLL128, 51.603912},
      {8589934592ull, NcclAlgo::kRing, Protocol::kSimple, 86069.968750},
  };
  for (const Logged& l : kLog) {
    const auto choice = m.best(Collective::kAllReduce, l.bytes);
    ASSERT_TRUE(choice.has_value());
    EXPECT_EQ(choice->algo, l.algo) << l.bytes;
    EXPECT_EQ(choice->proto, l.proto) << l.bytes;
    EXPECT_NEAR(choice->time_us, l.time_us, 1e-4 * l.time_us) << l.bytes;
  }
}

// Before 2.18 NCCL counted an LL hop inside a node of a multi-node communicator at 1.8 x its
// hwLat (0.6 us), and had no netOverhead floor on the ring's steps (src/graph/tuning.cc,
// 2.17.1 against 2.18.1). On nccl#1453's 3 x 8 H100: the tree's 2 x 7 intra-node LL hops cost
// 0.48 us more each, the ring's LL steps 1.08 us instead of the Intel netOverhead's 1.0, and
// LL128 and one node are untouched.
TEST(NcclModel, ReleasesBefore218ChargeAMultiNodeLlHop18Times) {
  const auto model = [](const char* release, int nodes) {
    NcclModelInput in;
    in.version = NcclVersion::k2_22;
    in.release = parse_nccl_release(release);
    in.sm = 90;
    in.nodes = nodes;
    in.ranks = 8 * nodes;
    in.cpu = CpuVendor::kIntel;
    in.ring = in.tree = NcclGraph{8, 24.0, 24.0};
    in.tree_pattern_is_tree = true;
    in.runtime_channels = 16;
    return NcclModel(in);
  };
  const auto lat = [](const NcclModel& m, NcclAlgo a, Protocol p) {
    return m.entry(Collective::kAllReduce, a, p).latency_us;
  };
  const NcclModel old3 = model("2.17.1", 3), new3 = model("2.18.1", 3);
  EXPECT_NEAR(lat(old3, NcclAlgo::kTree, Protocol::kLL) - lat(new3, NcclAlgo::kTree, Protocol::kLL),
              2 * 7 * 0.48, 1e-9);
  EXPECT_DOUBLE_EQ(lat(old3, NcclAlgo::kTree, Protocol::kLL128),
                   lat(new3, NcclAlgo::kTree, Protocol::kLL128));
  // The 3-node ring AllReduce: 2 x 23 = 46 steps, of which 2 x 3 = 6 cross the network (2.17
  // counts 2 x nNodes), the other 40 at 1.08 us (2.17) or max(0.6, 1.0) us (2.18).
  const double ring_old = lat(old3, NcclAlgo::kRing, Protocol::kLL);
  const double ring_new = lat(new3, NcclAlgo::kRing, Protocol::kLL);
  EXPECT_NEAR(ring_old - ring_new, 40 * (1.08 - 1.0), 1e-9);
  const NcclModel old1 = model("2.17.1", 1), new1 = model("2.18.1", 1);
  EXPECT_DOUBLE_EQ(lat(old1, NcclAlgo::kTree, Protocol::kLL),
                   lat(new1, NcclAlgo::kTree, Protocol::kLL));
}

NcclModel dgx_h100_head() {
  // DGX H100, 1 node x 8: ring/tree 12 channels x 30 GB/s, NVLS 8 x 40 (inter 60), as logged
  // by NCCL 2.19.4 (NVIDIA/nccl#1197), with the 2.30.7 constants.
  NcclModelInput in;
  in.version = NcclVersion::k2_30;
  in.sm = 90;
  in.nodes = 1;
  in.ranks = 8;
  in.ring = in.tree = NcclGraph{12, 30.0, 30.0};
  in.nvls = NcclGraph{8, 40.0, 60.0};
  return NcclModel(in);
}

// docs/nccl-model.md §1.10, DGX-H100 table (latency us / algorithm bandwidth GB/s, one decimal).
TEST(NcclModel, ReproducesTheSingleNodeHeadFigures) {
  const NcclModel m = dgx_h100_head();
  struct Row {
    Collective coll;
    NcclAlgo algo;
    Protocol proto;
    double lat, bw;
  };
  const Row kRows[] = {
      {Collective::kAllReduce, NcclAlgo::kRing, Protocol::kLL, 15.0, 80.6},
      {Collective::kAllReduce, NcclAlgo::kRing, Protocol::kLL128, 40.6, 189.3},
      {Collective::kAllReduce, NcclAlgo::kRing, Protocol::kSimple, 56.0, 205.7},
      {Collective::kAllReduce, NcclAlgo::kTree, Protocol::kLL, 15.2, 43.6},
      {Collective::kAllReduce, NcclAlgo::kTree, Protocol::kLL128, 31.5, 128.8},
      {Collective::kAllReduce, NcclAlgo::kTree, Protocol::kSimple, 64.4, 165.6},
      {Collective::kAllReduce, NcclAlgo::kNvls, Protocol::kSimple, 25.0, 272.0},
      {Collective::kAllGather, NcclAlgo::kRing, Protocol::kLL, 10.8, 161.1},
      {Collective::kAllGather, NcclAlgo::kRing, Protocol::kLL128, 27.3, 378.5},
      {Collective::kAllGather, NcclAlgo::kRing, Protocol::kSimple, 32.2, 411.4},
      // 8 ch x 40 x 0.85 x 7/8 x 7/8 = 208.25 exactly (the reference table rounds to 208.2).
      {Collective::kReduceScatter, NcclAlgo::kNvls, Protocol::kSimple, 25.0, 208.25},
      {Collective::kBroadcast, NcclAlgo::kRing, Protocol::kLL, 7.2, 141.0},
      {Collective::kBroadcast, NcclAlgo::kRing, Protocol::kLL128, 15.9, 331.2},
      {Collective::kBroadcast, NcclAlgo::kRing, Protocol::kSimple, 11.8, 360.0},
  };
  for (const Row& r : kRows) {
    const auto& e = m.entry(r.coll, r.algo, r.proto);
    ASSERT_TRUE(e.enabled) << to_string(r.algo);
    EXPECT_NEAR(e.latency_us, r.lat, 0.05) << to_string(r.coll) << " " << to_string(r.algo);
    EXPECT_NEAR(e.bandwidth_GBps, r.bw, 0.05) << to_string(r.coll) << " " << to_string(r.algo);
  }
  // Tree and NVLS do not exist for Broadcast; NVLS AllReduce is Simple only.
  EXPECT_FALSE(m.entry(Collective::kBroadcast, NcclAlgo::kTree, Protocol::kLL).enabled);
  EXPECT_FALSE(m.entry(Collective::kAllReduce, NcclAlgo::kNvls, Protocol::kLL).enabled);
  EXPECT_FALSE(m.entry(Collective::kAllToAll, NcclAlgo::kRing, Protocol::kSimple).enabled);
}

// §1.10: "DGX-H100 AllReduce: Ring/LL from 8 B (15.0 us floor; 512 KB -> 21.5 us) -> NVLS/Simple
// from about 1.18 MB (2 MB 32.7 us; 32 MB 148 us; 512 MB 2.0 ms)".
TEST(NcclModel, PicksWhatTheReferenceSweepPicks) {
  const NcclModel m = dgx_h100_head();
  auto pick = [&](std::uint64_t b) { return *m.best(Collective::kAllReduce, b); };
  EXPECT_EQ(pick(8).algo, NcclAlgo::kRing);
  EXPECT_EQ(pick(8).proto, Protocol::kLL);
  EXPECT_NEAR(pick(8).time_us, 15.0, 0.01);
  EXPECT_NEAR(pick(512 * 1024).time_us, 21.5, 0.05);
  EXPECT_EQ(pick(1100000).algo, NcclAlgo::kRing);
  EXPECT_EQ(pick(1300000).algo, NcclAlgo::kNvls);
  EXPECT_NEAR(pick(2 << 20).time_us, 32.7, 0.05);
  EXPECT_NEAR(pick(32 << 20).time_us, 148.0, 0.5);
}

// §1.10 multi-node: Tree/LL floor 6.8 + 2 (7 x 0.6 + log2(N) x 5.0) with 8 GPUs per node.
TEST(NcclModel, MultiNodeTreeFloorGrowsWithLogNodes) {
  for (const auto& [nodes, floor] : {std::pair{2, 25.2}, {4, 35.2}, {16, 55.2}, {64, 75.2}}) {
    NcclModelInput in;
    in.nodes = nodes;
    in.ranks = 8 * nodes;
    in.ring = in.tree = NcclGraph{8, 48.0, 48.0};
    const NcclModel m(in);
    EXPECT_NEAR(m.entry(Collective::kAllReduce, NcclAlgo::kTree, Protocol::kLL).latency_us, floor,
                1e-9)
        << nodes;
  }
}

TEST(NcclModel, FiltersFollowNcclAlgoAndProtoSyntax) {
  const NcclModel m = dgx_h100_head();
  const NcclFilter no_nvls = parse_nccl_filter("ring,tree", "");
  EXPECT_EQ(m.best(Collective::kAllReduce, 256 << 20, no_nvls)->algo, NcclAlgo::kRing);
  const NcclFilter simple_only = parse_nccl_filter("", "^LL,LL128");
  EXPECT_EQ(m.best(Collective::kAllReduce, 8, simple_only)->proto, Protocol::kSimple);
  EXPECT_THROW(parse_nccl_filter("rung", ""), RequestError);
  try {
    parse_nccl_filter("nvlz", "");
  } catch (const RequestError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean \"nvls\"?"), std::string::npos) << e.what();
  }
}

// NVLS channels from the cluster: an NVL72 rack is one NVLink domain (24 on 2.30), Hopper keeps
// 16, and B200 nodes over 400 Gb/s NICs take 32 on two nodes and 24 on four.
TEST(NcclModel, NvlsChannelsFromTheCluster) {
  const auto nvls = [](const Topology& t, const char* release) {
    return nccl_model_input(t, Communicator::from_topology(t), parse_nccl_release(release))
        .nvls_channels;
  };
  EXPECT_EQ(nvls(load_topology("gb200-nvl72"), "2.30.7"), 24);
  EXPECT_EQ(nvls(load_topology("gb200-nvl72"), "2.25.1"), 32);
  EXPECT_EQ(nvls(load_topology("h100-2node-ib"), "2.30.7"), 16);
  std::string b200 = test::preset_with("h100-2node-ib", "routing: dmodk");
  b200.replace(b200.find("gpu: H100-SXM"), 13, "gpu: B200");
  for (const auto& [nodes, channels] : {std::pair{2, 32}, std::pair{4, 24}}) {
    const Topology t = parse_topology(b200, "b200.yaml", LoadOptions{nodes});
    EXPECT_EQ(nvls(t, "2.30.7"), channels) << nodes << " nodes";
    EXPECT_EQ(nvls(t, "2.29.2"), 32) << nodes << " nodes";
  }
}

// From 2.29 NCCL derates NVLSTree's bandwidth by the trees' correction on Blackwell behind x86
// hosts (`src/graph/tuning.cc` ncclTopoGetAlgoTime): at 1 MiB (index 14) Simple's 0.5, up to
// 512 MiB; not on 2.28, not on Hopper, not on a Grace tray (Arm; its GPUs have a C2C link).
TEST(NcclModel, BlackwellNvlsTreeOnX86TakesTheTreeCorrectionFrom229) {
  const auto time = [](const Topology& t, const char* release, std::uint64_t bytes) {
    const NcclModel m(
        nccl_model_input(t, Communicator::from_topology(t), parse_nccl_release(release)));
    return *m.time_us(Collective::kAllReduce, NcclAlgo::kNvlsTree, Protocol::kSimple, bytes);
  };
  const auto bandwidth_part = [&](const Topology& t, const char* release, std::uint64_t bytes) {
    return time(t, release, bytes) - time(t, release, 0);
  };
  const Topology b200 = load_topology("dgx-b200", {.nodes = 2});
  const std::uint64_t mib = std::uint64_t{1} << 20;
  EXPECT_TRUE(nccl_model_input(b200, Communicator::from_topology(b200), kNewestNccl).cpu_x86);
  EXPECT_NEAR(bandwidth_part(b200, "2.29.2", mib), 2 * bandwidth_part(b200, "2.28.9", mib), 1e-6);
  EXPECT_NEAR(bandwidth_part(b200, "2.30.7", 512 * mib) * 0.9,
              bandwidth_part(b200, "2.28.9", 512 * mib), 1e-6);
  EXPECT_NEAR(bandwidth_part(b200, "2.30.7", 1024 * mib),
              bandwidth_part(b200, "2.28.9", 1024 * mib), 1e-6);  // index 24: none
  const Topology h100 = load_topology("h100-2node-ib");
  EXPECT_NEAR(bandwidth_part(h100, "2.30.7", mib), bandwidth_part(h100, "2.28.9", mib), 1e-6);
  const Topology grace = load_topology("gb200-nvl72", {.nodes = 36});
  EXPECT_FALSE(nccl_model_input(grace, Communicator::from_topology(grace), kNewestNccl).cpu_x86);
}

// Hopper across nodes with a fast ring (bwIntra above 45 GB/s: 400 Gb/s NICs) doubles its
// channels again (connect.cc ncclTopoPostset): while 2x fits MAXCHANNELS (32) in 2.18 and 2.19,
// while fewer than 16 from 2.20; sm90 only before 2.25. Slower NICs (NDR200, 24 GB/s) never.
TEST(NcclModel, FastHopperRingsAcrossNodesDoubleTheirChannels) {
  const auto channels = [](const Topology& t, const char* release) {
    return nccl_model_input(t, Communicator::from_topology(t), parse_nccl_release(release))
        .runtime_channels;
  };
  const Topology eight = load_topology("h100-2node-ib");  // 8 x 400 Gb/s a node
  EXPECT_EQ(channels(eight, "2.17.1"), 16);
  EXPECT_EQ(channels(eight, "2.19.3"), 32);
  EXPECT_EQ(channels(eight, "2.22.3"), 16);
  std::string yaml = test::preset_with("h100-2node-ib", "routing: dmodk");
  yaml.replace(yaml.find("count: 8"), 8, "count: 4");
  const Topology four = parse_topology(yaml, "h100-4nic.yaml");  // 4 x 400 Gb/s a node
  EXPECT_EQ(channels(four, "2.22.3"), 16);
  EXPECT_EQ(channels(four, "2.30.7"), 16);
  std::string b200 = yaml;
  b200.replace(b200.find("gpu: H100-SXM"), 13, "gpu: B200");
  EXPECT_EQ(channels(parse_topology(b200, "b200-4nic.yaml"), "2.24.3"), 8);  // sm100: from 2.25
  EXPECT_EQ(channels(parse_topology(b200, "b200-4nic.yaml"), "2.26.2"), 16);
  EXPECT_EQ(channels(load_topology("h100-4gpu-2node-ndr200"), "2.19.3"), 8);
  // MAXCHANNELS was 32 until 2.24 (src/include/device.h): 12 NICs give 24 channels, which 2.19
  // cannot double (it did to 48, more than that release runs); 32 NICs give a ring search of
  // MAXCHANNELS / 2 of them, 16 then and 32 from 2.25.
  std::string twelve = test::preset_with("h100-2node-ib", "routing: dmodk");
  twelve.replace(twelve.find("count: 8"), 8, "count: 12");
  EXPECT_EQ(channels(parse_topology(twelve, "h100-12nic.yaml"), "2.19.3"), 24);
  std::string many = test::preset_with("h100-2node-ib", "routing: dmodk");
  many.replace(many.find("count: 8"), 8, "count: 32");
  const Topology thirty_two = parse_topology(many, "h100-32nic.yaml");
  EXPECT_EQ(channels(thirty_two, "2.24.3"), 32);
  EXPECT_EQ(channels(thirty_two, "2.26.2"), 64);
  EXPECT_EQ(nccl_max_channels(parse_nccl_release("2.24.3")), 32);
  EXPECT_EQ(nccl_max_channels(parse_nccl_release("2.25")), 64);
}

// LL128 only on the architectures NCCL lists for the release (tuning.cc): Hopper from 2.15,
// Blackwell (10.0) from 2.25, Blackwell Ultra (10.3) only once 2.27 lets every one from 7.0 on.
TEST(NcclModel, Ll128OnTheArchitecturesEachReleaseLists) {
  const auto ll128 = [](const std::string& gpu, const char* release) {
    std::string yaml = test::preset_with("dgx-h100", "routing: dmodk");
    yaml.replace(yaml.find("gpu: H100-SXM"), 13, "gpu: " + gpu);
    const Topology t = parse_topology(yaml, "t.yaml");
    return nccl_model_input(t, Communicator::from_topology(t), parse_nccl_release(release)).ll128;
  };
  EXPECT_FALSE(ll128("H100-SXM", "2.14.3"));
  EXPECT_TRUE(ll128("H100-SXM", "2.15.1"));
  EXPECT_TRUE(ll128("A100-SXM", "2.12.12"));
  EXPECT_FALSE(ll128("B200", "2.24.3"));
  EXPECT_TRUE(ll128("B200", "2.25.1"));
  EXPECT_FALSE(ll128("B300", "2.26.2"));
  EXPECT_TRUE(ll128("B300", "2.27.3"));
}

// NCCL_ALGO_NVLS first appears in 2.17 and NCCL_ALGO_NVLS_TREE in 2.18 (src/include/devcomm.h):
// an older release picks among the others, where collsim picked NVLSTree on two DGX H100s for
// --nccl-version 2.12.
TEST(NcclModel, NvlsFrom217AndNvlsTreeFrom218) {
  const auto runs = [](const Topology& t, const char* release, NcclAlgo a) {
    const NcclModel m(
        nccl_model_input(t, Communicator::from_topology(t), parse_nccl_release(release)));
    return m.time_us(Collective::kAllReduce, a, Protocol::kSimple, 1 << 30).has_value();
  };
  const Topology one = load_topology("dgx-h100");
  EXPECT_FALSE(runs(one, "2.16.5", NcclAlgo::kNvls));
  EXPECT_TRUE(runs(one, "2.17.1", NcclAlgo::kNvls));
  const Topology two = load_topology("h100-2node-ib");
  EXPECT_FALSE(runs(two, "2.17.1", NcclAlgo::kNvlsTree));
  EXPECT_TRUE(runs(two, "2.18.1", NcclAlgo::kNvlsTree));
}

// 2.23 to 2.26 tune with their own constants (docs/nccl-model.md §1.8): Tree/Simple's base 8.4
// and hwLat 4.0 / 4.0 / 14 where 2.22 had 0 and 28, two network steps fewer in a ring
// AllReduce, PAT with one GPU per node.
TEST(NcclModel, Releases223To226HaveTheirOwnConstants) {
  const Topology t = load_topology("h100-16node-ib", {.nodes = 16});
  const Communicator comm = Communicator::from_topology(t);
  const auto lat = [&](const char* release, NcclAlgo a, Protocol p) {
    return NcclModel(nccl_model_input(t, comm, parse_nccl_release(release)))
        .entry(Collective::kAllReduce, a, p)
        .latency_us;
  };
  EXPECT_EQ(nccl_model_input(t, comm, parse_nccl_release("2.24.3")).version, NcclVersion::k2_26);
  // Tree/Simple on 16 x 8: 2 x (7 x 28 + 4 x 28) = 616 on 2.22; 8.4 + 2 x (7 x 4 + 4 x 14).
  EXPECT_NEAR(lat("2.22.3", NcclAlgo::kTree, Protocol::kSimple), 616.0, 1e-9);
  EXPECT_NEAR(lat("2.24.3", NcclAlgo::kTree, Protocol::kSimple), 176.4, 1e-9);
  EXPECT_NEAR(lat("2.26.2", NcclAlgo::kTree, Protocol::kSimple),
              lat("2.30.7", NcclAlgo::kTree, Protocol::kSimple), 1e-9);
  // Ring/LL: 2 x 16 network steps on 2.22, 2 x 15 from 2.23, each 2.7 us against the 0.6 us
  // NVLink step (the 1.0 us network overhead of Intel hosts floors it at 1.0).
  EXPECT_NEAR(
      lat("2.22.3", NcclAlgo::kRing, Protocol::kLL) - lat("2.24.3", NcclAlgo::kRing, Protocol::kLL),
      2 * (2.7 - 1.0), 1e-9);
  const Topology one =
      load_topology(std::string(COLLSIM_SOURCE_DIR) + "/bench/flat-switch.yaml", {.nodes = 8});
  const Communicator ones = Communicator::from_topology(one);
  const auto pat = [&](const char* release) {
    return NcclModel(nccl_model_input(one, ones, parse_nccl_release(release)))
        .entry(Collective::kAllGather, NcclAlgo::kPat, Protocol::kSimple)
        .enabled;
  };
  EXPECT_FALSE(pat("2.22.3"));
  EXPECT_TRUE(pat("2.23.4"));
  EXPECT_TRUE(pat("2.26.2"));
}

// A model input for `release`, with the constant set that release tunes with.
NcclModelInput input_for(const char* release) {
  NcclModelInput in;
  in.release = parse_nccl_release(release);
  in.version = nccl_constants_for(in.release);
  return in;
}

// 2.27 to 2.28.2 still cost NVLS as 2.26 did (the graph's speed, 5/6 of it as algorithm
// bandwidth), but AllGather and ReduceScatter leave out the GPU's own share: min(intra x 7/8,
// inter x 0.9). 2.28.3 brought nvlsEfficiency and the rest (§1.3). src/graph/tuning.cc at
// v2.26.6-1, v2.27.7-1 and v2.28.3-1.
TEST(NcclModel, Releases227To228KeepTheOlderNvlsFormula) {
  const auto bw = [](const char* release, Collective c) {
    NcclModelInput in = input_for(release);
    in.sm = 90;
    in.ranks = 8;
    in.ring = in.tree = NcclGraph{12, 30.0, 30.0};
    in.nvls = NcclGraph{8, 40.0, 60.0};  // DGX H100 (NVIDIA/nccl#1197)
    return NcclModel(in).entry(c, NcclAlgo::kNvls, Protocol::kSimple).bandwidth_GBps;
  };
  EXPECT_NEAR(bw("2.26.2", Collective::kAllReduce), 8 * 40.0 * 5 / 6, 1e-9);
  EXPECT_NEAR(bw("2.27.7", Collective::kAllReduce), 8 * 40.0 * 5 / 6, 1e-9);
  EXPECT_NEAR(bw("2.28.3", Collective::kAllReduce), 8 * 40.0 * 0.85 * 7 / 8 * 2 * 8 / 14, 1e-4);
  EXPECT_NEAR(bw("2.26.2", Collective::kReduceScatter), 8 * 40.0, 1e-9);
  EXPECT_NEAR(bw("2.27.7", Collective::kReduceScatter), 8 * 40.0 * 7 / 8, 1e-9);
  EXPECT_NEAR(bw("2.28.3", Collective::kAllGather), 8 * 40.0 * 0.85 * 7 / 8 * 7 / 8, 1e-4);
}

// Blackwell's rows within the 2.27+ set, release by release (src/graph/tuning.cc at each tag):
// the ring's LL128 channel cap 73.4 (twice Hopper's) to 2.28.3, 34.6 on two nodes from 2.28.7,
// 34.5 elsewhere from 2.29.2, 40 from 2.29.7; NVLSTree's cap beyond two nodes 43.1 from 2.28.3
// (none before), 43.8 from 2.28.9, 80 from 2.30.3; its network hwLat 14 until 20.9 in 2.28.9.
TEST(NcclModel, BlackwellConstantsFollowEachRelease) {
  const auto model = [](const char* release, int nodes) {
    NcclModelInput in = input_for(release);
    in.sm = 100;
    in.nodes = nodes;
    in.ranks = 8 * nodes;
    in.ring = in.tree = NcclGraph{8, 80.0, 80.0};
    in.nvls = NcclGraph{16, 100.0, 100.0};
    return NcclModel(in);
  };
  const auto ll128_cap = [&](const char* release, int nodes) {
    const int ranks = 8 * nodes;
    const double ratio = static_cast<double>(ranks) / (2 * (ranks - 1));
    const double bus = model(release, nodes)
                           .entry(Collective::kAllReduce, NcclAlgo::kRing, Protocol::kLL128)
                           .bandwidth_GBps /
                       ratio;
    return std::min(bus / 8, 80.0 * 0.92);  // per channel, the cap where it binds
  };
  EXPECT_NEAR(ll128_cap("2.27.7", 2), 73.4, 1e-9);
  EXPECT_NEAR(ll128_cap("2.28.3", 2), 73.4, 1e-9);
  EXPECT_NEAR(ll128_cap("2.28.7", 2), 34.6, 1e-9);
  EXPECT_NEAR(ll128_cap("2.28.7", 1), 73.4, 1e-9);
  EXPECT_NEAR(ll128_cap("2.29.2", 1), 34.5, 1e-9);
  EXPECT_NEAR(ll128_cap("2.29", 4), 34.5, 1e-9);  // 2.29's first release is 2.29.2
  EXPECT_NEAR(ll128_cap("2.29.7", 2), 40.0, 1e-9);
  EXPECT_NEAR(ll128_cap("2.30.7", 1), 40.0, 1e-9);
  const auto nvls_tree = [&](const char* release) {
    return model(release, 4).entry(Collective::kAllReduce, NcclAlgo::kNvlsTree, Protocol::kSimple);
  };
  const double ratio = 32.0 / 62.0;
  // 2.27: min(intra, inter / 2) beyond two nodes, 5/6 of it; no cap.
  EXPECT_NEAR(nvls_tree("2.27.7").bandwidth_GBps, 16 * 50.0 * 5 / 6, 1e-9);
  EXPECT_NEAR(nvls_tree("2.28.3").bandwidth_GBps, 16 * 43.1 * ratio, 1e-4);
  EXPECT_NEAR(nvls_tree("2.28.9").bandwidth_GBps, 16 * 43.8 * ratio, 1e-4);
  EXPECT_NEAR(nvls_tree("2.30.3").bandwidth_GBps, 16 * 80.0 * ratio, 1e-4);
  // Two levels of four nodes, up and down: 4 network steps.
  EXPECT_NEAR(nvls_tree("2.28.9").latency_us - nvls_tree("2.28.7").latency_us, 4 * (20.9 - 14),
              1e-9);
  // The tree's Simple cap on two nodes: 82.8 (twice Hopper's 41.4, not binding on 80 x 0.92)
  // until 2.28.3's 42.8; a tree's algorithm bandwidth is half its bus bandwidth.
  const auto tree = [&](const char* release) {
    return model(release, 2)
        .entry(Collective::kAllReduce, NcclAlgo::kTree, Protocol::kSimple)
        .bandwidth_GBps;
  };
  EXPECT_NEAR(tree("2.27.7"), 8 * 80.0 * 0.92 / 2, 1e-9);
  EXPECT_NEAR(tree("2.28.3"), 8 * 42.8 / 2, 1e-9);
}

TEST(NcclModel, VersionsParse) {
  EXPECT_EQ(parse_nccl_version("2.22"), NcclVersion::k2_22);
  EXPECT_EQ(parse_nccl_version("2.30.7"), NcclVersion::k2_30);
  EXPECT_THROW(parse_nccl_version("2.31"), RequestError);
}

// The graph inputs estimated from a topology reproduce what NCCL logged on the same hardware.
TEST(NcclModel, GraphsFromTopologyMatchNcclLogs) {
  auto graphs = [](const std::string& preset, std::optional<int> nodes = std::nullopt) {
    const Topology t = load_topology(preset, LoadOptions{nodes});
    return nccl_model_input(t, Communicator::from_topology(t), NcclVersion::k2_30);
  };
  const NcclModelInput h100 = graphs("dgx-h100");  // NVIDIA/nccl#1197: 12 x 30, NVLS 8 x 40/60
  EXPECT_EQ(h100.ring->channels, 12);
  EXPECT_EQ(h100.ring->bw_intra, 30.0);
  ASSERT_TRUE(h100.nvls.has_value());
  EXPECT_EQ(h100.nvls->channels, 8);
  EXPECT_EQ(h100.nvls->bw_intra, 40.0);
  EXPECT_EQ(h100.nvls->bw_inter, 60.0);
  EXPECT_TRUE(h100.ll128);
  const NcclModelInput a100 = graphs("dgx-a100");  // 24 runtime channels (nccl-tests#100)
  EXPECT_EQ(a100.ring->channels, 12);
  EXPECT_EQ(a100.ring->bw_intra, 20.0);
  EXPECT_FALSE(a100.nvls.has_value());                   // no NVLS before Hopper
  const NcclModelInput multi = graphs("h100-2node-ib");  // one channel per 400G NIC
  EXPECT_EQ(multi.ring->channels, 8);
  EXPECT_EQ(multi.ring->bw_inter, 48.0);
  // NVLSTree: one NVLS head per GPU, each with its own NIC, at the NIC's speed.
  ASSERT_TRUE(multi.nvls.has_value());
  EXPECT_EQ(multi.nvls->channels, 8);
  EXPECT_EQ(multi.nvls->bw_inter, 48.0);
  EXPECT_EQ(multi.tree->bw_intra, 48.0);  // already the top of the array: nothing to raise
  const NcclModelInput pcie = graphs("pcie-2gpu");  // Gen3 x16 = 12 GB/s in NCCL's terms
  EXPECT_EQ(pcie.ring->channels, 1);
  EXPECT_EQ(pcie.ring->bw_intra, 12.0);
  EXPECT_FALSE(pcie.ring->nvlink);
  EXPECT_FALSE(pcie.ll128);
}

// Across nodes NCCL's tree search raises its intra-node speed towards twice the inter-node one
// while the GPU's links carry it (search.cc pass 2); on two nodes the model reads it, and Tree
// beats Ring at large sizes. The Snellius 2 x 4 H100 table (4 NDR200 NICs a node) measures 156
// GB/s busbw at 8 GiB, above the 100 GB/s that any ring over those NICs can carry.
TEST(NcclModel, TwoNodeTreeGraphRaisesItsIntraSpeed) {
  const Topology t = load_topology("h100-4gpu-2node-ndr200");
  const NcclModelInput in = nccl_model_input(t, Communicator::from_topology(t), NcclVersion::k2_22);
  EXPECT_EQ(in.ring->channels, 4);
  EXPECT_EQ(in.ring->bw_intra, 24.0);
  EXPECT_EQ(in.tree->bw_inter, 24.0);
  EXPECT_EQ(in.tree->bw_intra, 48.0);  // 30, 40, 42, 45, 48: stops at 2 x 24
  const NcclModel m(in);
  const auto big = m.best(Collective::kAllReduce, std::uint64_t{8} << 30);
  ASSERT_TRUE(big.has_value());
  EXPECT_EQ(big->algo, NcclAlgo::kTree);
  EXPECT_EQ(big->proto, Protocol::kSimple);

  // The GPU's links bound the raise: 16 channels (one per 100G NIC, 12 each) over an A100's
  // 12 x 20 GB/s of NVLink carry 15 a channel, not 24.
  const Topology a = load_topology("a100-2node-roce");
  const NcclModelInput ain = nccl_model_input(a, Communicator::from_topology(a), NcclVersion::k2_30);
  EXPECT_EQ(ain.tree->channels, 16);
  EXPECT_EQ(ain.tree->bw_inter, 12.0);
  EXPECT_EQ(ain.tree->bw_intra, 15.0);

  // One node: no network, nothing raised.
  const Topology h = load_topology("dgx-h100");
  const NcclModelInput hin = nccl_model_input(h, Communicator::from_topology(h), NcclVersion::k2_30);
  EXPECT_EQ(hin.tree->bw_intra, hin.ring->bw_intra);
}

// The same DGX H100 numbers through the topology path give the §1.10 selection.
TEST(NcclModel, TopologyPathGivesTheReferenceSelection) {
  const Topology t = load_topology("dgx-h100");
  const NcclModel m(nccl_model_input(t, Communicator::from_topology(t), NcclVersion::k2_30));
  EXPECT_EQ(m.best(Collective::kAllReduce, 8)->algo, NcclAlgo::kRing);
  EXPECT_EQ(m.best(Collective::kAllReduce, 512 << 20)->algo, NcclAlgo::kNvls);
  EXPECT_NEAR(m.best(Collective::kAllReduce, 512 << 20)->time_us, 2000, 50);
}

}  // namespace
}  // namespace collsim
