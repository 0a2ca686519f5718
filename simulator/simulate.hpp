// The simulator: executes a Schedule on a Topology and says how long it takes, where the time
// goes and which link is the bottleneck.
//
//   Topology topo = load_topology("dgx-h100");
//   Schedule s = plan(request);                           // algorithms/generators/registry.hpp
//   SimOptions o;                                         // max-min network, NCCL-like costs
//   Result r = simulate(s, topo, o);
//   r.total.us();  r.links[r.bottleneck].busy_fraction;  r.events;
//
// Execution follows the IR contract of algorithms/ir/schedule.hpp unchanged: every (rank, channel)
// runs its ops in order, channels run concurrently, dependencies are honoured, and every send is
// cut into pieces of one FIFO slot that flow through the connection's bounded FIFO (a sender
// stalls while `slots` of its pieces are unconsumed). The timing model on top of it:
//  - Launch: every stream starts at the protocol's launch overhead (cost_params.hpp).
//  - A channel pushes one piece at a time: piece j of a connection starts when the channel has
//    finished pushing its previous piece, the piece's input has arrived (fused ops) plus its
//    reduction delay (bytes / reduce_bandwidth), and the FIFO has a free slot; it reaches the
//    receiver `latency` after its last byte leaves (cut-through: route latency + the protocol's
//    per-hop excess). Latency therefore overlaps across pieces in flight, as LogGP has it
//    (docs/theory.md §1.5, §2.1); bandwidth does not.
//  - A receiver consumes a piece when it acts on it (a recv at arrival; a fused op when it
//    forwards it); the freed slot is visible to the sender one connection latency later.
//  - Local copy and reduce ops occupy their channel for bytes / copy (reduce) bandwidth.
//  - Network (SimNetwork):
//      kContentionFree: a piece streams at its route's bottleneck rate (link bandwidth x
//        link_efficiency, wire bytes), capped by the channel's bandwidth; links are never shared.
//        The fast path, and exactly the α-β closed forms on a uniform topology
//        (algorithms/models/estimate.hpp).
//      kMaxMin: pieces in flight are flows; flows crossing a directed link share it max-min
//        fairly (each also capped by its channel), rates recomputed when a flow starts or ends
//        (flow_network.hpp). NIC injection, NVSwitch ports, PCIe switches and fat-tree uplinks
//        are links like any other.
// A schedule that cannot finish (a recv whose send never comes, a FIFO that never drains, a
// dependency cycle) ends with a ScheduleError naming the stuck ranks, channels and ops, never a
// hang. Memory grows with ranks x channels (streams and connections), not with the op count:
// ops are read through the IR cursors. Same input, same output, bit for bit.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "algorithms/ir/schedule.hpp"
#include "simulator/cost_params.hpp"
#include "topology/topology.hpp"

namespace collsim {

enum class SimNetwork { kContentionFree, kMaxMin };
std::string_view to_string(SimNetwork n);  // "contention-free", "max-min"

struct TraceRecorder;

struct SimOptions {
  SimNetwork network = SimNetwork::kMaxMin;
  std::optional<CostParams> costs;  // default: cost_params(topology), the config's
  // Cluster rank (index into Topology::gpus()) of each schedule rank; empty: rank r on
  // cluster rank r. Communicator::gpu(r) gives it for a communicator.
  std::vector<int> placement;
  TraceRecorder* trace = nullptr;  // records op slices and pieces when set (trace.hpp)
  // Simulate one period of ranks where shifting the ranks provably changes nothing (a ring with
  // equal segments on a cluster that repeats node by node, leaf by leaf or pod by pod;
  // simulator/symmetry.hpp). The same result to the picosecond, or, where periods share links
  // under max-min (Result::folded_links), within the bound symmetry.hpp states; off with a
  // trace, which shows every rank.
  bool symmetry = true;
  // Simulate one of each set of NCCL channels that are copies of each other, its flows counting
  // for all of them (channel folding, simulator/symmetry.hpp). Off with a trace.
  bool fold_channels = true;
  // Evaluate a ring AllReduce whose ops move at most one piece each (a small message: nearly
  // every piece empty) as a lattice of cells without events, where that gives this simulation's
  // result exactly (simulator/lattice.cpp); otherwise, and with a trace, simulate it.
  bool lattice = true;
  // Stop once the run is known to end after this instant (an event still to come lies beyond
  // it): Result::gave_up is then set and only says "slower". A caller that only wants a run
  // faster than a known one (predict's faster alternative) saves the rest of a slower run.
  std::optional<Time> give_up_after;
  // The same with a bound that other threads may lower while the run goes (picoseconds; the
  // run reads it at every event): predict's alternatives, run side by side, give up at the
  // fastest time known, NCCL's pick's or one of theirs that finished faster. The run gives up
  // past the lower of the two.
  const std::atomic<std::int64_t>* give_up_live = nullptr;
};

// The lower of a fixed give-up bound and a live one (null: none) as they stand now.
inline Time give_up_now(Time after, const std::atomic<std::int64_t>* live) {
  return live == nullptr ? after
                         : std::min(after, Time::from_ps(live->load(std::memory_order_relaxed)));
}

// The lower of `o`'s two give-up bounds as they stand now; nullopt when neither bounds the run.
inline std::optional<Time> give_up_bound(const SimOptions& o) {
  const Time t = give_up_now(o.give_up_after.value_or(Time::max()), o.give_up_live);
  return t < Time::max() ? std::optional<Time>(t) : std::nullopt;
}

// What a lower bound taken from link bytes alone gives up, as a fraction of it: the max-min fill
// keeps a link's residual at least 1e-9 of its capacity, so an overloaded link may carry that
// much more, and 1e-6 covers a thousand such floors at once (the engine's bound for
// give_up_after, and predict/steady_state.cpp's).
inline constexpr double kBytesFloorSlack = 1e-6;

struct LinkUsage {
  LinkId link;
  std::uint64_t bytes = 0;   // wire bytes carried
  double busy_fraction = 0;  // bytes / (bandwidth x link_efficiency x total time)
};

struct Result {
  Time total;                     // the last rank's finish, launch included
  std::vector<Time> rank_finish;  // per schedule rank
  std::vector<LinkUsage> links;   // every link that carried bytes, by link id
  int bottleneck = -1;            // index into links: highest busy fraction, lowest id on ties
  std::uint64_t events = 0;       // events processed
  std::uint64_t pieces = 0;       // FIFO pieces sent
  std::uint64_t ops = 0;          // ops executed
  std::size_t peak_pending_events = 0;
  int simulated_ranks = 0;  // < ranks when a rank symmetry let one period stand for all
  // That symmetry folded links shared between periods (max-min only): within picoseconds of the
  // full simulation, not bit for bit (simulator/symmetry.hpp)
  bool folded_links = false;
  // NCCL channels of the schedule, and of those the ones simulated: fewer when some were copies
  // of others (channel folding, symmetry.hpp)
  int nccl_channels = 0;
  int simulated_channels = 0;
  // SimOptions::give_up_after passed: the run ends after that instant; `total` is a lower bound
  // beyond it (the first event past it, or, under max-min, the bound from the ops' bytes that
  // gave the run up before it started: `events` 0), `events` those processed; nothing else set.
  bool gave_up = false;
  // The run was the latency lattice (SimOptions::lattice): this many (rank, op) cells were
  // evaluated, and `events` is 0.
  std::uint64_t lattice_cells = 0;
};

// Throws ScheduleError for a schedule that cannot finish or whose placement does not fit the
// topology (RequestError), ConfigError if two placed ranks cannot reach each other.
Result simulate(const Schedule& s, const Topology& topo, const SimOptions& options = {});

// The events every simulation of this process has processed so far, on any thread, counted in
// batches of kEventBatch as they run: what a progress line shows while one long simulation runs
// (cli/progress.hpp). Never part of a result.
inline constexpr std::uint64_t kEventBatch = 1 << 16;
std::uint64_t events_so_far();

// Under max-min, a lower bound on simulate(s, topo, options).total from the ops alone, without
// simulating: the launch, then the busiest link's wire bytes over its capacity, or the busiest
// stream's over its channel cap with the protocol's step overhead once per piece it sends. A
// run whose give-up bound is below it is given up before it starts (engine.cpp bytes_floor).
// The walk over the ops stops once the bound passes `enough` (the result is then above it).
// Time() under contention-free.
Time lower_bound(const Schedule& s, const Topology& topo, const SimOptions& options = {},
                 Time enough = Time::max());

}  // namespace collsim
