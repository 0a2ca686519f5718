// Measures a schedule on a backend the way nccl-tests measures a collective: -w warm-up runs,
// then -n timed runs, then (with -c) one check of the result.
//
// Each timed iteration: every process meets at a barrier and runs the schedule once; the run's
// time is what the backend measured (RunResult::wall: host wall time for cpu and mpi, GPU time
// for cuda and nccl), and the iteration's time is the slowest process's (ProcessGroup::max,
// MPI_Allreduce MAX under MPI); the reported time is the average over the iterations. After the
// timed loop every process counts the wrong elements of its ranks' outputs (verifier.hpp
// count_wrong) and the counts are summed: nccl-tests' "#wrong" column (nccl-tests checks once after
// its loop, as with -c 1). Inputs are make_inputs(s, seed), each process filling only its ranks.
//
//   CpuBackend cpu;
//   BenchSample m = measure(cpu, plan(request), {.warmup = 5, .iters = 20});
//   double algbw = request_bytes(request).count() / m.time.seconds() / 1e9;   // GB/s
//   if (m.wrong > 0) std::cerr << m.wrong_detail;
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/backend.hpp"

namespace collsim {

struct BenchOptions {
  int warmup = 5;     // -w: untimed runs first
  int iters = 20;     // -n: timed runs (>= 1)
  bool check = true;  // -c: verify the outputs after the timed runs
  std::uint64_t seed = 1;
  RunOptions run = {};
  // One more run, after the check, with RunOptions::record_ops; its records, gathered from
  // every process, land in BenchSample::op_timings on process 0.
  bool trace = false;
};

struct BenchSample {
  Time time;                         // average over the timed runs of the slowest process's time
  std::uint64_t wrong = 0;           // wrong elements over all ranks (0 without check)
  std::string wrong_detail;          // this process's first mismatches, when it found some
  std::vector<OpTiming> op_timings;  // with BenchOptions::trace (process 0: every rank's)
};

// Throws RequestError for iters < 1 or warmup < 0, and whatever the backend's run() throws.
BenchSample measure(Backend& backend, const Schedule& s, const BenchOptions& options = {});

}  // namespace collsim
