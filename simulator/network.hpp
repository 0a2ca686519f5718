// The two network models behind one interface (internal to simulator/).
//
// The engine (engine.hpp) is a template over the network model, so the hot loop makes no virtual
// call; both models provide
//   static constexpr bool kKnowsFinish;   // true: start() depends on route and bytes alone, so
//                                         // the engine may time a full piece once per route
//   // Starts pushing `wire_bytes` over `route` at `now` for connection `owner`, as `weight`
//   // identical flows (a folded channel stands for `weight` NCCL channels: symmetry.hpp).
//   // Contention-free: returns the transmission time (known at once, no event).
//   // Max-min: returns kPending; a kFlowDone event later reports the end (finish()).
//   Time start(const RouteInfo& route, std::uint64_t wire_bytes, Time now, std::uint32_t owner,
//              std::uint32_t weight);
// The contract test (tests/simulator/network_contract_test.cpp) runs the same schedules through
// both and requires identical times wherever no link is shared.
//
//   RouteInfo r{...};                         // built once per GPU pair by the engine
//   Time tx = AlphaBetaNetwork{}.start(r, 1 << 20, now, conn);
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "topology/units.hpp"

namespace collsim::detail {

// One directed GPU-to-GPU route as the hot loop needs it, computed once per pair.
struct RouteInfo {
  std::uint32_t first_link = 0;  // into the engine's flat array of link indices
  std::uint32_t link_count = 0;
  Time latency;     // link latencies + the protocol's per-hop excess
  // What a slot's credit takes to come back (the receiver's head counter, polled by the sender
  // or, across the network, NCCL's clear-to-send): link latencies + LL's per-hop excess, one
  // flag's crossing, whatever protocol the data used (engine_setup.cpp, route_between).
  Time credit_latency;
  double rate = 0;  // wire rate alone on the route, bytes/s: min(bottleneck, cap), the
                    // bottleneck / channels under the contention-free model
  double cap = 0;   // the channel cap in wire bytes/s (infinity: none)
  // The receiver reads each piece out of host memory (NCCL's SHM buffer, or the proxy's bounce
  // buffer without GPUDirect RDMA): a receive that forwards nothing holds its channel while it
  // does, or on NCCL's point-to-point kernel its receiving warps (engine.cpp, advance).
  bool staged_read = false;
  // It crosses the network: NCCL's proxy sends a step once the GPU has written all of it
  // (src/transport/net.cc), so a forward onto it is store and forward, whatever the protocol.
  bool proxied = false;
};

inline constexpr Time kPending = Time::max();

// Picoseconds to stream `bytes` at `rate` bytes/s, rounded up (as transfer_time() does).
//
// The value is the long double quotient's ceiling, computed in double where that is provably the
// same integer: the double quotient is within 2^-51 of the exact one relatively (two roundings
// of 2^-53), the long double one within 2^-63, so when no integer lies within d x 2^-50 of the
// double quotient d, both round up to the same picosecond. Otherwise (an exact or nearly exact
// integer, or a time past 2^52 ps) the long double path decides. The max-min engine re-times a
// flow class with this on every rate change, and the x87 division and llrint were a tenth of it.
inline Time wire_time(double bytes, double rate) {
  if (bytes <= 0) return Time();
  const double d = bytes * 1e12 / rate;
  if (d < 0x1p52) {
    const auto whole = static_cast<std::int64_t>(d);  // truncates: d >= 0
    const std::int64_t up = whole + (static_cast<double>(whole) < d ? 1 : 0);
    const double margin = d * 0x1p-50;
    if (d + margin <= static_cast<double>(up) && d - margin > static_cast<double>(up - 1)) {
      return Time::from_ps(up);
    }
  }
  const long double ps = static_cast<long double>(bytes) * 1e12L / static_cast<long double>(rate);
  if (ps >= static_cast<long double>(std::numeric_limits<std::int64_t>::max() / 2)) {
    return Time::from_ps(std::numeric_limits<std::int64_t>::max() / 2);
  }
  return Time::from_ps(ceil_to_int64(ps));
}

// Contention-free α-β: every transfer streams at its share of its route's bottleneck rate.
class AlphaBetaNetwork {
 public:
  static constexpr bool kKnowsFinish = true;
  Time start(const RouteInfo& route, std::uint64_t wire_bytes, Time /*now*/,
             std::uint32_t /*owner*/, std::uint32_t /*weight*/ = 1) {
    return wire_time(static_cast<double>(wire_bytes), route.rate);
  }
};

}  // namespace collsim::detail
