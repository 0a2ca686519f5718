// Stopping a simulation once it is known to be slower (SimOptions::give_up_after,
// PredictOptions::faster_than) must never change an answer: a run stops only when it ends after
// the given instant, a run that does not stop is the full run, and predict's faster alternative
// is the one a full simulation of every candidate gives.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "algorithms/generators/registry.hpp"
#include "predict/predictor.hpp"
#include "topology/loader.hpp"

namespace collsim {
namespace {

struct Case {
  std::string config;
  int nodes;
  std::uint64_t count;  // f32 elements
};

const std::vector<Case> kCases = {
    {"dgx-h100", 1, 2},          // 8 B: latency-bound, unequal segments
    {"dgx-h100", 1, 1 << 20},    // 4 MiB
    {"h100-2node-ib", 2, 1 << 18},
    {"summit", 4, 2},
};

Request request_for(const Topology& topo, std::uint64_t count) {
  Request r;
  r.collective = Collective::kAllReduce;
  r.count = count;
  r.channels = 4;
  r.comm = Communicator::from_topology(topo);
  return r;
}

Topology load(const Case& c) { return load_topology(c.config, LoadOptions{c.nodes}); }

// What `collsim predict` sets up by default: NCCL's pick (--select nccl) on NCCL's channels.
PredictSetup nccl_setup(const Topology& topo, const Case& c, Model model) {
  const Request q = request_for(topo, c.count);
  return {topo,
          q,
          parse_algo_choice("auto", "auto"),
          cost_params(topo),
          model,
          SelectPolicy::kNccl,
          nccl_model_input(topo, q.comm, NcclVersion::k2_30)};
}

// COLLSIM_THREADS set to `n` while it lives, then back to what it was (parallel.hpp).
class ThreadCount {
 public:
  explicit ThreadCount(const char* n) {
    if (const char* set = std::getenv("COLLSIM_THREADS")) before_ = set;
    ::setenv("COLLSIM_THREADS", n, 1);
  }
  ~ThreadCount() {
    if (before_) {
      ::setenv("COLLSIM_THREADS", before_->c_str(), 1);
    } else {
      ::unsetenv("COLLSIM_THREADS");
    }
  }
  ThreadCount(const ThreadCount&) = delete;
  ThreadCount& operator=(const ThreadCount&) = delete;

 private:
  std::optional<std::string> before_;
};

// The same faster alternative, or none.
void expect_same_alternative(const std::optional<Choice>& a, const std::optional<Choice>& b) {
  ASSERT_EQ(a.has_value(), b.has_value());
  if (!a) return;
  EXPECT_EQ(to_string(a->candidate), to_string(b->candidate));
  EXPECT_EQ(a->eval.time.ps(), b->eval.time.ps());
  EXPECT_EQ(a->note, b->note);
}

TEST(GiveUp, StopsExactlyWhenTheRunEndsLater) {
  for (const Case& c : kCases) {
    const Topology topo = load(c);
    for (const char* algo : {"ring", "dbtree"}) {
      for (Protocol proto : {Protocol::kLL, Protocol::kSimple}) {
        for (SimNetwork net : {SimNetwork::kMaxMin, SimNetwork::kContentionFree}) {
          Request r = request_for(topo, c.count);
          r.algorithm = algo;
          r.protocol = proto;
          const Schedule s = plan(r);
          SimOptions o;
          o.network = net;
          const Result full = simulate(s, topo, o);
          const std::int64_t t = full.total.ps();
          for (std::int64_t at : {std::int64_t{0}, t / 2, t - 1, t, t + 1}) {
            SCOPED_TRACE(fmt::format("{} x{} count {} {} {} {} give up after {} ps", c.config,
                                     c.nodes, c.count, algo, to_string(proto), to_string(net),
                                     at));
            o.give_up_after = Time::from_ps(at);
            const Result cut = simulate(s, topo, o);
            EXPECT_EQ(cut.gave_up, t > at);
            if (cut.gave_up) {
              EXPECT_GT(cut.total.ps(), at);
              EXPECT_LE(cut.total.ps(), t);
              if (full.lattice_cells > 0) {
                // The latency lattice (simulator/lattice.cpp) has no events to stop between:
                // it evaluates the whole run and gives it up on its exact time.
                EXPECT_EQ(cut.total.ps(), t);
                EXPECT_EQ(cut.events, 0u);
              } else {
                EXPECT_LT(cut.events, full.events);
              }
            } else {
              EXPECT_EQ(cut.total.ps(), t);
              EXPECT_EQ(cut.events, full.events);
              EXPECT_EQ(cut.rank_finish, full.rank_finish);
            }
          }
        }
      }
    }
  }
}

// Under max-min a run may give up before it starts, on a lower bound from its ops' bytes (the
// busiest link's wire bytes over its capacity, the busiest stream's over its channel cap with a
// step overhead per piece it sends): that bound must never exceed the full run's time, on any
// preset, algorithm or protocol; stopped once it passes a given time, it is still a bound, and
// above that time exactly where the whole walk's is.
TEST(GiveUp, TheBytesFloorIsNeverAboveTheRun) {
  int floors = 0, above_half = 0;
  for (const auto& [config, nodes] : std::vector<std::pair<std::string, int>>{
           {"dgx-h100", 1}, {"dgx-a100", 1}, {"h100-2node-ib", 2}, {"h100-16node-ib", 4},
           {"a100-2node-roce", 2}, {"h100-4gpu-2node-ndr200", 2}, {"pcie-2gpu", 1},
           {"summit", 2}}) {
    const Topology topo = load_topology(config, LoadOptions{nodes});
    for (const char* algo : {"ring", "dbtree", "ring2d", "rhd", "nvls", "nvls_tree"}) {
      for (Protocol proto : {Protocol::kLL, Protocol::kLL128, Protocol::kSimple}) {
        for (std::uint64_t count : {std::uint64_t{2}, std::uint64_t{1} << 18, std::uint64_t{1} << 24}) {
          Request r = request_for(topo, count);
          r.algorithm = algo;
          r.protocol = proto;
          std::optional<Schedule> s;
          try {
            s = plan(r);
          } catch (const RequestError&) {
            continue;  // not an algorithm or protocol this cluster runs
          }
          SimOptions o;
          Result full;
          try {
            full = simulate(*s, topo, o);
          } catch (const RequestError&) {
            continue;
          }
          SCOPED_TRACE(fmt::format("{} {} {} count {}", config, algo, to_string(proto), count));
          const Time floor = lower_bound(*s, topo, o);
          ++floors;
          EXPECT_LE(floor.ps(), full.total.ps());
          EXPECT_GT(floor.ps(), 0);
          const Time half = Time::from_ps(full.total.ps() / 2);
          const Time early = lower_bound(*s, topo, o, half);
          EXPECT_LE(early.ps(), floor.ps());
          EXPECT_EQ(early > half, floor > half);
          if (floor > half) ++above_half;
          o.give_up_after = Time();
          const Result cut = simulate(*s, topo, o);
          ASSERT_TRUE(cut.gave_up);
          if (cut.events == 0) {
            EXPECT_LE(cut.total.ps(), full.total.ps());
          }
        }
      }
    }
  }
  EXPECT_GT(floors, 100);
  EXPECT_GT(above_half, 0);  // the walk stopped early somewhere
}

// Each candidate in turn plays NCCL's pick; the alternative found by stopped runs is the fastest
// strictly faster candidate by full runs (the first of equals, as before).
TEST(GiveUp, FasterAlternativeIsThatOfFullRuns) {
  for (const Case& c : kCases) {
    const Topology topo = load(c);
    for (Model model : {Model::kMaxMin, Model::kContentionFree}) {
      PredictSetup setup{topo,  request_for(topo, c.count), parse_algo_choice("auto", "auto"),
                         cost_params(topo), model, SelectPolicy::kBest, {}};
      const Predictor pr(setup);
      const std::vector<Candidate>& all = pr.candidates();
      std::vector<std::optional<Prediction>> full(all.size());
      for (std::size_t j = 0; j < all.size(); ++j) full[j] = pr.evaluate(all[j], c.count);
      for (std::size_t i = 0; i < all.size(); ++i) {
        if (!full[i]) continue;
        SCOPED_TRACE(fmt::format("{} x{} count {} {} pick {}", c.config, c.nodes, c.count,
                                 to_string(model), to_string(all[i])));
        Choice pick;
        pick.candidate = all[i];
        pick.eval = *full[i];
        pick.how = "nccl";
        std::size_t best = all.size();  // none
        for (std::size_t j = 0; j < all.size(); ++j) {
          if (j == i || !full[j]) continue;
          if (best == all.size() || full[j]->time < full[best]->time) best = j;
        }
        if (best < all.size() && !(full[best]->time < full[i]->time)) best = all.size();
        const std::optional<Choice> alt = pr.faster_alternative(c.count, pick);
        ASSERT_EQ(alt.has_value(), best < all.size());
        if (!alt) continue;
        EXPECT_EQ(to_string(alt->candidate), to_string(all[best]));
        EXPECT_EQ(alt->eval.time.ps(), full[best]->time.ps());
        EXPECT_EQ(alt->eval.detail, full[best]->detail);
      }
    }
  }
}

// predict's default: NCCL's pick, then every other candidate side by side, each giving up at the
// fastest time known, which the ones that finish lower while the others run
// (SimOptions::give_up_live). The answer must not depend on which finishes first: the same
// alternative, time and note, or none, on 1, 2 and 4 threads.
TEST(GiveUp, FasterAlternativeDoesNotDependOnTheThreads) {
  int alternatives = 0;
  for (const Case& c : kCases) {
    const Topology topo = load(c);
    for (Model model : {Model::kMaxMin, Model::kContentionFree}) {
      const Predictor pr(nccl_setup(topo, c, model));
      const Choice pick = pr.choose(c.count);
      std::optional<Choice> one;
      {
        const ThreadCount threads("1");
        one = pr.faster_alternative(c.count, pick);
      }
      if (one) ++alternatives;
      for (const char* n : {"2", "4"}) {
        SCOPED_TRACE(fmt::format("{} x{} count {} {} threads {}", c.config, c.nodes, c.count,
                                 to_string(model), n));
        const ThreadCount threads(n);
        expect_same_alternative(pr.faster_alternative(c.count, pick), one);
      }
    }
  }
  // Cases where an alternative beats NCCL's pick, so the comparison covers one being found.
  EXPECT_GT(alternatives, 0);
}

// predict's default runs the alternatives beside NCCL's pick (choose_checked), giving up at a
// multiple of the pick's closed form until the pick has its time, and again against that time
// where the guess fell short: the same pick, time and detail, and the same alternative or none,
// as choose() then faster_alternative(), whatever the multiple and the threads.
TEST(GiveUp, AlternativesBesideThePickAnswerAsAfterIt) {
  int alternatives = 0;
  for (const Case& c : kCases) {
    const Topology topo = load(c);
    for (Model model : {Model::kMaxMin, Model::kContentionFree}) {
      const Predictor pr(nccl_setup(topo, c, model));
      const Choice after = pr.choose(c.count);
      const std::optional<Choice> alt_after = pr.faster_alternative(c.count, after);
      if (alt_after) ++alternatives;
      for (const char* n : {"1", "2", "4"}) {
        // 0.01 and 0.5: guesses short of the pick, so runs given up at them run again.
        for (double provisional : {0.01, 0.5, 1.5, 100.0}) {
          SCOPED_TRACE(fmt::format("{} x{} count {} {} threads {} provisional {}", c.config,
                                   c.nodes, c.count, to_string(model), n, provisional));
          const ThreadCount threads(n);
          const auto [beside, alt_beside] = pr.choose_checked(c.count, provisional);
          EXPECT_EQ(to_string(beside.candidate), to_string(after.candidate));
          EXPECT_EQ(beside.how, "nccl");
          EXPECT_EQ(beside.eval.time.ps(), after.eval.time.ps());
          EXPECT_EQ(beside.eval.detail, after.eval.detail);
          expect_same_alternative(alt_beside, alt_after);
        }
      }
    }
  }
  EXPECT_GT(alternatives, 0);
}

}  // namespace
}  // namespace collsim
