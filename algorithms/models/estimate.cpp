// Closed forms (estimate.hpp). Notation: p ranks, L the bytes of one channel's region, τ(b) the
// push time of b bytes, γ(b) its reduction delay, α the per-hop latency, K pieces per ring step.
#include "algorithms/models/estimate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "algorithms/generators/generator.hpp"
#include "algorithms/generators/registry.hpp"
#include "algorithms/models/estimate_cost.hpp"
#include "topology/error.hpp"

namespace collsim {

namespace {

using detail::ceil_div;
using u64 = std::uint64_t;

using estimate_detail::ceil_log2;
using estimate_detail::Cost;
using estimate_detail::Cut;
using estimate_detail::Shape;
using estimate_detail::shape_of;

enum class Phase { kAllReduce, kReduceScatter, kAllGather };

// One loop of a ring phase whose steps move `seg` bytes in `slices` ops of FIFO pieces. Every
// rank does the same at the same time (symmetry), so step t's first piece starts at S(t) with
// S(t) = S(t−1) + δ_t, δ_t = max(B, α + τ₀ + γ₀): the channel is busy for B per step (the push
// time of every piece of the step), and piece 0 of step t needs piece 0 of step t−1 from
// upstream (τ₀ + α later, plus its reduction). An op of more than one slot is cut into full
// pieces and a shorter last one, as the schedule's FIFO cuts it, so B sums unequal pieces.
Time ring_loop(Phase ph, int p, u64 seg, const Cut& cut, const Cost& c) {
  const u64 slice = ceil_div(seg, static_cast<u64>(cut.slices));
  const u64 f = std::max<u64>(1, ceil_div(slice, cut.piece));
  const u64 first_piece = std::min(cut.piece, slice);
  const u64 last_piece = slice - (f - 1) * first_piece;
  const Time tau0 = c.tau(first_piece);
  const Time busy =
      (c.occ(first_piece) * static_cast<std::int64_t>(f - 1) + c.occ(last_piece)) * cut.slices;
  const Time g = c.gamma(first_piece);
  const Time a = c.alpha();
  const Time d_red = std::max(busy, a + tau0 + g);
  const Time d_fwd = std::max(busy, a + tau0);
  // The last step, a pure receive: from the end of its sender's busy time, its last piece
  // arrives α − o later (and is then reduced, x), unless the sender's own overhead ends later.
  const Time last_o = last_piece > 0 ? c.o() : Time();
  const auto tail_plus = [&](Time x) { return busy + std::max(Time(), a + x - last_o); };
  const Time tail = tail_plus(Time());
  switch (ph) {
    case Phase::kAllReduce:
      return d_red * (p - 1) + d_fwd * (p - 2) + tail;
    case Phase::kReduceScatter:
      return d_red * (p - 2) + tail_plus(c.gamma(last_piece));
    case Phase::kAllGather: {
      const Time first = busy + c.copy(slice) * cut.slices;  // send, then the own copy
      if (p == 2) return std::max(first, tail);
      return std::max(first, a + tau0) + d_fwd * (p - 3) + tail;
    }
  }
  return Time();
}

// A ring phase over a region of L bytes (AllReduce: loops of p segments, the last one shrunk to
// ⌈rest/p⌉ as NCCL does) or over blocks of L bytes (ReduceScatter, AllGather: loops of one chunk
// of every block).
Time ring_phase(Phase ph, int p, u64 len, const Cut& cut, const Cost& c) {
  if (len == 0) return Time();
  if (p == 1) return c.copy(len);
  const u64 per_loop = ph == Phase::kAllReduce ? static_cast<u64>(p) * cut.chunk : cut.chunk;
  const u64 full = len / per_loop;
  const u64 rest = len % per_loop;
  Time t = ring_loop(ph, p, cut.chunk, cut, c) * static_cast<std::int64_t>(full);
  if (rest > 0) {
    const u64 seg = ph == Phase::kAllReduce ? ceil_div(rest, static_cast<u64>(p)) : rest;
    t += ring_loop(ph, p, seg, cut, c);
  }
  return t;
}

// Pieces and push time of a pipelined transfer of `len` bytes in ops of `op` bytes.
struct Pipe {
  std::int64_t k = 1;  // FIFO pieces
  std::int64_t ops = 1;
  u64 pb = 1;  // bytes per piece
  Time tau;    // per piece
  Time occ;    // per piece, as its sender holds the channel (τ + o)
  // Every op and every piece has the same size, as the pipelined forms assume; a shorter last
  // op or piece lets the forms only approximate the schedule.
  bool even = true;
};
Pipe pipe(u64 len, const Cut& cut, const Cost& c) {
  const u64 op = std::min(cut.op_bytes(), std::max<u64>(len, 1));
  const u64 per_op = std::max<u64>(1, ceil_div(op, cut.piece));
  Pipe s;
  s.ops = static_cast<std::int64_t>(std::max<u64>(1, ceil_div(len, op)));
  s.k = s.ops * static_cast<std::int64_t>(per_op);
  s.pb = std::min(cut.piece, op);
  s.tau = c.tau(s.pb);
  s.occ = c.occ(s.pb);
  s.even = len % op == 0 && (op <= cut.piece || op % cut.piece == 0);
  return s;
}

// NCCL's binary tree (generator.hpp btree), broadcast from member 0, one-port: a member with d
// children forwards each piece d times, so its pieces leave every P(v) = max(P(parent), d·τ);
// child i (0-based) of v receives piece j at S(v) + j·P(v) + (i+1)τ + α, S(child) being its
// piece 0. The root also copies each op to its output. Result: the last member's finish.
Time tree_broadcast(int p, const Pipe& s, Time root_copy, const Cost& c) {
  if (p == 1) return root_copy * s.ops;
  std::vector<Time> start(static_cast<std::size_t>(p)), period(static_cast<std::size_t>(p));
  std::vector<int> order{0};
  const Time tau = s.tau, occ = s.occ;
  period[0] = occ * static_cast<std::int64_t>(detail::btree(p, 0).children.size()) + root_copy;
  Time end = start[0] + period[0] * (s.k - 1) + period[0];
  for (std::size_t q = 0; q < order.size(); ++q) {
    const int v = order[q];
    const detail::TreeLinks l = detail::btree(p, v);
    for (std::size_t i = 0; i < l.children.size(); ++i) {
      const int ch = l.children[i];
      const auto d = static_cast<std::int64_t>(detail::btree(p, ch).children.size());
      start[ch] = start[v] + occ * static_cast<std::int64_t>(i) + tau + c.alpha();
      period[ch] = std::max(period[v], occ * d);
      const Time last = start[ch] + period[v] * (s.k - 1);  // its last piece arrives
      end = std::max(end, d == 0 ? last : start[ch] + period[ch] * (s.k - 1) + occ * d);
      order.push_back(ch);
    }
  }
  return end;
}

// Height of NCCL's binary tree over p members.
int tree_height(int p) {
  int h = 0;
  for (int v = 0; v < p; ++v) {
    int d = 0;
    for (int x = v; x != 0; x = detail::btree(p, x).parent) ++d;
    h = std::max(h, d);
  }
  return h;
}

Estimate rhd(const EstimateRequest& q, u64 len, const Cut& cut, const Cost& c) {
  const int p = q.ranks;
  int p2 = 1;
  while (p2 * 2 <= p) p2 *= 2;
  Time t = c.copy(q.collective == Collective::kAllReduce ? len : 0);
  bool even = true;
  auto exchange = [&](u64 size, bool reduce) {
    const Pipe s = pipe(size, cut, c);
    even = even && s.even;
    // A piece's exchange ends when the partner's piece is in (and reduced), or when the own
    // send's overhead ends, whichever is later.
    const Time in = c.alpha() + (reduce ? c.gamma(s.pb) : Time());
    return (s.tau + std::max(in, s.occ - s.tau)) * s.k;
  };
  const bool halve = q.collective != Collective::kAllGather;
  const bool dbl = q.collective != Collective::kReduceScatter;
  const u64 total = q.collective == Collective::kAllReduce ? len : len * static_cast<u64>(p);
  for (int d = p2 / 2; d >= 1 && halve; d /= 2) t += exchange(total * d / p2, true);
  for (int d = 1; d < p2 && dbl; d *= 2) t += exchange(total * d / p2, false);
  const bool pow2 = p2 == p;
  if (!pow2) {
    const Pipe s = pipe(total, cut, c);
    t += (c.alpha() + s.tau * s.k + c.gamma(s.pb)) + (c.alpha() + s.tau * s.k);
  }
  return {t,
          pow2 ? "rhd: sum of k_s(α + τ_s + γ_s) halving + k_s(α + τ_s) doubling"
               : "rhd: MPICH pre/post steps + power-of-two core",
          pow2 && even && q.collective == Collective::kAllReduce};
}

Estimate ring(const EstimateRequest& q, u64 len, const Cut& cut, const Cost& c) {
  const int p = q.ranks;
  switch (q.collective) {
    case Collective::kAllReduce:
      return {ring_phase(Phase::kAllReduce, p, len, cut, c),
              "ring allreduce: (p-1)δγ + (p-2)δ0 + (K-1)τ + α + τ per loop", true};
    case Collective::kReduceScatter:
      return {ring_phase(Phase::kReduceScatter, p, len, cut, c),
              "ring reducescatter: (p-2)δγ + (K-1)τ + α + τ + γ per loop", true};
    case Collective::kAllGather:
      return {ring_phase(Phase::kAllGather, p, len, cut, c),
              "ring allgather: (p-2)δ0 + (K-1)τ + α + τ per loop", true};
    case Collective::kBroadcast: {
      const Pipe s = pipe(len, cut, c);
      if (p == 1) return {c.copy(len), "copy", true};
      const Time cp = c.copy(std::min(cut.op_bytes(), len));
      // The last forwarder's overhead on the last piece may outlast its arrival at the leaf.
      const Time last_o = p > 2 ? std::max(Time(), s.occ - s.tau - c.alpha()) : Time();
      const Time leaf =
          (c.alpha() + s.tau) * (p - 1) + s.occ * (s.k - 1) + cp * (s.ops - 1) + last_o;
      const Time root = (s.occ * (s.k / s.ops) + cp) * s.ops;
      return {std::max(leaf, root), "chain broadcast: (p-1)(α+τ) + (k-1)(τ+o)", s.even};
    }
    default: {
      const Pipe s = pipe(len, cut, c);
      if (p == 1) return {c.copy(len), "copy", true};
      const Time g = c.gamma(s.pb);
      // The last sender's overhead on the last piece may outlast its reduction at the root.
      const Time last_o = std::max(Time(), s.occ - s.tau - c.alpha() - g);
      return {(c.alpha() + s.tau + g) * (p - 1) + s.occ * (s.k - 1) + last_o,
              "chain reduce: (p-1)(α+τ+γ) + (k-1)(τ+o)", s.even};
    }
  }
}

Estimate tree(const EstimateRequest& q, u64 len, const Cut& cut, const Cost& c, int p,
              int extra_height) {
  const Pipe s = pipe(len, cut, c);
  const Time g = c.gamma(s.pb);
  const int h = tree_height(p) + extra_height;
  const Time up = (c.alpha() + s.tau + g) * h + s.tau * (s.k - 1);
  switch (q.collective) {
    case Collective::kBroadcast:
      return {tree_broadcast(p, s, c.copy(std::min(cut.op_bytes(), len)), c),
              "tree broadcast: one-port pipelined binary tree recurrence",
              extra_height == 0 && s.even};
    case Collective::kReduce:
      return {up, "tree reduce: height(α+τ+γ) + (k-1)τ", false};
    default:
      return {up - s.tau * (s.k - 1) + tree_broadcast(p, s, Time(), c),
              "tree allreduce: height(α+τ+γ) + pipelined broadcast", false};
  }
}

Estimate direct(const EstimateRequest& q, u64 len, const Cut& cut, const Cost& c) {
  const int p = q.ranks;
  const Pipe s = pipe(len, cut, c);
  const Time hop = c.alpha() + s.tau;
  switch (q.collective) {
    case Collective::kAllToAll:
    case Collective::kAllGather:
      return {hop * s.k * (p - 1) + c.copy(len), "direct: (p-1)k(α+τ)", false};
    case Collective::kScatter:
      return {s.tau * s.k * (p - 1) + c.alpha(), "direct scatter: (p-1)kτ + α", false};
    case Collective::kGather: {
      const std::int64_t refills = std::max<std::int64_t>(0, (s.k - 8 + 7) / 8);
      return {c.alpha() + s.tau * s.k + (c.alpha() * 2 + s.tau) * (refills * (p - 2)),
              "direct gather: α + kτ + (p-2)⌈(k-8)/8⌉(2α+τ)", false};
    }
    default:
      return {c.alpha() + s.tau * s.k, "sendrecv: α + kτ", false};
  }
}

Estimate binomial(const EstimateRequest& q, u64 len, const Cut& cut, const Cost& c) {
  const int lg = ceil_log2(q.ranks);
  const Pipe s = pipe(len, cut, c);
  switch (q.collective) {
    case Collective::kBarrier:
      return {c.alpha() * lg, "dissemination barrier: ⌈lg p⌉α", false};
    case Collective::kBroadcast:
      return {(c.alpha() + s.tau * s.k) * lg, "binomial broadcast: ⌈lg p⌉(α + nβ)", false};
    case Collective::kReduce:
      return {(c.alpha() + s.tau * s.k + c.gamma(len)) * lg, "binomial reduce: ⌈lg p⌉(α + nβ + nγ)",
              false};
    default: {
      const u64 moved = len * static_cast<u64>(q.ranks - 1);
      return {c.alpha() * lg + c.tau(moved), "binomial gather/scatter: ⌈lg p⌉α + (p-1)/p·nβ",
              false};
    }
  }
}

}  // namespace

EstimateRequest estimate_request(const ScheduleInfo& info, int nodes, const AlphaBetaCost& cost) {
  EstimateRequest q;
  q.collective = info.collective;
  q.algorithm = info.algorithm;
  q.ranks = info.ranks;
  q.nodes = nodes;
  q.bytes = info.bytes;
  q.channels = info.requested_channels;
  q.widest_channel_bytes = info.widest_channel_bytes();
  q.chunk_bytes = info.chunk_bytes;
  q.slices = info.slices;
  q.piece_bytes = info.fifo.slot_payload;
  q.cost = cost;
  return q;
}

namespace closed_form {

Estimate ring(const EstimateRequest& q) {
  const Shape s = shape_of(q);
  return collsim::ring(q, s.len, s.cut, s.intra);
}

Estimate tree(const EstimateRequest& q) {
  const Shape s = shape_of(q);
  return collsim::tree(q, s.len, s.cut, s.intra, s.p, 0);
}

Estimate dbtree(const EstimateRequest& q) {
  // Two trees on half the data each; chain inside the node, binary tree across nodes.
  const Shape s = shape_of(q);
  const int nodes = std::max(1, q.nodes);
  Estimate e = collsim::tree(q, ceil_div(s.len, 2), s.cut, s.inter, nodes, s.p / nodes - 1);
  e.formula = "dbtree: tree allreduce on n/2, height (g-1) + tree(nodes)";
  return e;
}

Estimate ring2d(const EstimateRequest& q) {
  const Shape s = shape_of(q);
  const int nodes = std::max(1, q.nodes);
  const int g = s.p / nodes;
  const u64 shard = ceil_div(s.len, static_cast<u64>(g));
  Time t;
  if (q.collective == Collective::kAllReduce) {
    t = ring_phase(Phase::kReduceScatter, g, shard, s.cut, s.intra) +
        ring_phase(Phase::kAllReduce, nodes, shard, s.cut, s.inter) +
        ring_phase(Phase::kAllGather, g, shard, s.cut, s.intra);
  } else {
    const Phase ph =
        q.collective == Collective::kAllGather ? Phase::kAllGather : Phase::kReduceScatter;
    t = ring_phase(ph, g, s.len * static_cast<u64>(nodes), s.cut, s.intra) +
        ring_phase(ph, nodes, s.len, s.cut, s.inter);
  }
  return {t, "ring2d: intra ring + inter ring on n/g + intra ring (docs/theory.md §1.6)", false};
}

Estimate rhd(const EstimateRequest& q) {
  const Shape s = shape_of(q);
  return collsim::rhd(q, s.len, s.cut, s.intra);
}

Estimate direct(const EstimateRequest& q) {
  const Shape s = shape_of(q);
  return collsim::direct(q, s.len, s.cut, s.intra);
}

Estimate binomial(const EstimateRequest& q) {
  const Shape s = shape_of(q);
  return collsim::binomial(q, s.len, s.cut, s.intra);
}

}  // namespace closed_form

namespace {

// One chunk loop of PAT (pat.cpp) on b bytes of every block: AllGather copies its own chunk in,
// crosses the D dimensions and copies the p chunks out; ReduceScatter packs the p chunks and
// reduces through the dimensions. Each dimension is an exchange per run of slots, cut into
// pieces of `agg` chunks: k_s(α + τ_s (+ γ_s)), as rhd's exchanges.
Time pat_loop(const EstimateRequest& q, u64 b, u64 agg, const Cut& cut, const Cost& c) {
  const int p = q.ranks;
  const bool rs = q.collective == Collective::kReduceScatter;
  Time t = c.copy(b) * (rs ? p : 1 + p);
  const Cut message{agg * b, 1, cut.piece};
  for (int d = 0; d < detail::pat_dims(p); ++d) {
    for (const detail::SlotRun& run : detail::pat_runs(p, d)) {
      const Pipe s = pipe(static_cast<u64>(run.end - run.begin) * b, message, c);
      t += (c.alpha() + s.tau + (rs ? c.gamma(s.pb) : Time())) * s.k;
    }
  }
  return t;
}

}  // namespace

namespace closed_form {

Estimate pat(const EstimateRequest& q) {
  // Approximate: the schedule's copies, exchanges and loops overlap on the FIFO where this sums
  // them.
  const Shape s = shape_of(q);
  if (s.p == 1) return {s.intra.copy(s.len), "copy", true};
  const u64 agg = detail::pat_aggregation(s.p, s.len, s.cut.piece);
  const u64 full = s.len / s.cut.chunk;
  const u64 rest = s.len % s.cut.chunk;
  Time t = pat_loop(q, s.cut.chunk, agg, s.cut, s.intra) * static_cast<std::int64_t>(full);
  if (rest > 0) t += pat_loop(q, rest, agg, s.cut, s.intra);
  return {t, "pat: per chunk, copies + sum over lg p dimensions of k_s(α + τ_s (+ γ_s))", false};
}

}  // namespace closed_form

Estimate estimate(const EstimateRequest& q) {
  const AlgorithmInfo& a = find_algorithm(q.algorithm);
  if (!a.implements(q.collective)) {
    throw RequestError(fmt::format("algorithm \"{}\" does not implement {}", q.algorithm,
                                   to_string(q.collective)));
  }
  if (a.closed_form == nullptr) {
    throw RequestError(fmt::format(
        "algorithm \"{}\" has no closed form yet; --model sim or contention-free simulates it",
        q.algorithm));
  }
  Estimate e = a.closed_form(q);
  e.time += q.cost.launch;
  // The derivations assume every channel and every rank's segment carries the same bytes, and a
  // flat algorithm every hop the same cost; otherwise the form is only approximate.
  const u64 region = is_blocked(q.collective)
                         ? q.bytes.count() / static_cast<u64>(std::max(1, q.ranks))
                         : q.bytes.count();
  const u64 ch = static_cast<u64>(std::max(1, q.channels));
  // An AllReduce's region is cut into one segment per rank; the other collectives move whole
  // blocks or the whole region.
  const bool equal_parts =
      region % ch == 0 && (q.widest_channel_bytes == 0 || q.widest_channel_bytes * ch == region);
  const bool even = equal_parts && (q.collective != Collective::kAllReduce ||
                                    region / ch % static_cast<u64>(std::max(1, q.ranks)) == 0);
  const bool uniform = a.hierarchical || q.nodes <= 1 || q.cost.uniform;
  e.exact = e.exact && even && uniform && !q.cost.staged_read;
  return e;
}

}  // namespace collsim
