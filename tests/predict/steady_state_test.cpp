// Extending a long message along its steady state (predict/steady_state.hpp) must stay within
// kSteadyBound of simulating it in full, wherever it engages: every algorithm and protocol of
// the three collectives that loop over chunks, on one node, two nodes and Summit's mixed nodes.
// The links' bytes are counted, not timed, so they must come out exact.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <map>

#include "algorithms/generators/registry.hpp"
#include "predict/predict.hpp"
#include "predict/steady_state.hpp"
#include "topology/error.hpp"
#include "topology/loader.hpp"

namespace collsim {
namespace {

std::map<std::int32_t, std::uint64_t> bytes_by_link(const Result& r) {
  std::map<std::int32_t, std::uint64_t> m;
  for (const LinkUsage& u : r.links) m[u.link.value] = u.bytes;
  return m;
}

// `coll` by `algo`/`proto` on all of `topo`'s GPUs; the count is the test's.
Request on_all(const Topology& topo, Collective coll, const std::string& algo, Protocol proto,
               int channels) {
  Request r;
  r.collective = coll;
  r.algorithm = algo;
  r.protocol = proto;
  r.channels = channels;
  r.comm = Communicator::from_topology(topo);
  return r;
}

TEST(SteadyState, ExtendedRunsMatchTheFullSimulation) {
  int cases = 0, engaged = 0, exact = 0;
  double worst = 0;
  for (const auto& [config, nodes] :
       std::vector<std::pair<std::string, int>>{{"dgx-h100", 1}, {"h100-2node-ib", 2},
                                                {"summit", 2}}) {
    const Topology topo = load_topology(config, LoadOptions{nodes});
    for (Collective coll :
         {Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter}) {
      for (const std::string& algo : algorithms_for(coll)) {
        const AlgorithmInfo& info = find_algorithm(algo);
        for (Protocol proto : info.protocols) {
          Request r = on_all(topo, coll, algo, proto, 4);
          // The quantum of steady_state.hpp: NCCL channels x chunk, twice for the two trees,
          // times the blocks a channel's span is cut into (per rank block when blocked).
          Request sized = r;
          sized.count = 1 << 30;  // a size whose chunking is the protocol's full one
          const Chunking k = chunking(sized);
          std::uint64_t quantum =
              static_cast<std::uint64_t>(r.channels) * (k.chunk_bytes / element_size(r.dtype));
          if (info.family == Family::kTree) {
            quantum *= 2;
          } else if (!is_blocked(coll)) {
            quantum *= static_cast<std::uint64_t>(
                is_nvls(info.family) ? r.comm.size() / r.comm.node_count() : r.comm.size());
          }
          // 120 quanta and a remainder that is not a whole number of them: room for the runs
          // of a = 4 (4 + 8 + 12 + 16 quanta) and a = 8 (24 + 32 more), within the 120
          // min_gain 1 allows.
          r.count = 120 * quantum + 12345;
          const std::string what = fmt::format("{} x{} {} {} {}", config, nodes, to_string(coll),
                                               algo, to_string(proto));
          SteadyState how;
          std::optional<Result> ext;
          try {
            ext = simulate_steady(r, topo, SimOptions{}, &how, 1);
          } catch (const RequestError&) {
            continue;  // NVLS on a cluster whose switches do not reduce
          }
          ++cases;
          // Pipelined trees are always simulated in full (steady_state.cpp says why).
          if (info.family == Family::kTree) {
            EXPECT_FALSE(ext) << what;
          }
          if (!ext) continue;
          ++engaged;
          if (chunking(r).chunk_bytes == k.chunk_bytes) {  // NVLS and tree LL128 cut finer
            EXPECT_EQ(how.quantum, quantum) << what;
            EXPECT_EQ(how.quanta, 120u) << what;
          }
          const Result full = simulate(plan(r), topo, SimOptions{});
          const double err =
              std::abs(static_cast<double>(ext->total.ps() - full.total.ps())) /
              static_cast<double>(full.total.ps());
          EXPECT_LE(err, kSteadyBound) << what << ": " << ext->total.ps() << " vs "
                                       << full.total.ps() << " ps";
          ASSERT_EQ(ext->rank_finish.size(), full.rank_finish.size()) << what;
          for (std::size_t i = 0; i < full.rank_finish.size(); ++i) {
            const double e =
                std::abs(static_cast<double>(ext->rank_finish[i].ps() - full.rank_finish[i].ps()));
            EXPECT_LE(e, kSteadyBound * static_cast<double>(full.total.ps()))
                << what << " rank " << i;
          }
          EXPECT_EQ(bytes_by_link(*ext), bytes_by_link(full)) << what;
          exact += ext->total == full.total;
          worst = std::max(worst, err);
        }
      }
    }
  }
  EXPECT_GT(engaged, cases / 2) << "the shortcut should be the common case";
  std::cout << fmt::format(
      "steady state: {} cases, extended in {} ({} to the picosecond), worst error {:.2e}\n",
      cases, engaged, exact, worst);
}

// NCCL's uneven division among channels (Request::split): every part loses the same loops, the
// smallest part bounds the quanta, and the extended run still matches the full one.
TEST(SteadyState, UnevenChannelSplitsExtendExactly) {
  const Topology topo = load_topology("h100-2node-ib", LoadOptions{2});
  for (const auto& [coll, proto] : std::vector<std::pair<Collective, Protocol>>{
           {Collective::kAllReduce, Protocol::kLL128}, {Collective::kAllGather, Protocol::kSimple}}) {
    Request r = on_all(topo, coll, "ring", proto, 4);
    Request sized = r;
    sized.count = 1 << 30;
    // A channel's quantum: its chunk, cut into a block per rank for AllReduce.
    std::uint64_t per_channel = chunking(sized).chunk_bytes / element_size(r.dtype);
    if (!is_blocked(coll)) per_channel *= static_cast<std::uint64_t>(r.comm.size());
    // Channel 0 a little wider, two middle channels, and a last one 2.5 times as wide (NCCL's
    // overflow gives the last channel the rest), none a whole number of quanta.
    r.split = {130 * per_channel + 7, 120 * per_channel + 5, 300 * per_channel + 11, 2};
    r.count = r.split.total();
    const std::string what = fmt::format("{} {}", to_string(coll), to_string(proto));
    SteadyState how;
    const std::optional<Result> ext = simulate_steady(r, topo, SimOptions{}, &how, 1);
    ASSERT_TRUE(ext) << what;
    EXPECT_EQ(how.quanta, 120u) << what;
    const Result full = simulate(plan(r), topo, SimOptions{});
    const double err = std::abs(static_cast<double>(ext->total.ps() - full.total.ps())) /
                       static_cast<double>(full.total.ps());
    EXPECT_LE(err, kSteadyBound) << what;
    EXPECT_EQ(bytes_by_link(*ext), bytes_by_link(full)) << what;
  }
}

// predict() names the shortcut, and a run that has to beat a time it cannot beat is given up
// without a full simulation.
TEST(SteadyState, PredictNamesItAndGivesUp) {
  const Topology topo = load_topology("dgx-h100");
  const CostParams costs = cost_params(topo);
  Request r = on_all(topo, Collective::kAllReduce, "ring", Protocol::kSimple, 16);
  r.count = (std::uint64_t{1} << 40) / 4;  // 1 TiB
  const std::optional<Prediction> p = predict(r, topo, costs, Model::kMaxMin);
  ASSERT_TRUE(p);
  EXPECT_NE(p->detail.find("steady state"), std::string::npos) << p->detail;
  // 1 TiB over 8 GPUs at NVLink's 450 GB/s cannot finish in a millisecond.
  PredictOptions o;
  o.faster_than = Time::from_ps(1'000'000'000);
  std::string why;
  EXPECT_FALSE(predict(r, topo, costs, Model::kMaxMin, o, &why));
  EXPECT_NE(why.find("ends after"), std::string::npos) << why;
  // Off, the whole message is simulated; a shorter one shows the two agree.
  r.count = (std::uint64_t{1} << 36) / 4;  // 64 GiB: 256 steps of 256 MiB
  PredictOptions full;
  full.steady_state = false;
  const std::optional<Prediction> a = predict(r, topo, costs, Model::kMaxMin);
  const std::optional<Prediction> b = predict(r, topo, costs, Model::kMaxMin, full);
  ASSERT_TRUE(a && b);
  EXPECT_NE(a->detail.find("steady state"), std::string::npos) << a->detail;
  EXPECT_EQ(b->detail.find("steady state"), std::string::npos) << b->detail;
  EXPECT_LE(std::abs(a->time.seconds() - b->time.seconds()), kSteadyBound * b->time.seconds());
}

// A tree that only has to beat a known time runs a few short, validated loops first; nothing is
// extended, but the long request repeats their loops, so predict() generates it without
// validating its millions of ops again (1 TiB on dgx-h100: the tree alternatives took 1.5 s of
// validation before they were given up), and still gives it up, or times it, as before.
TEST(SteadyState, TreesGivenUpAreValidatedOnTheirShortRuns) {
  const Topology topo = load_topology("dgx-h100");
  Request r = on_all(topo, Collective::kAllReduce, "dbtree", Protocol::kLL128, 8);
  r.count = (std::uint64_t{1} << 34) / 4;  // 16 GiB
  SimOptions o;
  o.give_up_after = Time::from_ps(std::int64_t{1} << 50);  // far beyond: nothing gives up
  SteadyState how;
  EXPECT_FALSE(simulate_steady(r, topo, o, &how, 1));
  EXPECT_TRUE(how.validated);
  // Without a bound the tree is not run at all here: predict() plans and validates it.
  SteadyState none;
  EXPECT_FALSE(simulate_steady(r, topo, SimOptions{}, &none, 1));
  EXPECT_FALSE(none.validated);
  // Generated unvalidated or planned, the same run.
  const CostParams costs = default_cost_params(topo);
  PredictOptions bound;
  bound.faster_than = Time::from_ps(std::int64_t{1} << 50);
  const std::optional<Prediction> a = predict(r, topo, costs, Model::kMaxMin, bound);
  const std::optional<Prediction> b = predict(r, topo, costs, Model::kMaxMin);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->time, b->time);
}

}  // namespace
}  // namespace collsim
