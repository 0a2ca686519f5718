// Executors on real hardware: one interface, several implementations (ninja's CommandRunner
// shape: a real runner, a dry run, fakes in tests — `src/build.h` in ninja-build/ninja).
//
// A Backend runs a Schedule unchanged on host-side buffers it is given; it never decides
// anything the schedule does not say. The CPU backend (cpu_backend.hpp) moves real bytes between
// threads and is the correctness reference; the dry run only walks the schedule; the MPI, CUDA
// and NCCL backends (mpi/, cuda/, nccl/; registry.hpp opens them by name) implement the same
// interface and copy HostBuffers to and from their devices.
//
// A backend may run in several processes (MPI: one rank per process). Then each process executes
// only its local_ranks(), its HostBuffers need to hold only those ranks' buffers (the others may
// be empty), and processes() lets a driver (bench.hpp) synchronise them and combine results.
//
//   CpuBackend cpu;
//   HostBuffers buf = HostBuffers::for_schedule(s);      // zeroed, sized from the schedule
//   fill(buf.input[0]);
//   RunResult r = cpu.run(s, buf, {.record_ops = true}); // BackendError if it cannot finish
//   std::cout << r.wall.us() << " " << r.op_timings.size();
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "algorithms/ir/schedule.hpp"
#include "topology/units.hpp"

namespace collsim {

// Per rank, its input and output buffer (scratch belongs to the backend). Multi-process
// backends read and write only the entries of their local ranks.
struct HostBuffers {
  std::vector<std::vector<std::byte>> input;
  std::vector<std::vector<std::byte>> output;
  static HostBuffers for_schedule(const Schedule& s);
  // Sized for `ranks` only; every other rank's buffers are empty.
  static HostBuffers for_ranks(const Schedule& s, const std::vector<int>& ranks);
};

// When one op of a run started and ended, relative to the start of the run (the same record as
// the simulator's trace slices: simulator/trace.hpp TraceOpRecord without its flow ids, which
// follow from the IR's matching rule). trace_export.hpp writes them as a Perfetto trace.
struct OpTiming {
  std::int32_t rank = 0;
  std::int32_t channel = 0;
  std::uint64_t index = 0;  // op index in its (rank, channel) stream
  Op op;
  Time start;
  Time end;
  bool operator==(const OpTiming&) const = default;
};

struct RunOptions {
  int threads = 0;  // worker threads (CPU backend); 0: the machine's hardware concurrency
  // A run that makes no progress for this long is abandoned with a BackendError (a safety net;
  // the CPU backend detects a schedule that cannot finish as soon as every stream waits).
  std::chrono::milliseconds stall_timeout{60'000};
  // Record every op's start and end in RunResult::op_timings (costs time; for traces).
  bool record_ops = false;
  // For repeated runs (bench.hpp). same_inputs: the inputs are those of the previous run of this
  // schedule, so a backend keeping device copies need not copy them again. discard_outputs: the
  // outputs will not be read, so a backend may leave them on its devices. Backends working in
  // HostBuffers directly (cpu, mpi) ignore both.
  bool same_inputs = false;
  bool discard_outputs = false;
};

struct RunResult {
  std::vector<Time> rank_time;  // first op start to last op end, per rank (local ranks only)
  // The run's own time, what a benchmark reports: cpu and mpi, the wall time of executing the
  // schedule in this process; cuda and nccl, GPU time from the run's start to its last local
  // rank's end (copies between HostBuffers and the devices excluded).
  Time wall;
  std::uint64_t ops = 0;  // ops executed (by this process)
  std::uint64_t bytes_sent = 0;
  std::vector<OpTiming> op_timings;  // with RunOptions::record_ops, sorted by (rank, channel, op)
};

// The processes a backend runs in, for drivers that must agree across them. The default is one
// process (every single-process backend); MPI implements it over its communicator.
class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual int size() const { return 1; }
  virtual int index() const { return 0; }              // this process; 0 prints the results
  virtual int local_index() const { return index(); }  // among the processes on this host
  virtual void barrier() {}
  virtual double max(double v) { return v; }
  virtual std::uint64_t sum(std::uint64_t v) { return v; }
  // Process 0's bytes, on every process (MPI_Bcast); `bytes` has the same size everywhere.
  virtual void broadcast(std::vector<char>& /*bytes*/) {}
  // Every process's records, concatenated in process order, on process 0 (others get theirs).
  virtual std::vector<OpTiming> gather(std::vector<OpTiming> mine) { return mine; }
  // "host:pid" of every process, on process 0 (others get their own only).
  virtual std::vector<std::string> describe_processes();
  // Every process's text, in process order, on process 0 (others get their own only).
  virtual std::vector<std::string> gather_text(std::string mine) { return {std::move(mine)}; }
  // Units of work handed out one at a time, to whichever process asks first
  // (cli/distribute.hpp). Process 0: answers every request already waiting with take()'s unit
  // (nullopt once none is left), without blocking, and returns how many processes it answered
  // nullopt. The others: asks process 0 for a unit and waits for the answer. One process asks
  // and answers nothing.
  virtual int answer_unit_requests(const std::function<std::optional<std::size_t>()>& /*take*/) {
    return 0;
  }
  virtual std::optional<std::size_t> request_unit() { return std::nullopt; }
  // Stops every process of the job after a failure in this one, which the others would
  // otherwise wait for forever (MPI_Abort). Single process: does nothing, the caller's exception
  // ends the program as usual. Only a program's top level (the CLI) calls this.
  virtual void abort_all(int /*code*/) {}
};

// Whether an MPI launcher (mpirun / mpiexec / srun) started this process, from the environment
// it sets (Open MPI, MPICH / Intel MPI's PMI, PMIx, Slurm); needs no MPI. Decides whether `nccl`
// runs one process over all visible GPUs or one rank per process, and whether the MPI backend
// can run here (registry.hpp's BackendNeeds::kMpiLauncher).
bool launched_by_mpi();

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  // Runs `s` once. `buffers` must hold s.rank_count() entries, with inputs and outputs of the
  // schedule's sizes for every local rank (RequestError otherwise); outputs are written in place.
  // Throws BackendError on failure.
  virtual RunResult run(const Schedule& s, HostBuffers& buffers,
                        const RunOptions& options = {}) = 0;
  // The ranks of `s` this process executes. Default: all of them. Throws BackendError when the
  // schedule does not fit the processes (an MPI job of another size).
  virtual std::vector<int> local_ranks(const Schedule& s) const;
  // Where each local rank runs, for nccl-tests' "# Rank ... device ..." lines: the device index
  // and a description ("[0000:1b:00] NVIDIA H100 80GB HBM3"). Default: device 0, "[cpu] host".
  struct Placement {
    int device = 0;
    std::string description;
  };
  virtual Placement placement(int rank) const;
  // Lines for the header of a measured table, after the "# Rank" lines ("# " added): what a
  // reader must know of the run, as "NCCL version 2.28.9" (which calibrate and validate read
  // to model that NCCL's choices). Default: none.
  virtual std::vector<std::string> header_comments() const { return {}; }
  virtual ProcessGroup& processes() { return single_; }
  // The rank count this backend runs when none is asked for (MPI: the job's processes; CUDA and
  // NCCL: the GPUs); 0 when it has no preference.
  virtual int preferred_ranks() const { return 0; }
  // Whether it runs schedules whose switch computes (switch actors, schedule.hpp: NVLS). Only
  // the walkers of every actor in one process do (cpu, dry-run); the others refuse such a
  // schedule with refuse_switch_actors().
  virtual bool runs_switch_actors() const { return false; }

 private:
  ProcessGroup single_;
};

// BackendError "<backend> backend cannot run ... (nvls)" when `s` has switch actors.
void refuse_switch_actors(const Schedule& s, std::string_view backend);

// Walks every stream and counts ops and bytes; touches no data. For timing the IR itself and
// checking that a schedule can be consumed end to end.
class DryRunBackend final : public Backend {
 public:
  std::string_view name() const override { return "dry-run"; }
  RunResult run(const Schedule& s, HostBuffers& buffers, const RunOptions& options = {}) override;
};

// Throws RequestError unless `b` fits `s` for `ranks` (every rank when empty); used by every
// backend's run().
void check_buffers(const Schedule& s, const HostBuffers& b, const std::vector<int>& ranks = {});

}  // namespace collsim
