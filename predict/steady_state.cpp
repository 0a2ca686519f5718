#include "predict/steady_state.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>

#include "algorithms/generators/registry.hpp"
#include "simulator/cost_params.hpp"

namespace collsim {

namespace {

// Elements of Request::count whose removal takes whole loops off every channel (header).
// Every generator splits the vector into one span per NCCL channel (generator.hpp).
std::uint64_t quantum_of(const Request& r, const Chunking& k) {
  const std::uint64_t chunk = std::max<std::uint64_t>(1, k.chunk_bytes / element_size(r.dtype));
  std::uint64_t q = static_cast<std::uint64_t>(std::max(1, r.channels)) * chunk;
  const Family family = find_algorithm(r.algorithm).family;
  // A tree's channel span is split between its trees (two at most) and pipelined whole.
  if (family == Family::kTree) return 2 * q;
  if (is_blocked(r.collective)) return q;
  // A ring's (and the other algorithms') channel span is split into a block per rank; NVLS's
  // and CollNetDirect's into a block per GPU of a node (one head each); CollNetChain's is
  // pipelined whole.
  if (family == Family::kCollNetChain) return q;
  const bool per_head = is_nvls(family) || family == Family::kCollNetDirect;
  const int blocks = per_head ? r.comm.size() / std::max(1, r.comm.node_count()) : r.comm.size();
  return q * static_cast<std::uint64_t>(std::max(1, blocks));
}

// A run known to end after its give-up bound (give_up_bound): `at` bounds its end from below.
Result gave_up(Time at, std::uint64_t events) {
  Result r;
  r.total = at;
  r.events = events;
  r.gave_up = true;
  return r;
}

// y3 + (y3 - y2) x steps: the line through the last two runs, `steps` runs further on.
std::int64_t extend(std::int64_t y2, std::int64_t y3, std::uint64_t steps) {
  return y3 + (y3 - y2) * static_cast<std::int64_t>(steps);
}

Time extend(Time y2, Time y3, std::uint64_t steps) {
  return Time::from_ps(extend(y2.ps(), y3.ps(), steps));
}

// Whether the increments of `at(run)` (a time) grow and all agree with the last within kSlope
// of the total's last increment.
template <class At>
bool agree(const std::array<const Result*, kRuns>& runs, std::int64_t scale, At at) {
  const std::int64_t last = (at(*runs[kRuns - 1]) - at(*runs[kRuns - 2])).ps();
  for (std::size_t i = 1; i < kRuns; ++i) {
    const std::int64_t d = (at(*runs[i]) - at(*runs[i - 1])).ps();
    if (d <= 0 || static_cast<double>(std::llabs(d - last)) > kSlope * static_cast<double>(scale))
      return false;
  }
  return true;
}

// Whether the runs show a steady state: the total's increments agree, and so do every rank's
// finish's (a pipelined tree's total can look steady while its root's finish is not).
bool steady(const std::array<const Result*, kRuns>& runs) {
  const std::int64_t scale = (runs[kRuns - 1]->total - runs[kRuns - 2]->total).ps();
  if (!agree(runs, scale, [](const Result& r) { return r.total; })) return false;
  for (std::size_t k = 0; k < runs[0]->rank_finish.size(); ++k) {
    if (!agree(runs, scale, [k](const Result& r) { return r.rank_finish[k]; })) return false;
  }
  return true;
}

// The result `steps` steps of a quanta past r3, from r2 one step before it (header); the
// events and pieces are those of all the runs.
Result extend_runs(const std::map<std::uint64_t, Result>& all, const Result& r2, const Result& r3,
                   std::uint64_t steps, const Topology& topo, const CostParams& costs) {
  Result out;
  out.total = extend(r2.total, r3.total, steps);
  out.rank_finish.resize(r3.rank_finish.size());
  for (std::size_t i = 0; i < r3.rank_finish.size(); ++i)
    out.rank_finish[i] = extend(r2.rank_finish[i], r3.rank_finish[i], steps);
  for (const auto& [quanta, r] : all) {
    out.events += r.events;
    out.pieces += r.pieces;
    out.ops += r.ops;
    out.peak_pending_events = std::max(out.peak_pending_events, r.peak_pending_events);
  }
  out.simulated_ranks = r3.simulated_ranks;
  out.folded_links = r3.folded_links;
  out.nccl_channels = r3.nccl_channels;
  out.simulated_channels = r3.simulated_channels;
  // Links: every link of the last run (a link that carries bytes in one run carries them in
  // the next, longer one).
  const double seconds = out.total.seconds();
  std::size_t j = 0;
  for (const LinkUsage& u3 : r3.links) {
    while (j < r2.links.size() && r2.links[j].link.value < u3.link.value) ++j;
    const std::uint64_t b2 =
        j < r2.links.size() && r2.links[j].link.value == u3.link.value ? r2.links[j].bytes : 0;
    LinkUsage u;
    u.link = u3.link;
    u.bytes = static_cast<std::uint64_t>(
        extend(static_cast<std::int64_t>(b2), static_cast<std::int64_t>(u3.bytes), steps));
    u.busy_fraction =
        seconds > 0 ? static_cast<double>(u.bytes) / (link_capacity(topo, u.link, costs) * seconds) : 0;
    const auto busiest = static_cast<std::size_t>(out.bottleneck);
    if (out.bottleneck < 0 || u.busy_fraction > out.links[busiest].busy_fraction) {
      out.bottleneck = static_cast<int>(out.links.size());
    }
    out.links.push_back(u);
  }
  return out;
}

}  // namespace

std::optional<Result> simulate_steady(const Request& r, const Topology& topo,
                                      const SimOptions& options, SteadyState* how,
                                      std::uint64_t min_gain) {
  // The contention-free model must equal its exact closed forms to the picosecond (estimate.hpp)
  // and is simulated in full.
  // Pipelined trees are not extended: under max-min their shares wander from loop to loop, and
  // runs whose increments agreed to 1e-7 over four sizes still ended 7e-6 off the full run at
  // 120 quanta (bintree), a root's finish 1e-2 off (steady_state_test.cpp found both). Their
  // runs only give the bytes that can give a slower run up.
  // CollNet's schedules, and NVLS across nodes (with SHARP), are not extended either until the
  // steady-state test covers a SHARP fabric (steady_state_test.cpp runs on clusters without one).
  const Family family = find_algorithm(r.algorithm).family;
  const bool sharp = is_collnet(family) || (family == Family::kNvls && r.comm.node_count() > 1);
  const bool extends = family != Family::kTree && !sharp;
  if (options.trace != nullptr || options.network == SimNetwork::kContentionFree ||
      r.collective == Collective::kBarrier || (!extends && !give_up_bound(options))) {
    return std::nullopt;
  }
  const Chunking k = chunking(r);
  const std::uint64_t quantum = quantum_of(r, k);
  // Where NCCL divides unevenly (Request::split) every part loses the same loops, a quantum's
  // per-channel share each: the smallest part bounds the quanta.
  const ChannelSplit& sp = r.split;
  const std::uint64_t per_channel = quantum / static_cast<std::uint64_t>(std::max(1, r.channels));
  std::uint64_t quanta = r.count / quantum;
  if (!sp.empty()) {
    std::uint64_t smallest = sp.lo;
    if (sp.mids > 0) smallest = std::min(smallest, sp.mid);
    if (sp.hi != 0) smallest = std::min(smallest, sp.hi);
    quanta = smallest / per_channel;
  }
  const CostParams costs = options.costs ? *options.costs : cost_params(topo);
  SimOptions sub = options;
  sub.give_up_after.reset();
  sub.give_up_live = nullptr;
  auto at = [&](std::uint64_t q) {
    Request x = r;
    const std::uint64_t less = (quanta - q) * per_channel;  // elements off each channel's part
    x.count = r.count - (quanta - q) * quantum;
    if (!sp.empty()) {
      x.split.lo -= less;
      if (sp.mids > 0) x.split.mid -= less;
      if (sp.hi != 0) x.split.hi -= less;
    }
    return x;
  };
  // NVLS and tree LL128 cut finer below some size (request.cpp): the runs start where the chunk
  // is the request's (it only grows with the size).
  std::uint64_t base = 1;
  for (;; base *= 2) {
    if (base >= quanta) return std::nullopt;
    const Chunking kb = chunking(at(base));
    if (kb.chunk_bytes == k.chunk_bytes && kb.slices == k.slices) break;
  }
  std::map<std::uint64_t, Result> runs;  // by quanta: a ladder reuses the previous one's runs
  auto run = [&](std::uint64_t q) -> const Result& {
    auto it = runs.find(q);
    if (it != runs.end()) return it->second;
    // The first run is validated (plan); the longer ones repeat its loops, so they are only
    // generated: validating them would cost more than simulating them.
    const Schedule s = runs.empty() ? plan(at(q)) : generate(at(q));
    if (how != nullptr) how->validated = true;
    return runs.emplace(q, simulate(s, topo, sub)).first->second;
  };
  for (std::uint64_t a = 4; a <= kMaxStep; a *= 2) {
    // Runs at b, b + a, ..., b + 3a quanta, from b >= a past the finer chunks, and making the
    // rest whole steps of a: a steady state that repeats every a quanta (or a divisor) then
    // extends to the picosecond.
    const std::uint64_t from = std::max(base, a);
    if (from > quanta) break;
    const std::uint64_t b = from + (quanta - from) % a;
    const std::uint64_t last = b + (kRuns - 1) * a;
    // The runs, with those already made, may cost at most 1 / min_gain of the whole message
    // (counted in quanta): where no steady state shows, the full simulation that follows pays
    // for them.
    std::uint64_t cost = 0;
    for (const auto& [q, run_at] : runs) cost += q;
    for (std::uint64_t i = 0; i < kRuns; ++i) cost += runs.count(b + i * a) ? 0 : b + i * a;
    if (cost * min_gain > quanta) break;
    // Pointers into `runs`, whose nodes stay put: a run's rank finishes are not copied.
    std::array<const Result*, kRuns> runs_at;
    for (std::uint64_t i = 0; i < kRuns; ++i) runs_at[i] = &run(b + i * a);
    Result out = extend_runs(runs, *runs_at[kRuns - 2], *runs_at[kRuns - 1], (quanta - last) / a,
                             topo, costs);
    // A run that only has to beat a known time: the links' bytes are exact whatever the
    // timing, and the busiest one's over its capacity bounds the time from below.
    if (const std::optional<Time> limit = give_up_bound(options)) {
      double floor = 0;
      for (const LinkUsage& u : out.links)
        floor = std::max(floor, static_cast<double>(u.bytes) / link_capacity(topo, u.link, costs));
      // The max-min fill's residual, as the engine's own bound allows for (simulate.hpp).
      const Time bound =
          Time::from_ps(static_cast<std::int64_t>(floor * (1 - kBytesFloorSlack) * 1e12));
      if (bound > *limit) return gave_up(bound, out.events);
    }
    if (!extends) break;
    if (!steady(runs_at)) continue;
    if (how != nullptr) *how = SteadyState{quantum, quanta, b, a, kRuns, true};
    if (const std::optional<Time> limit = give_up_bound(options); limit && out.total > *limit) {
      return gave_up(out.total, out.events);
    }
    return out;
  }
  return std::nullopt;
}

}  // namespace collsim
