// Chrome / Perfetto trace of a simulated run (the JSON "Trace Event Format" that
// ui.perfetto.dev and chrome://tracing both open).
//
//   TraceRecorder rec;
//   SimOptions o;  o.trace = &rec;
//   Result r = simulate(schedule, topo, o);
//   std::ofstream f("run.json");
//   write_trace(f, schedule, topo, r, rec);
//
// Layout: a process per rank ("rank 3 (node0/gpu3)"); in it, track 0 carries the collective's
// span named as NCCL names its kernel (ncclDevKernel_AllReduce_Sum_f32_RING_LL, so a simulated
// timeline reads like an nsys profile of NCCL) and track c+1 carries channel c, one slice per op
// with its bytes and peers in args. Flow arrows join each op that sends on a connection to the
// matching op that receives on it (the k-th of each, the IR's matching rule). A last process,
// "links", holds one counter track per busy link: its utilisation (0..1 of usable bandwidth)
// over time buckets. Times are microseconds with picosecond decimals.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "algorithms/ir/schedule.hpp"
#include "algorithms/ir/trace_events.hpp"
#include "simulator/simulate.hpp"

namespace collsim {

struct TraceOpRecord {
  std::int32_t rank = 0;
  std::int32_t channel = 0;
  std::uint64_t index = 0;
  Op op;
  Time start;
  Time end;
  std::uint64_t send_flow = 0;  // flow id (0: none) joining this op to its matching receiver
  std::uint64_t recv_flow = 0;
};

struct TracePieceRecord {
  std::uint32_t route = 0;  // into TraceRecorder::routes
  Time start;
  Time end;  // when its last byte left the sender
  std::uint64_t wire_bytes = 0;
};

// Filled by simulate() when SimOptions::trace points at it. Holds every op and piece, so use it
// for runs small enough to look at (a trace of a few hundred thousand ops is already large).
struct TraceRecorder {
  std::vector<TraceOpRecord> ops;
  std::vector<TracePieceRecord> pieces;
  std::vector<std::vector<LinkId>> routes;
  std::vector<double> link_capacity;  // usable wire bytes/s, by link id
};

struct TraceOptions {
  int counter_buckets = 200;   // time buckets of the link utilisation counters
  int max_link_counters = 64;  // the busiest links get a counter track
};

void write_trace(std::ostream& out, const Schedule& s, const Topology& topo, const Result& r,
                 const TraceRecorder& rec, const TraceOptions& options = {});

}  // namespace collsim
