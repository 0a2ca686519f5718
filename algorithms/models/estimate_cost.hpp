// The α-β costs the closed forms are built from (internal to algorithms/models/): one level's
// hop latency and link rate with the protocol's costs (Cost), how a schedule is cut (Cut), and a
// request's shape in those terms (Shape). Shared by the closed forms of estimate.cpp and
// estimate_switch.cpp; every quantity is computed as the simulator computes
// it, so that the exact forms agree with the contention-free simulation to the picosecond.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "algorithms/generators/generator.hpp"
#include "algorithms/models/estimate.hpp"

namespace collsim::estimate_detail {

using detail::ceil_div;
using u64 = std::uint64_t;

struct Level {
  Time alpha;
  Bandwidth bw;
};

class Cost {
 public:
  Cost(const AlphaBetaCost& c, Level l) : c_(c), l_(l) {}
  Time alpha() const { return l_.alpha; }
  // A hop through a switch actor: two routes (GPU to switch, switch to GPU) whose links add up
  // to the GPU-to-GPU route's, each paying the protocol's per-route excess.
  Time alpha_via_switch() const { return l_.alpha + c_.hop_excess; }
  // A piece of b payload bytes puts ⌈b / efficiency⌉ bytes on the wire, computed as the
  // simulator computes it so that the two agree to the picosecond.
  Time tau(u64 b) const {
    if (b == 0) return Time();
    const u64 wire = c_.wire_per_byte == 1.0
                         ? b
                         : static_cast<u64>(std::ceil(static_cast<double>(b) * c_.wire_per_byte));
    return transfer_time(Bytes(wire), l_.bw);
  }
  // The step overhead o: a sender holds its channel τ + o for a piece, which arrives τ + α after
  // it started (the overhead is the sender's own time, not the piece's latency).
  Time o() const { return c_.step_overhead; }
  Time occ(u64 b) const { return b == 0 ? Time() : tau(b) + o(); }
  // A GPU's stream of b bytes in pieces of `piece`: its pushes and the overhead after every
  // piece but the last, which the stream's end does not wait for.
  Time stream(u64 b, u64 piece) const {
    const auto pieces = static_cast<std::int64_t>(ceil_div(b, piece));
    return tau(b) + o() * std::max<std::int64_t>(0, pieces - 1);
  }
  Time gamma(u64 b) const {
    return b == 0 || c_.reduce_bandwidth.bytes_per_second() <= 0
               ? Time()
               : transfer_time(Bytes(b), c_.reduce_bandwidth);
  }
  Time copy(u64 b) const {
    return b == 0 || c_.copy_bandwidth.bytes_per_second() <= 0
               ? Time()
               : transfer_time(Bytes(b), c_.copy_bandwidth);
  }

 private:
  const AlphaBetaCost& c_;
  Level l_;
};

struct Cut {
  u64 chunk = 1;   // bytes per ring segment / tree chunk
  int slices = 1;  // ops per chunk
  u64 piece = 1;   // FIFO slot payload
  u64 op_bytes() const { return std::max<u64>(1, chunk / static_cast<u64>(slices)); }
};

// ⌈log₂ p⌉: the rounds of a binomial tree or recursive doubling over p members, or a binary
// tree's height over p nodes.
inline int ceil_log2(int p) {
  int l = 0;
  while ((1 << l) < p) ++l;
  return l;
}

// What every closed form starts from: one channel's region, the schedule's cut, the costs of
// the intra- and inter-node levels.
struct Shape {
  int p;
  u64 len;
  Cut cut;
  Cost intra;
  Cost inter;
};

inline Shape shape_of(const EstimateRequest& q) {
  const int p = std::max(1, q.ranks);
  const u64 ch = static_cast<u64>(std::max(1, q.channels));
  // Bytes of one channel's region: the whole vector, or one rank's block for the blocked
  // collectives (nccl-tests' size is then p blocks).
  u64 len = q.bytes.count();
  if (is_blocked(q.collective)) len /= static_cast<u64>(p);
  len = q.widest_channel_bytes != 0 ? q.widest_channel_bytes : ceil_div(len, ch);
  Cut cut;
  cut.piece = std::max<u64>(1, q.piece_bytes);
  cut.chunk = std::max<u64>(1, q.chunk_bytes == 0 ? cut.piece : q.chunk_bytes);
  cut.slices = std::max(1, q.slices);
  const Level inter_level{
      q.cost.alpha_inter == Time() ? q.cost.alpha : q.cost.alpha_inter,
      q.cost.bandwidth_inter.bytes_per_second() > 0 ? q.cost.bandwidth_inter : q.cost.bandwidth};
  return {p, len, cut, Cost(q.cost, {q.cost.alpha, q.cost.bandwidth}), Cost(q.cost, inter_level)};
}

}  // namespace collsim::estimate_detail
