// The α-β costs the closed forms are built from (internal to algorithms/models/): one level's
// hop latency and link rate with the protocol's costs (Cost), and how a schedule is cut (Cut).
// Shared by estimate.cpp's closed forms; every quantity is computed as the simulator computes
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

}  // namespace collsim::estimate_detail
