// Closed-form α-β cost of every algorithm x collective: what a schedule costs on a contention-
// free network, in microseconds of CPU per query (no schedule is built).
//
//   EstimateRequest q;
//   q.collective = Collective::kAllReduce;  q.algorithm = "ring";  q.ranks = 8;
//   q.bytes = MiB(64);  q.chunk_bytes = 2 << 20;  q.slices = 2;  q.piece_bytes = 512 << 10;
//   q.cost = {us(0.6), GBps(30)};          // α per hop, rate of one channel
//   Estimate e = estimate(q);              // e.time, e.formula
//
// The model is the simulator's contention-free one (simulator/simulate.hpp), so where the
// derivation is exact the two agree to the picosecond (tests/simulator/closed_form_test.cpp):
// a piece of b bytes takes τ(b) = ⌈b/B⌉ ps to push and arrives α later; a channel pushes one
// piece at a time; a reduction of b bytes delays its piece by γ(b) = ⌈b/R⌉ ps; latency overlaps
// across pieces in flight (LogGP; docs/theory.md §1.5, §2.1), so a pipeline of D hops and k pieces
// costs D·α + (D + k − 1)·τ rather than Hockney's (D + k − 1)(α + τ). Exact forms (with equal
// pieces, sizes that divide evenly, and K < slots pieces per ring step: the slot of a piece is
// freed when the downstream starts the next step, at most (slots/K − 1)·δ before the sender
// needs it again, and δ ≥ α covers the credit's way back, so the FIFO never stalls a sender):
//   ring AllReduce / ReduceScatter / AllGather (Thakur–Rabenseifner–Gropp 2005; Patarasuk–Yuan
//     2009), per loop of K pieces per step, δ = max(K·τ, α + τ + γ):
//     AR  (p−1)·δ_γ + (p−2)·δ_0 + (K−1)τ + α + τ,   one piece per step: 2(p−1)(α+τ) + (p−1)γ
//     RS  (p−2)·δ_γ + (K−1)τ + α + τ + γ           one piece per step: (p−1)(α+τ+γ)
//     AG  (p−2)·δ_0 + (K−1)τ + α + τ               one piece per step: (p−1)(α+τ)
//   ring Broadcast (pipelined chain, k pieces): (p−1)(α+τ) + (k−1)τ;  Reduce: (p−1)(α+τ+γ) +
//     (k−1)τ;
//   tree Broadcast (NCCL's binary tree, one-port: a node with d children forwards each piece d
//     times): max over tree members of the recurrence in estimate.cpp (tree_broadcast);
//   rhd (power-of-two p): Σ over the lg p halving exchanges of k_s(α + τ_s + γ_s) + Σ over the
//     lg p doubling exchanges of k_s(α + τ_s) (each exchange sends piece j, then waits for the
//     partner's piece j).
// The other forms (tree Reduce/AllReduce, dbtree, ring2d, direct, binomial, non-power-of-two
// rhd) are the standard ones of docs/theory.md §1.2 and §1.6 written in the same terms, nvls a
// pipeline through the switch (estimate.cpp, closed_form::nvls); `exact`
// says which is which. Channels split the data; each channel is costed at `cost.bandwidth`.
#pragma once

#include <cstdint>
#include <string>

#include "algorithms/ir/schedule.hpp"
#include "algorithms/ir/types.hpp"
#include "topology/units.hpp"

namespace collsim {

struct AlphaBetaCost {
  Time alpha;                  // latency of one hop, per piece
  // The protocol's own part of alpha (its per-route latency beyond the links). A switch actor
  // (nvls) splits a hop into two routes, GPU to switch and switch to GPU, each paying it: such
  // a crossing costs alpha + hop_excess.
  Time hop_excess;
  Bandwidth bandwidth;         // the rate one channel pushes a piece's wire bytes at
  double wire_per_byte = 1;    // wire bytes per payload byte (1 / the protocol's efficiency)
  Time alpha_inter;            // ring2d / dbtree inter-node hop; zero: alpha
  Bandwidth bandwidth_inter;   // zero: bandwidth
  Bandwidth reduce_bandwidth;  // 1/γ; zero: reductions are free
  Bandwidth copy_bandwidth;    // local copies; zero: free
  Bandwidth nvls_bandwidth;    // a reducing NVSwitch's rate per GPU port (nvls); zero: free
  Time launch;                 // once per collective
  Time step_overhead;          // a GPU sender's own time per non-empty piece, besides the push
  // Every hop of a flat algorithm costs alpha and bandwidth (the inter-node level equals the
  // intra-node one); the closed forms are exact only then.
  bool uniform = true;
  // Receives read their pieces out of host memory and hold their channel while they do
  // (simulator/cost_params.hpp, host staging): no form counts that, none is exact then.
  bool staged_read = false;
};

struct EstimateRequest {
  Collective collective = Collective::kAllReduce;
  std::string algorithm = "ring";
  int ranks = 1;
  int nodes = 1;                  // ring2d, dbtree: ranks are nodes x ranks/nodes
  Bytes bytes;                    // nccl-tests' size column
  int channels = 1;               // request channels; each costs a 1/channels share of the data
  // Bytes of the largest channel's region (of the vector, or of one rank's block) where NCCL
  // divides unevenly (ScheduleInfo::widest_channel); 0: the 1/channels share, rounded up. The
  // slowest channel sets the time, so the forms cost this one.
  std::uint64_t widest_channel_bytes = 0;
  std::uint64_t chunk_bytes = 0;  // the schedule's cut (ScheduleInfo::chunk_bytes, slices)
  int slices = 1;
  std::uint64_t piece_bytes = 0;  // FIFO slot payload (ScheduleInfo::fifo.slot_payload)
  AlphaBetaCost cost;
};

// The request for a schedule's header (its cut, ranks, size and channels) and a cost.
EstimateRequest estimate_request(const ScheduleInfo& info, int nodes, const AlphaBetaCost& cost);

struct Estimate {
  Time time;
  std::string formula;  // the form used, e.g. "ring allreduce: (p-1)δγ + (p-2)δ0 + ..."
  bool exact = false;   // equals the contention-free simulation under the conditions above
};

// Throws RequestError for an algorithm that does not implement the collective. The form is the
// algorithm's own (AlgorithmInfo::closed_form, registry.hpp), plus the launch overhead.
Estimate estimate(const EstimateRequest& q);

// Each algorithm's closed form, without the launch (what AlgorithmInfo::closed_form points at).
using ClosedForm = Estimate (*)(const EstimateRequest&);
namespace closed_form {
Estimate ring(const EstimateRequest& q);
Estimate tree(const EstimateRequest& q);
Estimate dbtree(const EstimateRequest& q);
Estimate ring2d(const EstimateRequest& q);
Estimate rhd(const EstimateRequest& q);
Estimate direct(const EstimateRequest& q);
Estimate binomial(const EstimateRequest& q);
Estimate nvls(const EstimateRequest& q);  // across nodes: nvls_sharp
Estimate nvls_sharp(const EstimateRequest& q);
Estimate nvls_tree(const EstimateRequest& q);
Estimate collnet_direct(const EstimateRequest& q);
Estimate collnet_chain(const EstimateRequest& q);
Estimate pat(const EstimateRequest& q);
}  // namespace closed_form

}  // namespace collsim
