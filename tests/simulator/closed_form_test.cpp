// The simulator against the α-β closed forms (algorithms/models/estimate.hpp) on a uniform cluster:
// p GPUs on one NVSwitch, every cable 100 GB/s and 0.3 µs per direction, so every transfer
// crosses two links: α = 0.6 µs, B = 100 GB/s. No contention is possible (each rank pushes one
// piece at a time, and no two ranks send to the same receiver at once in these schedules), so
// both network models must give the closed form to the picosecond.
//
// Derivations (τ(b) = ⌈b·1e12 / 100e9⌉ ps; γ(b) = ⌈b·1e12 / 500e9⌉ ps where reductions cost):
//  - Ring AllReduce, one piece per step (m = n/p ≤ one op): rank r sends segment r at 0; every
//    step t ≥ 1 starts when the upstream piece arrives, α + τ after the upstream step started,
//    plus its reduction for t ≤ p−1: T = 2(p−1)(α + τ(m)) + (p−1)γ(m) (Patarasuk & Yuan).
//  - With K pieces per step (2 slices of 64 KiB, 3 loops): the channel is busy Kτ per step, so
//    a step lasts δ = max(Kτ, α + τ + γ) and T = loops·[(p−1)δγ + (p−2)δ0 + (K−1)τ + α + τ].
//    Here Kτ = 2 x 655.36 = 1310.72 ns lies between α + τ = 1255.36 ns (forwarding steps) and
//    α + τ + γ = 1386.43 ns (reducing steps), so both branches of the max are exercised.
//  - ReduceScatter: (p−2)δγ + (K−1)τ + α + τ + γ; AllGather: (p−2)δ0 + (K−1)τ + α + τ.
//  - Pipelined (chain) Broadcast of k pieces over p−1 hops: the last piece leaves the root at
//    (k−1)τ and every hop adds α + τ: T = (p−1)(α + τ) + (k−1)τ.
//  - Binary tree Broadcast: a member with d children forwards each piece d times, so it emits a
//    piece every max(parent's period, dτ); the i-th child receives piece j at S + jP + (i+1)τ + α
//    (recurrence in estimate.cpp). E.g. p = 8: 0→4 (α+τ), 4→6 second child (α+2τ), 6→7 (α+2τ),
//    period 2τ: T = 3α + 5τ + 2(k−1)τ.
//  - Recursive halving-doubling AllReduce (p a power of two): lg p halving exchanges of n/2,
//    n/4, ... each α + τ + γ, then lg p doubling exchanges ... n/4, n/2 each α + τ.
#include <gtest/gtest.h>

#include "algorithms/models/estimate.hpp"
#include "sim_fixtures.hpp"
#include "simulator/simulate.hpp"

namespace collsim {
namespace {

constexpr std::uint64_t kKiB = 1024;

struct Case {
  Collective c;
  std::string algo;
  int p;
  std::uint64_t bytes;
  std::uint64_t chunk;
  int slices;
  bool reduce_cost;
};

void expect_closed_form(const Case& k) {
  SCOPED_TRACE(::testing::Message() << to_string(k.c) << " " << k.algo << " p=" << k.p << " bytes="
                                    << k.bytes << " chunk=" << k.chunk << " slices=" << k.slices);
  const Bandwidth bw = GBps(100);
  const Topology topo = test::star(k.p, bw, us(0.3));
  const Bandwidth reduce = k.reduce_cost ? GBps(500) : Bandwidth();
  const Schedule s = plan(test::request(k.c, k.algo, k.p, k.bytes, k.chunk, k.slices));

  AlphaBetaCost cost;
  cost.alpha = us(0.6);
  cost.bandwidth = bw;
  cost.reduce_bandwidth = reduce;
  const Estimate e = estimate(estimate_request(s.info(), 1, cost));
  EXPECT_TRUE(e.exact) << e.formula;

  for (SimNetwork net : {SimNetwork::kContentionFree, SimNetwork::kMaxMin}) {
    SimOptions o;
    o.network = net;
    o.costs = test::ideal(reduce);
    const Result r = simulate(s, topo, o);
    EXPECT_EQ(r.total.ps(), e.time.ps()) << to_string(net) << ": " << e.formula;
  }
}

TEST(ClosedForm, RingAllReduceOnePiecePerStep) {
  for (int p : {2, 3, 4, 8}) {
    for (std::uint64_t m : {4 * kKiB, 64 * kKiB, 300 * kKiB}) {
      expect_closed_form({Collective::kAllReduce, "ring", p, m * p, m, 1, true});
    }
  }
}

TEST(ClosedForm, RingAllReduceSlicedAndLooped) {
  for (int p : {2, 4, 5}) {
    expect_closed_form(
        {Collective::kAllReduce, "ring", p, 3 * p * 128 * kKiB, 128 * kKiB, 2, true});
  }
}

TEST(ClosedForm, RingReduceScatterAndAllGather) {
  for (int p : {2, 3, 4, 8}) {
    for (int slices : {1, 2}) {
      expect_closed_form(
          {Collective::kReduceScatter, "ring", p, p * 128 * kKiB, 128 * kKiB, slices, true});
      expect_closed_form(
          {Collective::kAllGather, "ring", p, p * 128 * kKiB, 128 * kKiB, slices, false});
    }
  }
}

TEST(ClosedForm, PipelinedChainBroadcast) {
  for (int p : {2, 3, 6}) {
    for (std::uint64_t k : {1, 4, 16}) {
      expect_closed_form({Collective::kBroadcast, "ring", p, k * 64 * kKiB, 64 * kKiB, 1, false});
    }
  }
}

TEST(ClosedForm, BinaryTreeBroadcast) {
  for (int p : {2, 3, 5, 8, 11}) {
    for (std::uint64_t k : {1, 4}) {
      expect_closed_form({Collective::kBroadcast, "bintree", p, k * 64 * kKiB, 64 * kKiB, 1, false});
    }
  }
}

TEST(ClosedForm, RecursiveHalvingDoubling) {
  for (int p : {2, 4, 8}) {
    for (std::uint64_t per : {16 * kKiB, 64 * kKiB}) {
      expect_closed_form({Collective::kAllReduce, "rhd", p, per * p, 512 * kKiB, 1, true});
    }
  }
}

// The ring AllReduce form in numbers, independent of estimate(): p = 4, m = 64 KiB,
// τ = 655360 ps, γ = 131072 ps, α = 600000 ps: 6 (α + τ) + 3γ = 7,925,376 ps.
TEST(ClosedForm, RingAllReduceByHand) {
  const Topology topo = test::star(4, GBps(100), us(0.3));
  const Schedule s =
      plan(test::request(Collective::kAllReduce, "ring", 4, 4 * 64 * kKiB, 64 * kKiB, 1));
  SimOptions o;
  o.network = SimNetwork::kContentionFree;
  o.costs = test::ideal(GBps(500));
  EXPECT_EQ(simulate(s, topo, o).total.ps(), 6 * (600000 + 655360) + 3 * 131072);
}

}  // namespace
}  // namespace collsim
