// Ring AllReduce on the dgx-h100 preset with the default (NCCL-sourced) costs, not the preset's
// calibrated ones (docs/calibration.md), and the max-min network: large messages must stay
// within the physical limit and land near what NCCL measures; tiny ones cost a few to tens of
// microseconds. The reasoning behind the bounds:
//  - busbw cannot exceed the per-GPU NVLink bandwidth, 450 GB/s (docs/theory.md §3.8); with
//    NVLink's usable fraction 20.6/25 the links carry at most 370.8 GB/s, measured 365-370 GB/s
//    (docs/nccl-model.md §6 anchor 1). We ask for 300-371 GB/s at 1 GiB with 24 channels.
//  - The floor: launch (NCCL baseLat: LL 6.6, LL128 14, Simple 8.4 µs) plus 2(p-1) = 14 steps of
//    one hop each (0.6 µs of links + the protocol's excess: 0, 1.3, 2.8 µs): 15.0, 40.6 and
//    56.0 µs, NCCL's own model figures (§6 anchor 9); the 8-byte payload adds picoseconds.
#include <gtest/gtest.h>

#include "algorithms/generators/registry.hpp"
#include "simulator/simulate.hpp"
#include "topology/loader.hpp"

namespace collsim {
namespace {

Result run(const Topology& topo, Protocol p, std::uint64_t bytes, int channels) {
  Request q;
  q.collective = Collective::kAllReduce;
  q.algorithm = "ring";
  q.protocol = p;
  q.dtype = DataType::kF32;
  q.count = bytes / 4;
  q.channels = channels;
  q.comm = Communicator::from_topology(topo);
  return simulate(plan(q), topo);
}

double busbw_GBps(const Result& r, std::uint64_t bytes, int p) {
  return static_cast<double>(bytes) / r.total.seconds() * 2.0 * (p - 1) / p * 1e-9;
}

TEST(DgxH100, LargeRingAllReduceBusbwWithinPhysicalLimit) {
  const Topology topo = load_topology("dgx-h100", {.default_costs = true});
  const std::uint64_t bytes = std::uint64_t{1} << 30;
  const Result r = run(topo, Protocol::kSimple, bytes, 24);
  const double busbw = busbw_GBps(r, bytes, 8);
  EXPECT_LE(busbw, 370.8);
  EXPECT_GE(busbw, 300.0);
  const Link& b = topo.link(r.links[r.bottleneck].link);
  EXPECT_TRUE(is_nvlink_class(b.kind));
}

TEST(DgxH100, SmallMessageFloorIsMicroseconds) {
  const Topology topo = load_topology("dgx-h100", {.default_costs = true});
  // Simple: one step overhead (1.5 us) on the critical path: near the end a rank that forwards
  // one of the two data-carrying pieces is held for it before it sends its next piece, an empty
  // one, which the last rank to finish waits for (`collsim trace` of this run). LL128's overheads
  // lie off its critical path here; LL has none.
  // Each of the ring's 14 steps goes GPU -> NVSwitch -> GPU at 1.0 us for LL (the preset's
  // 0.5 us a link, docs/theory.md §3.2) where NCCL's model says 0.6: 5.6 us over NCCL's 15.0,
  // and the same 5.6 us over each of LL128's and Simple's earlier 40.6 and 57.5.
  const double expect_us[] = {20.6, 46.2, 63.1};
  for (Protocol p : all_protocols()) {
    const Result r = run(topo, p, 8, 1);
    EXPECT_NEAR(r.total.us(), expect_us[static_cast<int>(p)], 0.05) << to_string(p);
  }
}

}  // namespace
}  // namespace collsim
