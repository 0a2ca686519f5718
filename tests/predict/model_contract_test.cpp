// The contract between the four models of predict() (predict/predict.hpp), run over the same
// requests on the presets:
//  - where a closed form says it is exact, it equals the contention-free simulation to the
//    picosecond, with each preset's own costs (launch, hop latencies, link efficiency, channel
//    caps, reductions), at one channel and at NCCL's channel count;
//  - every collsim model honours the costs it is given: an overlay that adds 500 us of launch
//    moves each of them by exactly 500 us; NCCL's model, which uses NCCL's constants, does not
//    move;
//  - the contention-free model never books a link beyond its rate (its channels split each
//    link evenly; on a mesh, where channels spread over several links, it is therefore slower
//    than the max-min simulation, which is why the two are not required to agree);
//  - calibrate's row prediction is predict() itself.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "algorithms/generators/registry.hpp"
#include "algorithms/models/nccl_model.hpp"
#include "algorithms/models/selection.hpp"
#include "calibrate/row_model.hpp"
#include "predict/predict.hpp"
#include "topology/loader.hpp"

namespace collsim {
namespace {

struct Cluster {
  Topology topo;
  CostParams costs;
};

Cluster load(const std::string& preset, const std::vector<std::string>& overlays = {}) {
  LoadOptions o;
  o.cost_files = overlays;
  Topology t = load_topology(preset, o);
  CostParams c = cost_params(t);
  return {std::move(t), c};
}

Request request(const Topology& topo, Collective c, const std::string& algo, Protocol p,
                std::uint64_t bytes, int channels) {
  Request r;
  r.collective = c;
  r.algorithm = algo;
  r.protocol = p;
  r.channels = channels;
  r.comm = Communicator::from_topology(topo);
  r.count = count_for_bytes(c, Bytes(bytes), r.dtype, r.comm.size());
  return r;
}

int nccl_channels(const Topology& topo) {
  return std::clamp(nccl_model_input(topo, Communicator::from_topology(topo), NcclVersion::k2_30)
                        .runtime_channels,
                    1, 64);
}

const std::vector<std::string> kPresets = {"h100-nvlink-4", "dgx-h100", "dgx-a100", "pcie-2gpu",
                                           "h100-2node-ib"};

TEST(ModelContract, ExactClosedFormsEqualTheContentionFreeSimulation) {
  int exact = 0;
  for (const std::string& preset : kPresets) {
    const Cluster cl = load(preset);
    for (int channels : {1, nccl_channels(cl.topo)}) {
      for (const AlgorithmInfo& a : algorithms()) {
        if (a.closed_form == nullptr) continue;
        for (Collective c : a.collectives) {
          for (Protocol p : a.protocols) {
            for (std::uint64_t bytes :
                 {std::uint64_t{4096}, std::uint64_t{3} << 20, std::uint64_t{64} << 20}) {
              const Request r = request(cl.topo, c, a.name, p, bytes, channels);
              if (r.count == 0) continue;
              std::string why;
              const auto cf = predict(r, cl.topo, cl.costs, Model::kClosedForm, {}, &why);
              if (!cf.has_value()) {
                // Hardware that cannot run it: NVLS without a reducing NVSwitch or across nodes
                // without SHARP, CollNet without SHARP (no preset here has it) or on one node.
                EXPECT_TRUE(is_nvls(a.family) || is_collnet(a.family))
                    << a.name << " on " << preset << ": " << why;
                continue;
              }
              if (!cf->exact) continue;
              ++exact;
              const auto sim = predict(r, cl.topo, cl.costs, Model::kContentionFree);
              ASSERT_TRUE(sim.has_value());
              EXPECT_EQ(cf->time.ps(), sim->time.ps())
                  << preset << " " << a.name << " " << to_string(c) << " " << to_string(p) << " "
                  << bytes << " B, " << channels << " channels: " << cf->detail;
            }
          }
        }
      }
    }
  }
  // The claim must cover real ground: rings of every reduction-free and reducing kind, chains.
  EXPECT_GT(exact, 200);
}

class OverlayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ =
        std::filesystem::temp_directory_path() /
        fmt::format("collsim-contract-{}.yaml", ::testing::UnitTest::GetInstance()->random_seed());
    std::ofstream(path_) << "costs:\n  protocols:\n    simple:\n      launch: 500us\n";
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::filesystem::path path_;
};

TEST_F(OverlayTest, EveryCollsimModelHonoursACostsOverlayAndNcclsDoesNot) {
  const Cluster base = load("h100-nvlink-4");
  const Cluster over = load("h100-nvlink-4", {path_.string()});
  const Time before = base.costs.protocol(Protocol::kSimple).launch;
  ASSERT_EQ(over.costs.protocol(Protocol::kSimple).launch, us(500));
  const Request r = request(base.topo, Collective::kAllReduce, "ring", Protocol::kSimple,
                            std::uint64_t{256} << 20, nccl_channels(base.topo));
  const NcclModel nccl(nccl_model_input(base.topo, r.comm, NcclVersion::k2_30));
  PredictOptions o;
  o.nccl = &nccl;
  for (Model m : all_models()) {
    const auto a = predict(r, base.topo, base.costs, m, o);
    const auto b = predict(r, over.topo, over.costs, m, o);
    ASSERT_TRUE(a && b) << to_string(m);
    const Time shift = m == Model::kNccl ? Time() : us(500) - before;
    EXPECT_EQ((b->time - a->time).ps(), shift.ps()) << to_string(m);
  }
}

// nvls's form is approximate (estimate.cpp): it must still track the simulation of the switch
// within 2 % from launch-bound to bandwidth-bound sizes, for each collective it runs (measured
// 2026-11-26 with the preset's default costs on 24 channels: within 0.01 % at 8 KiB and 1 MiB and
// for AllGather at every size; 1.5 % fast for AllReduce and ReduceScatter at 16 MiB and 0.15 % at
// 1 GiB, where the switch's streams and the GPUs' FIFOs hold each other up).
TEST(ModelContract, NvlsClosedFormTracksTheSimulatedSwitch) {
  const Cluster cl = load("dgx-h100");
  const int channels = nccl_channels(cl.topo);
  for (Collective c :
       {Collective::kAllReduce, Collective::kReduceScatter, Collective::kAllGather}) {
    for (std::uint64_t bytes : {std::uint64_t{8} << 10, std::uint64_t{1} << 20,
                                std::uint64_t{16} << 20, std::uint64_t{1} << 30}) {
      const Request r = request(cl.topo, c, "nvls", Protocol::kSimple, bytes, channels);
      const auto cf = predict(r, cl.topo, cl.costs, Model::kClosedForm);
      const auto sim = predict(r, cl.topo, cl.costs, Model::kContentionFree);
      ASSERT_TRUE(cf.has_value() && sim.has_value());
      EXPECT_FALSE(cf->exact);
      EXPECT_NEAR(cf->time.us() / sim->time.us(), 1.0, 0.02)
          << to_string(c) << " " << bytes << " B: " << cf->time.us() << " vs " << sim->time.us();
    }
  }
}

// nvls_tree's form is coarser (estimate.cpp): the tree's interior nodes and the switch meet in
// ways it does not follow. Measured 2026-11-26 on h100-2node-ib: 3.7 to 11.9 % slow on 2 nodes,
// 0.3 to 10.4 % fast on 4 and 8, from 1 MiB to 1 GiB; it must stay within 12.5 %.
TEST(ModelContract, NvlsTreeClosedFormTracksTheSimulation) {
  for (int nodes : {2, 4, 8}) {
    LoadOptions lo;
    lo.nodes = nodes;
    const Topology topo = load_topology("h100-2node-ib", lo);
    const CostParams costs = cost_params(topo);
    const int channels = nccl_channels(topo);
    for (std::uint64_t bytes : {std::uint64_t{1} << 20, std::uint64_t{16} << 20,
                                std::uint64_t{256} << 20, std::uint64_t{1} << 30}) {
      const Request r =
          request(topo, Collective::kAllReduce, "nvls_tree", Protocol::kSimple, bytes, channels);
      const auto cf = predict(r, topo, costs, Model::kClosedForm);
      const auto sim = predict(r, topo, costs, Model::kContentionFree);
      ASSERT_TRUE(cf.has_value() && sim.has_value());
      EXPECT_NEAR(cf->time.us() / sim->time.us(), 1.0, 0.125)
          << nodes << " nodes, " << bytes << " B: " << cf->time.us() << " vs " << sim->time.us();
    }
  }
}

// nvls across nodes (with SHARP) takes nvls_tree's form with the network's switches for the
// tree (estimate.cpp nvls_sharp). Measured 2026-11-30 on h100-16node-sharp, the same on 2, 4
// and 16 nodes: 11.4 % fast at 1 MiB, 0.4 % slow at 16 MiB, 10.4 % at 256 MiB, 4.6 % at 1 GiB;
// it must stay within nvls_tree's 12.5 %.
TEST(ModelContract, NvlsAcrossNodesClosedFormTracksTheSimulation) {
  for (int nodes : {2, 4}) {
    LoadOptions lo;
    lo.nodes = nodes;
    const Topology topo = load_topology("h100-16node-sharp", lo);
    const CostParams costs = cost_params(topo);
    for (std::uint64_t bytes : {std::uint64_t{1} << 20, std::uint64_t{16} << 20,
                                std::uint64_t{256} << 20, std::uint64_t{1} << 30}) {
      const Request r = request(topo, Collective::kAllReduce, "nvls", Protocol::kSimple, bytes, 16);
      const auto cf = predict(r, topo, costs, Model::kClosedForm);
      const auto sim = predict(r, topo, costs, Model::kContentionFree);
      ASSERT_TRUE(cf.has_value() && sim.has_value());
      EXPECT_NEAR(cf->time.us() / sim->time.us(), 1.0, 0.125)
          << nodes << " nodes, " << bytes << " B: " << cf->time.us() << " vs " << sim->time.us();
    }
  }
}

TEST(ModelContract, ContentionFreeNeverOverbooksALink) {
  // Each link is split among the request's channels, so no link can be busier than its rate.
  for (const std::string& preset : kPresets) {
    const Cluster cl = load(preset);
    const Request r = request(cl.topo, Collective::kAllReduce, "ring", Protocol::kSimple,
                              std::uint64_t{64} << 20, nccl_channels(cl.topo));
    Result res;
    PredictOptions o;
    o.result = &res;
    ASSERT_TRUE(predict(r, cl.topo, cl.costs, Model::kContentionFree, o));
    for (const LinkUsage& u : res.links) EXPECT_LE(u.busy_fraction, 1.0 + 1e-9) << preset;
  }
}

TEST(ModelContract, CalibrationPredictsRowsWithPredict) {
  const Cluster cl = load("dgx-h100");
  RowCase c;
  c.request = request(cl.topo, Collective::kAllGather, "ring", Protocol::kLL128,
                      std::uint64_t{1} << 20, nccl_channels(cl.topo));
  for (Model m : {Model::kMaxMin, Model::kContentionFree, Model::kClosedForm}) {
    EXPECT_EQ(predict_case(cl.topo, c, cl.costs, m)->ps(),
              predict(c.request, cl.topo, cl.costs, m)->time.ps())
        << to_string(m);
  }
}

TEST(ModelContract, NamesRoundTripAndUnknownNamesAreErrors) {
  for (Model m : all_models()) EXPECT_EQ(parse_model(to_string(m)), m);
  EXPECT_THROW(parse_model("alphabeta"), RequestError);
}

// collsim simulates every algorithm NCCL has; CollNet where the fabric runs it. Elsewhere a
// prediction says why not rather than substituting another algorithm.
TEST(ModelContract, CollNetWithoutSharpSaysWhy) {
  const Cluster cl = load("h100-2node-ib");
  const Request r = request(cl.topo, Collective::kAllReduce, "collnet_direct", Protocol::kSimple,
                            std::uint64_t{1} << 20, 16);
  std::string why;
  EXPECT_FALSE(predict(r, cl.topo, cl.costs, Model::kMaxMin, {}, &why));
  EXPECT_NE(why.find("h100-2node-ib says network.sharp: false"), std::string::npos) << why;
  for (NcclAlgo a :
       {NcclAlgo::kTree, NcclAlgo::kRing, NcclAlgo::kCollNetDirect, NcclAlgo::kCollNetChain,
        NcclAlgo::kNvls, NcclAlgo::kNvlsTree, NcclAlgo::kPat}) {
    EXPECT_TRUE(simulable(std::string(collsim_algorithm(a)))) << to_string(a);
  }
}

}  // namespace
}  // namespace collsim
