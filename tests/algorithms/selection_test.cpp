// Automatic selection: what --algo/--proto allow (NCCL_ALGO / NCCL_PROTO syntax), the two
// policies, and the crossover sentences.
#include "algorithms/models/selection.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "algorithms/models/nccl_channels.hpp"
#include "topology/error.hpp"

namespace collsim {
namespace {

using P = Protocol;

std::string error_of(std::string_view algo, std::string_view proto) {
  try {
    parse_algo_choice(algo, proto);
  } catch (const RequestError& e) {
    return e.what();
  }
  return "";
}

TEST(Selection, AutoAllowsEverything) {
  const AlgoChoice c = parse_algo_choice("auto", "auto");
  EXPECT_TRUE(c.algo_auto);
  EXPECT_TRUE(c.proto_auto);
  EXPECT_FALSE(c.fixed());
  EXPECT_EQ(c.protocols, all_protocols());
  EXPECT_EQ(c.algorithms.front(), "ring");
  EXPECT_TRUE(c.nccl.algos[static_cast<int>(NcclAlgo::kNvls)]);
}

TEST(Selection, OneCollsimNameIsThatAlgorithm) {
  // "tree" in any case is NCCL's Tree, collsim's dbtree, alone as in a list: one name, one
  // algorithm. collsim's own plain tree is "bintree".
  const AlgoChoice c = parse_algo_choice("tree", "ll128");
  EXPECT_TRUE(c.fixed());
  EXPECT_EQ(c.algorithms, std::vector<std::string>{"dbtree"});
  EXPECT_EQ(c.protocols, std::vector<Protocol>{P::kLL128});
  EXPECT_TRUE(c.nccl.algos[static_cast<int>(NcclAlgo::kTree)]);
  EXPECT_EQ(parse_algo_choice("bintree", "ll").algorithms, std::vector<std::string>{"bintree"});
}

TEST(Selection, EveryAliasNamesExactlyOneAlgorithm) {
  for (const char* tree : {"tree", "Tree", "TREE", "dbtree"}) {
    EXPECT_EQ(parse_algo_choice(tree, "ll").algorithms, std::vector<std::string>{"dbtree"}) << tree;
  }
  for (const char* nvls_tree : {"nvls_tree", "NVLSTree", "nvlstree"}) {
    EXPECT_EQ(parse_algo_choice(nvls_tree, "simple").algorithms,
              std::vector<std::string>{"nvls_tree"})
        << nvls_tree;
  }
  EXPECT_EQ(parse_algo_choice("CollNetDirect", "simple").algorithms,
            std::vector<std::string>{"collnet_direct"});
}

TEST(Selection, ExclusionListsExclude) {
  // Every name in an exclusion list removes the one algorithm it names.
  const AlgoChoice c = parse_algo_choice("^ring,tree,ring2d,rhd", "auto");
  for (const char* gone : {"ring", "dbtree", "ring2d", "rhd"}) {
    EXPECT_EQ(std::count(c.algorithms.begin(), c.algorithms.end(), gone), 0) << gone;
  }
  EXPECT_EQ(std::count(c.algorithms.begin(), c.algorithms.end(), "bintree"), 1);
  const AlgoChoice all_trees = parse_algo_choice("^tree,bintree", "auto");
  EXPECT_EQ(std::count(all_trees.algorithms.begin(), all_trees.algorithms.end(), "bintree"), 0);
  EXPECT_EQ(std::count(all_trees.algorithms.begin(), all_trees.algorithms.end(), "dbtree"), 0);
}

TEST(Selection, ListsHaveNcclMeaning) {
  // NCCL_ALGO=ring,tree: Ring and Tree, i.e. collsim's ring and dbtree.
  AlgoChoice c = parse_algo_choice("ring,tree", "auto");
  EXPECT_EQ(c.algorithms, (std::vector<std::string>{"ring", "dbtree"}));
  EXPECT_TRUE(c.nccl.algos[static_cast<int>(NcclAlgo::kRing)]);
  EXPECT_TRUE(c.nccl.algos[static_cast<int>(NcclAlgo::kTree)]);
  EXPECT_FALSE(c.nccl.algos[static_cast<int>(NcclAlgo::kNvls)]);
  // A single NCCL spelling that is not one of collsim's names.
  EXPECT_EQ(parse_algo_choice("Tree", "auto").algorithms, std::vector<std::string>{"dbtree"});
  EXPECT_EQ(parse_algo_choice("NVLS", "simple").algorithms, std::vector<std::string>{"nvls"});
  // Negation: everything but NCCL's Tree.
  c = parse_algo_choice("^tree", "^LL128");
  EXPECT_EQ(std::count(c.algorithms.begin(), c.algorithms.end(), "dbtree"), 0);
  EXPECT_EQ(std::count(c.algorithms.begin(), c.algorithms.end(), "ring"), 1);
  EXPECT_EQ(c.protocols, (std::vector<Protocol>{P::kLL, P::kSimple}));
  EXPECT_FALSE(c.nccl.protos[static_cast<int>(P::kLL128)]);
  EXPECT_TRUE(c.proto_auto);
}

TEST(Selection, BadListsAreErrors) {
  EXPECT_EQ(
      error_of("ring,trea", "auto"),
      "--algo: unknown algorithm \"trea\": expected one of ring, bintree, dbtree, ring2d, rhd, "
      "direct, binomial, nvls, nvls_tree, pat, collnet_direct, collnet_chain, "
      "tree, collnetdirect, collnetchain, nvlstree; did you mean \"tree\"?");
  EXPECT_EQ(error_of("ring,,tree", "auto"), "--algo: empty name in \"ring,,tree\"");
  EXPECT_EQ(error_of("auto", "^ll,ll128,simple"),
            "--proto \"^ll,ll128,simple\" leaves no protocol");
}

TEST(Selection, CandidatesOfACollective) {
  const AlgoChoice all = parse_algo_choice("auto", "ll");
  const auto ag = candidates(Collective::kAllGather, all);
  std::vector<std::string> names;
  for (const Candidate& c : ag) names.push_back(c.algorithm);
  // nvls and pat run with Simple only: not LL candidates.
  EXPECT_EQ(names, (std::vector<std::string>{"ring", "ring2d", "rhd", "direct"}));
  const auto simple = candidates(Collective::kAllGather, parse_algo_choice("auto", "simple"));
  ASSERT_GE(simple.size(), 3u);
  EXPECT_EQ(simple[simple.size() - 3], (Candidate{"nvls", Protocol::kSimple}));
  EXPECT_EQ(simple[simple.size() - 2], (Candidate{"pat", Protocol::kSimple}));
  EXPECT_EQ(simple.back(), (Candidate{"collnet_direct", Protocol::kSimple}));
  try {
    candidates(Collective::kAllToAll, parse_algo_choice("ring", "auto"));
    FAIL();
  } catch (const RequestError& e) {
    EXPECT_STREQ(e.what(),
                 "algorithm \"ring\" does not implement alltoall; algorithms that do: direct");
  }
  // CollNet is simulated (where the fabric runs it): Simple only, as NCCL.
  const std::vector<Candidate> collnet =
      candidates(Collective::kAllReduce, parse_algo_choice("collnet_direct", "auto"));
  ASSERT_EQ(collnet.size(), 1u);
  EXPECT_EQ(collnet.front().algorithm, "collnet_direct");
  EXPECT_EQ(collnet.front().protocol, P::kSimple);
}

TEST(Selection, BestIsTheArgMinAndTiesKeepTheFirst) {
  const std::vector<Candidate> cs = {{"ring", P::kLL}, {"dbtree", P::kLL}, {"rhd", P::kLL}};
  std::map<std::string, std::optional<double>> t = {{"ring", 12.0}, {"dbtree", 9.0}, {"rhd", 9.0}};
  auto cost = [&](const Candidate& c) { return t[c.algorithm]; };
  const auto s = select_best(cs, cost);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->chosen, (Candidate{"dbtree", P::kLL}));
  EXPECT_EQ(s->time_us, 9.0);
  t["dbtree"] = std::nullopt;  // a candidate the model cannot cost is skipped
  EXPECT_EQ(select_best(cs, cost)->chosen.algorithm, "rhd");
  for (auto& [k, v] : t) v = std::nullopt;
  EXPECT_FALSE(select_best(cs, cost));
}

NcclModel dgx_h100() {
  // NCCL 2.30 on a DGX H100 (docs/nccl-model.md §1.10): ring/tree 12 x 30, NVLS 8 x 40/60.
  NcclModelInput in;
  in.sm = 90;
  in.nodes = 1;
  in.ranks = 8;
  in.ring = in.tree = NcclGraph{12, 30.0, 30.0};
  in.nvls = NcclGraph{8, 40.0, 60.0};
  in.runtime_channels = 24;
  return NcclModel(in);
}

TEST(Selection, NcclPolicyFollowsNcclsArgMin) {
  const NcclModel m = dgx_h100();
  const AlgoChoice all = parse_algo_choice("auto", "auto");
  // §1.10: Ring/LL from 8 B, NVLS/Simple from about 1.18 MB.
  Selection s = select_nccl(m, Collective::kAllReduce, 1024, all);
  EXPECT_EQ(s.chosen, (Candidate{"ring", P::kLL}));
  EXPECT_EQ(s.nccl_pick, "Ring/LL");
  EXPECT_TRUE(s.note.empty());
  EXPECT_NEAR(s.time_us, 15.0 + 1024 / (1000 * 80.64), 0.01);
  // collsim simulates NVLS as NCCL picks it (the switch is an actor of the schedule).
  s = select_nccl(m, Collective::kAllReduce, 32 << 20, all);
  EXPECT_EQ(s.nccl_pick, "NVLS/Simple");
  EXPECT_EQ(s.chosen, (Candidate{"nvls", P::kSimple}));
  EXPECT_TRUE(s.note.empty());
  // NCCL_PROTO=^LL: the filter applies.
  s = select_nccl(m, Collective::kAllReduce, 1024, parse_algo_choice("auto", "^LL"));
  EXPECT_NE(s.chosen.protocol, P::kLL);
}

// NCCL runs NVLS and NVLSTree only for what the switch can reduce (ncclNvlsSupported): sum, and
// min/max on integer and 16-bit floating types; never avg or prod. AllGather reduces nothing.
TEST(Selection, NvlsOnlyWhereTheSwitchReducesTheOperatorAndType) {
  EXPECT_TRUE(nccl_nvls_reduces(ReduceOp::kSum, DataType::kF32));
  EXPECT_TRUE(nccl_nvls_reduces(ReduceOp::kSum, DataType::kBf16));
  EXPECT_TRUE(nccl_nvls_reduces(ReduceOp::kMax, DataType::kF16));
  EXPECT_TRUE(nccl_nvls_reduces(ReduceOp::kMin, DataType::kI32));
  EXPECT_FALSE(nccl_nvls_reduces(ReduceOp::kMax, DataType::kF32));
  EXPECT_FALSE(nccl_nvls_reduces(ReduceOp::kAvg, DataType::kBf16));
  EXPECT_FALSE(nccl_nvls_reduces(ReduceOp::kProd, DataType::kF32));
  EXPECT_FALSE(nccl_nvls_reduces(ReduceOp::kSum, DataType::kU8));
  const NcclModel m = dgx_h100();
  const AlgoChoice all = parse_algo_choice("auto", "auto");
  const std::uint64_t big = std::uint64_t{32} << 20;
  EXPECT_EQ(
      select_nccl(m, Collective::kAllReduce, big, all, {ReduceOp::kSum, DataType::kBf16}).nccl_pick,
      "NVLS/Simple");
  const Selection avg =
      select_nccl(m, Collective::kAllReduce, big, all, {ReduceOp::kAvg, DataType::kBf16});
  EXPECT_NE(avg.chosen.algorithm, "nvls");
  EXPECT_EQ(avg.nccl_pick.rfind("Ring/", 0), 0u) << avg.nccl_pick;
  // Forced, it is an error that says why.
  try {
    select_nccl(m, Collective::kAllReduce, big, parse_algo_choice("nvls", "auto"),
                {ReduceOp::kProd, DataType::kF32});
    ADD_FAILURE() << "NVLS with prod was accepted";
  } catch (const RequestError& e) {
    EXPECT_NE(std::string(e.what()).find("do not reduce prod on f32"), std::string::npos)
        << e.what();
  }
}

TEST(Selection, NcclPolicyForPointToPointAndBarrier) {
  const NcclModel m = dgx_h100();
  const AlgoChoice all = parse_algo_choice("auto", "auto");
  // NCCL 2.30: LL up to 16 KiB a peer (an AllToAll of 128 KiB over 8 ranks), Simple above.
  Selection s = select_nccl(m, Collective::kAllToAll, 128 << 10, all);
  EXPECT_EQ(s.chosen, (Candidate{"direct", P::kLL}));
  EXPECT_EQ(s.nccl_pick, "P2P/LL");
  s = select_nccl(m, Collective::kAllToAll, 256 << 10, all);
  EXPECT_EQ(s.chosen, (Candidate{"direct", P::kSimple}));
  s = select_nccl(m, Collective::kSendRecv, 32 << 10, all);
  EXPECT_EQ(s.chosen, (Candidate{"direct", P::kSimple}));
  // Before 2.29: up to p2pnChannelsPerPeer x 16 KiB, 512 KiB a peer on 32 channels a peer.
  NcclModelInput old = m.input();
  old.release = NcclRelease{28, 9};
  old.p2p_per_peer = 32;
  s = select_nccl(NcclModel(old), Collective::kAllToAll, 4 << 20, all);
  EXPECT_EQ(s.chosen, (Candidate{"direct", P::kLL}));
  s = select_nccl(NcclModel(old), Collective::kAllToAll, 8 << 20, all);
  EXPECT_EQ(s.chosen, (Candidate{"direct", P::kSimple}));
  s = select_nccl(m, Collective::kAllToAll, 64 << 20, all);
  EXPECT_EQ(s.chosen, (Candidate{"direct", P::kSimple}));
  EXPECT_THROW(select_nccl(m, Collective::kBarrier, 0, all), RequestError);
  // NICs that do not deliver in order (EFA on p4d) leave Simple only, point-to-point too.
  NcclModelInput in = m.input();
  in.ll = in.ll128 = false;
  s = select_nccl(NcclModel(in), Collective::kAllToAll, 1 << 20, all);
  EXPECT_EQ(s.chosen, (Candidate{"direct", P::kSimple}));
  EXPECT_EQ(s.nccl_pick, "P2P/Simple");
}

TEST(Selection, CrossoversInWords) {
  const std::vector<SizedWinner> w = {{256 << 10, "ring/ll"},
                                      {512 << 10, "ring/ll"},
                                      {1 << 20, "dbtree/ll128"},
                                      {16 << 20, "dbtree/ll128"},
                                      {32 << 20, "ring/simple"}};
  EXPECT_EQ(describe_best_ranges(w),
            "ring/ll is best up to 512 KiB; dbtree/ll128 from 1 MiB to 16 MiB; ring/simple from "
            "32 MiB");
  EXPECT_EQ(describe_crossovers(w),
            (std::vector<std::string>{"ring/ll beats dbtree/ll128 below 1 MiB",
                                      "dbtree/ll128 beats ring/simple below 32 MiB"}));
  EXPECT_EQ(describe_best_ranges({{8, "rhd/ll"}, {16, "rhd/ll"}}), "rhd/ll is best at every size");
  EXPECT_TRUE(describe_crossovers({{8, "rhd/ll"}}).empty());
}

TEST(Selection, HumanBytes) {
  EXPECT_EQ(human_bytes(0), "0 B");
  EXPECT_EQ(human_bytes(512), "512 B");
  EXPECT_EQ(human_bytes(64 << 10), "64 KiB");
  EXPECT_EQ(human_bytes(3 << 19), "1.5 MiB");
  EXPECT_EQ(human_bytes(8ull << 30), "8 GiB");
  EXPECT_EQ(human_bytes(1000), "1000 B");
}

TEST(Selection, Policies) {
  EXPECT_EQ(parse_select_policy("best"), SelectPolicy::kBest);
  EXPECT_EQ(parse_select_policy("nccl"), SelectPolicy::kNccl);
  EXPECT_THROW(parse_select_policy("fast"), RequestError);
}

// NCCL launches fewer channels than comm->nChannels while a size cannot give each thread its
// share (enqueue.cc topoGetAlgoInfo); the counts are worked by hand from its thresholds.
TEST(Selection, NcclLaunchesFewerChannelsForSmallSizes) {
  // Ring LL on 8 ranks: 512 threads x 8 B x 8 ranks = 32 KiB per channel.
  EXPECT_EQ(nccl_launched_channels("ring", Protocol::kLL, 8, 64, 24), 1);
  EXPECT_EQ(nccl_launched_channels("ring", Protocol::kLL, 8, 256 << 10, 24), 8);
  EXPECT_EQ(nccl_launched_channels("ring", Protocol::kLL, 8, 1 << 20, 24), 24);
  // Tree LL: 4 KiB per channel, whatever the rank count; LL128: 640 x 8 = 5 KiB.
  EXPECT_EQ(nccl_launched_channels("dbtree", Protocol::kLL, 32, 8192, 16), 2);
  EXPECT_EQ(nccl_launched_channels("dbtree", Protocol::kLL128, 32, 5120 * 3, 16), 3);
  // Simple: 512 x 64 B = 32 KiB per channel.
  EXPECT_EQ(nccl_launched_channels("ring", Protocol::kSimple, 8, 4 << 20, 64), 64);
  EXPECT_EQ(nccl_launched_channels("ring", Protocol::kSimple, 8, 65536, 64), 2);
  // collsim's own algorithms keep their count; NVLS and NVLSTree run on the communicator's
  // NVLS channels whatever the size (the caller passes comm->nvlsChannels).
  EXPECT_EQ(nccl_launched_channels("bintree", Protocol::kLL, 8, 64, 24), 24);
  EXPECT_EQ(nccl_launched_channels("nvls", Protocol::kSimple, 8, 64, 16), 16);
  EXPECT_EQ(nccl_launched_channels("nvls_tree", Protocol::kSimple, 16, 1 << 30, 16), 16);
}

}  // namespace
}  // namespace collsim
