// Long messages at the cost of short ones: a collective of many loops is simulated at three
// sizes that differ from it by whole loops, and its time extended along the line they lie on.
//
//   SteadyState how;
//   if (std::optional<Result> r = simulate_steady(request, topo, options, &how)) ...
//   else simulate(plan(request), topo, options)  // too few loops, or no steady state found
//
// Why it holds. Every schedule cuts each channel's share of the vector into loops of
// chunk-sized pieces, as NCCL does (a ring: ranks x chunk per channel and loop; a tree: chunk;
// NVLS: ranks x chunk). Taking away a whole quantum of the vector (`SteadyState::quantum`
// elements: channels x ranks x chunk, twice that for the two trees of a tree algorithm; per
// rank block for AllGather-like collectives) leaves every op's remainder and every piece's
// route as they were and removes the same pipelined loops everywhere. Once the pipeline has
// filled, each further quantum adds the same time: the total is affine in the quanta, and so
// is every link's byte count (exactly: bytes are counted, not timed).
//
// How it is used. With Q the request's quanta, a = 4, then 8, 16, 32 while 4a is at most a
// quarter of Q, and b = Q mod a: kRuns runs at b + a, b + 2a, ... quanta plus the request's
// remainder must show increments that all agree within kSlope (relative). Then the total, each
// rank's finish and each link's bytes are the last run's plus the last increment for every
// further a quanta, a whole number of them: a steady state that repeats every a quanta extends
// to the picosecond. Where the increments differ (the pipeline has not settled at these sizes,
// as a deep tree's has not, or the schedule's chunk changes with the size, which is checked
// first), nothing is extended and the caller simulates in full. A run that only has to beat a
// known time (SimOptions::give_up_after) is given up as soon as the extended links' bytes,
// which are exact, need longer than that at their capacities. Max-min only: the
// contention-free model must equal its exact closed forms to the picosecond (estimate.hpp), so
// it is always simulated in full.
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

// Two increments agreeing within this fraction of the later one show a steady state.
inline constexpr double kSlope = 1e-7;
// What tests/predict/steady_state_test.cpp holds the extended time to, relative to the full run.
inline constexpr double kSteadyBound = 1e-6;
// The largest step tried: beyond it the runs cost too much of what the shortcut saves.
inline constexpr std::uint64_t kMaxStep = 32;
// Runs per step tried: three increments must agree, so that two agreeing by chance (a
// pipelined tree's max-min shares wander by parts in 1e4) do not pass for a steady state.
inline constexpr std::size_t kRuns = 4;

struct SteadyState {
  std::uint64_t quantum = 0;  // Request::count elements per quantum
  std::uint64_t quanta = 0;   // whole quanta in the request
  std::uint64_t first = 0;    // the runs had first, first + step, ... quanta (plus the
  std::uint64_t step = 0;     // remainder),
  std::size_t runs = 0;       // this many of them
};

// The extended result of `r` (plan(r) simulated with `options`, give_up_after ignored), or
// nullopt when `r` has too few quanta to gain by it or no steady state shows; `how` (optional)
// says what was run. `min_gain`: the request's quanta over the largest run's, at least.
std::optional<Result> simulate_steady(const Request& r, const Topology& topo,
                                      const SimOptions& options, SteadyState* how = nullptr,
                                      std::uint64_t min_gain = 4);

}  // namespace collsim
