// Long messages at the cost of short ones: a collective of many loops is simulated at four
// sizes that differ from it by whole loops, and its time extended along the line they lie on.
//
//   SteadyState how;
//   if (std::optional<Result> r = simulate_steady(request, topo, options, &how)) ...
//   else simulate(plan(request), topo, options)  // too few loops, or no steady state found
//
// Why it holds. Every schedule cuts each NCCL channel's share of the vector into loops of
// chunk-sized pieces, as NCCL does (generator.hpp channel_span). Taking away a whole quantum of
// the vector (`SteadyState::quantum` elements: channels x chunk x the blocks a channel's share
// is cut into, ranks for a ring, a node's GPUs for NVLS, the two trees of a tree; per rank
// block for AllGather-like collectives; where NCCL divides the vector unevenly, Request::split,
// the same share off every channel's part, so the smallest part bounds the quanta) leaves every
// op's remainder and every piece's route as they were and removes the same pipelined loops
// everywhere. Once the pipeline has filled,
// each further quantum adds the same time: the total is affine in the quanta, and so is every
// link's byte count (exactly: bytes are counted, not timed).
//
// How it is used. With Q the request's quanta, a = 4, then 8, 16, 32 while all the runs made
// come to at most 1 / min_gain of Q (where no steady state shows they are paid on top of the
// full simulation), and b the first size from a on whose chunk is the request's, moved up so
// that Q - b is a multiple of a: kRuns runs at b, b + a, ... quanta plus the request's
// remainder must show increments of the total and of every rank's finish that all agree within
// kSlope of the total's. Then the total, each rank's finish and each link's bytes are the last
// run's plus the last increment for every further a quanta, a whole number of them: a steady
// state that repeats every a quanta extends to the picosecond. Where the increments differ (the
// pipeline has not settled at these sizes, or the schedule's chunk changes with the size, which
// is checked first), nothing is extended and the caller simulates in full. A run that only has
// to beat a known time (SimOptions::give_up_after) is given up as soon as the extended links'
// bytes, which are exact, need longer than that at their capacities.
// Not extended: the contention-free model, which must equal its exact closed forms to the
// picosecond (estimate.hpp); pipelined trees (Family::kTree), whose max-min shares wander from
// loop to loop (their runs only serve to give a slower run up).
// tests/predict/steady_state_test.cpp bounds the extended time against the full simulation on
// every preset's algorithms and protocols (kSteadyBound); the increments agree to the
// picosecond in most runs and to a few parts in 1e8 in the others (max-min rates are doubles,
// each piece's end rounded to a picosecond).
#pragma once

#include <cstdint>
#include <optional>

#include "algorithms/ir/request.hpp"
#include "simulator/simulate.hpp"
#include "topology/topology.hpp"

namespace collsim {

// Increments agreeing within this fraction of the total's last one show a steady state. The
// ring's wander at 1 TiB on dgx-h100 (increments of 21.8 ms a step apart by 537 ps, 2.5e-8,
// max-min rounding) passes with a factor 4 to spare; a pipeline still filling (15 % apart for
// NVLSTree at 128 nodes) does not.
inline constexpr double kSlope = 1e-7;
// What tests/predict/steady_state_test.cpp holds the extended time to, relative to the full
// run: increments that agree to kSlope, repeated over the rest of the message, can drift by
// about kSlope of the total; ten times that is the claim.
inline constexpr double kSteadyBound = 1e-6;
// The largest step tried: it bounds what a ladder that finds no steady state costs whatever the
// message (its longest run is b + 3 x 32 quanta, b under 32 past the finer chunks), where the
// quarter of the message (min_gain) alone would let a 1 TiB ladder run for hundreds of quanta.
inline constexpr std::uint64_t kMaxStep = 32;
// Runs per step tried: three increments must agree, so that two agreeing by chance do not pass
// for a steady state (with three runs, the test saw a bintree extended 1.4e-6 off).
inline constexpr std::size_t kRuns = 4;

struct SteadyState {
  std::uint64_t quantum = 0;  // Request::count elements per quantum
  std::uint64_t quanta = 0;   // whole quanta in the request
  std::uint64_t first = 0;    // the runs had first, first + step, ... quanta (plus the
  std::uint64_t step = 0;     // remainder),
  std::size_t runs = 0;       // this many of them
  // A shorter run of the request passed validation (plan): the request repeats its loops, so
  // generating it (without validating it again) is safe, even where nothing was extended.
  bool validated = false;
};

// The extended result of `r` (plan(r) simulated with `options`); with
// options.give_up_after, a Result with gave_up set when the run would end after it (the
// extended time, or the links' bytes alone, say so); nullopt when `r` has too few quanta to
// gain by it, no steady state shows or nothing is extended (a tree that need not beat a time).
// `how` (optional) says what was run. `min_gain`: the request's quanta over all the runs'
// together, at least.
std::optional<Result> simulate_steady(const Request& r, const Topology& topo,
                                      const SimOptions& options, SteadyState* how = nullptr,
                                      std::uint64_t min_gain = 4);

}  // namespace collsim
