// The Trace Event Format (Chrome / Perfetto JSON) pieces that a simulated run
// (simulator/trace.hpp) and a measured run (backends/trace_export.hpp) share, so both lay out a
// schedule the same way and open side by side in ui.perfetto.dev:
//
//   TraceEventWriter w(out);                       // opens {"traceEvents":[ ... closes on scope
//   exit w.rank_tracks(rank, "node0/gpu3", s.channel_count(), kernel_name, finish, s.info());
//   w.op_slice(rank, channel, index, op, start, end);
//   w.flow_start(id, rank, channel, start);  w.flow_end(id, peer, channel, start);
//
// Layout: a process per rank ("rank 3 (label)"); track 0 carries the collective's span, track
// c+1 carries channel c with one slice per op (args: op index, bytes, from, to); flow arrows join
// the op that sends a piece stream to the op that receives it. Times are microseconds with
// picosecond decimals. The JSON is streamed by hand: every string written is our own ASCII, and
// labels pass through json_escape.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

#include "algorithms/ir/op.hpp"
#include "algorithms/ir/schedule.hpp"
#include "topology/units.hpp"

namespace collsim {

// Microseconds with picosecond decimals ("12.000250"); negative times print as 0.
std::string trace_timestamp(Time t);
// Quotes and backslashes escaped, for a string inside a JSON string.
std::string json_escape(std::string_view s);

// The name NCCL gives the kernel running this schedule: ncclDevKernel_<Coll>_<Op>_<type>_<ALGO>_
// <PROTO>, e.g. ncclDevKernel_AllReduce_Sum_f32_RING_LL (NCCL src/device/generate.py names; our
// algorithms map ring/ring2d -> RING, tree/dbtree -> TREE, others upper-cased).
std::string nccl_kernel_name(const ScheduleInfo& info);

class TraceEventWriter {
 public:
  explicit TraceEventWriter(std::ostream& out);
  ~TraceEventWriter();
  TraceEventWriter(const TraceEventWriter&) = delete;
  TraceEventWriter& operator=(const TraceEventWriter&) = delete;

  // One event; `body` is the object's members without braces.
  void event(const std::string& body);

  // A rank's process ("rank R (label)"), its kernel track and one track per channel, and the
  // collective's span named `span_name` from 0 to `finish`.
  void rank_tracks(int rank, std::string_view label, int channels, std::string_view span_name,
                   Time finish, const ScheduleInfo& info);
  // One op of channel `channel` (track channel + 1).
  void op_slice(int rank, int channel, std::uint64_t index, const Op& op, Time start, Time end);
  // The two ends of flow arrow `id`.
  void flow_start(std::uint64_t id, int rank, int channel, Time at);
  void flow_end(std::uint64_t id, int rank, int channel, Time at);

 private:
  std::ostream& out_;
  bool first_ = true;
};

}  // namespace collsim
