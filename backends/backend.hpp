// Executors on real hardware: one interface, several implementations (ninja's CommandRunner
// shape: a real runner, a dry run, fakes in tests — `src/build.h` in ninja-build/ninja).
//
// A Backend runs a Schedule unchanged on host-side buffers it is given; it never decides
// anything the schedule does not say. The CPU backend (cpu_backend.hpp) moves real bytes between
// threads and is the correctness reference; the dry run only walks the schedule; MPI, CUDA and
// NCCL backends implement the same interface (they copy HostBuffers to and from their devices).
//
//   std::unique_ptr<Backend> b = make_backend("cpu");
//   HostBuffers buf = HostBuffers::for_schedule(s);      // zeroed, sized from the schedule
//   fill(buf.input[0]);
//   RunResult r = b->run(s, buf);                        // BackendError if it cannot finish
//   std::cout << r.wall.us();
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "algorithms/schedule.hpp"
#include "topology/units.hpp"

namespace collsim {

// Per rank, its input and output buffer (scratch belongs to the backend).
struct HostBuffers {
  std::vector<std::vector<std::byte>> input;
  std::vector<std::vector<std::byte>> output;
  static HostBuffers for_schedule(const Schedule& s);
};

struct RunOptions {
  int threads = 0;  // worker threads; 0: the machine's hardware concurrency
  // A run that makes no progress for this long is abandoned with a BackendError (a safety net;
  // a schedule that cannot finish is detected as soon as every stream waits).
  std::chrono::milliseconds stall_timeout{60'000};
};

struct RunResult {
  std::vector<Time> rank_time;  // first op start to last op end, per rank
  Time wall;                    // the whole run
  std::uint64_t ops = 0;        // ops executed
  std::uint64_t bytes_sent = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  // Runs `s` once. `buffers` must hold s.rank_count() inputs and outputs of the schedule's sizes
  // (RequestError otherwise); outputs are written in place. Throws BackendError on failure.
  virtual RunResult run(const Schedule& s, HostBuffers& buffers,
                        const RunOptions& options = {}) = 0;
};

// Walks every stream and counts ops and bytes; touches no data. For timing the IR itself and
// checking that a schedule can be consumed end to end.
class DryRunBackend final : public Backend {
 public:
  std::string_view name() const override { return "dry-run"; }
  RunResult run(const Schedule& s, HostBuffers& buffers, const RunOptions& options = {}) override;
};

// "cpu" or "dry-run"; RequestError listing the available ones otherwise.
std::unique_ptr<Backend> make_backend(std::string_view name);

// Throws RequestError unless `b` fits `s` (used by every backend's run()).
void check_buffers(const Schedule& s, const HostBuffers& b);

}  // namespace collsim
