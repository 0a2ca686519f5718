#include "backends/bench.hpp"

#include <fmt/format.h>

#include "backends/verifier.hpp"
#include "topology/error.hpp"

namespace collsim {

BenchSample measure(Backend& backend, const Schedule& s, const BenchOptions& options) {
  if (options.iters < 1)
    throw RequestError(fmt::format("-n: expected >= 1 timed iterations, got {}", options.iters));
  if (options.warmup < 0)
    throw RequestError(fmt::format("-w: expected >= 0 warm-up iterations, got {}", options.warmup));
  ProcessGroup& group = backend.processes();
  const std::vector<int> mine = backend.local_ranks(s);
  HostBuffers buffers = HostBuffers::for_ranks(s, mine);
  for (int r : mine) fill_input(s, options.seed, r, buffers.input[r]);

  // Inputs go to the devices once; outputs come back only from the last run, for the check.
  RunOptions run = options.run;
  run.discard_outputs = true;
  int runs = 0;
  auto once = [&](bool last) {
    run.same_inputs = runs++ > 0;
    run.discard_outputs = !last;
    return backend.run(s, buffers, run);
  };
  for (int i = 0; i < options.warmup; ++i) once(false);
  double total_s = 0;
  for (int i = 0; i < options.iters; ++i) {
    group.barrier();
    total_s += group.max(once(i + 1 == options.iters).wall.seconds());
  }
  BenchSample sample;
  sample.time = sec(total_s / options.iters);
  if (options.check) {
    std::uint64_t wrong = 0;
    for (int r : mine) {
      WrongCount w = count_wrong(s, options.seed, r, buffers.output[r]);
      wrong += w.wrong;
      if (!w.detail.empty()) {
        sample.wrong_detail += (sample.wrong_detail.empty() ? "" : "; ") + w.detail;
      }
    }
    sample.wrong = group.sum(wrong);
  }
  if (options.trace) {
    RunOptions traced = options.run;
    traced.record_ops = true;
    traced.same_inputs = true;
    group.barrier();
    sample.op_timings = group.gather(backend.run(s, buffers, traced).op_timings);
  }
  return sample;
}

}  // namespace collsim
