// The CPU backend: runs any Schedule with real bytes, in memory, on a pool of threads.
//
// Each (rank, channel) stream is a task; a pool of worker threads (RunOptions::threads, default
// the hardware concurrency) advances runnable streams. Connections are the bounded FIFOs of
// schedule.hpp: at most `fifo.slots` pieces of at most `fifo.slot_payload` bytes each, a piece
// copied into the FIFO by the sender and out of it by the receiver. A stream that must wait (no
// piece to receive, no free slot, a dependency not done) is parked on that one event and resumed
// when it happens, so no thread spins or blocks on a peer (the walk, its credits and its parking
// are algorithms/ir/schedule_walk.hpp's). When every unfinished stream is parked the run cannot
// finish: run() throws BackendError naming the stuck ranks and ops.
// Reductions use reduce_kernels.hpp (avg divides in the schedule's postop ops).
//
//   CpuBackend cpu;
//   HostBuffers buf = HostBuffers::for_schedule(s);
//   RunResult r = cpu.run(s, buf, {.threads = 2});
#pragma once

#include "backends/backend.hpp"

namespace collsim {

class CpuBackend final : public Backend {
 public:
  std::string_view name() const override { return "cpu"; }
  bool runs_switch_actors() const override { return true; }
  RunResult run(const Schedule& s, HostBuffers& buffers, const RunOptions& options = {}) override;
};

}  // namespace collsim
