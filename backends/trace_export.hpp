// A measured run as a Chrome / Perfetto trace (the JSON Trace Event Format), laid out exactly as
// the simulator lays out a simulated run (simulator/trace.hpp), so the two open side by side in
// ui.perfetto.dev: a process per rank, track 0 the whole collective, track c+1 channel c with
// one slice per op (args: op index, bytes, from, to), and flow arrows from each op that sends on
// a connection to the op that receives the same piece stream (the k-th of each, the IR's
// matching rule). Times are microseconds from the start of the run; under MPI each process's
// clock starts at the barrier before the traced run.
//
//   BenchSample m = measure(backend, s, {.trace = true});
//   std::ofstream f("measured.json");
//   write_measured_trace(f, s, m.op_timings, "cpu");
#pragma once

#include <iosfwd>
#include <string_view>
#include <vector>

#include "algorithms/ir/schedule.hpp"
#include "backends/backend.hpp"

namespace collsim {

// `ops` sorted by (rank, channel, index), as RunResult::op_timings are; `backend` names the
// executor in the collective's slice ("AllReduce ring simple (cpu)").
void write_measured_trace(std::ostream& out, const Schedule& s, const std::vector<OpTiming>& ops,
                          std::string_view backend);

}  // namespace collsim
