// `collsim trace CONFIG --op OP --bytes SIZE [--algo A] [--proto P] [--channels N]
//  [--model sim|contention-free] [--select best|nccl] -o FILE.json`: a Chrome / Perfetto trace
// of the simulated run (simulator/trace.hpp), to open in ui.perfetto.dev or chrome://tracing.
// --algo/--proto auto are resolved as predict resolves them (evaluator.hpp), by the same model.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <memory>

#include "cli/collective_args.hpp"
#include "cli/commands.hpp"
#include "cli/option_checks.hpp"
#include "simulator/trace.hpp"
#include "topology/error.hpp"

namespace collsim {

namespace {

// A trace keeps every op and piece in memory and writes ~150 bytes per op; beyond this many ops
// it stops being something a viewer can open.
constexpr std::uint64_t kMaxTraceOps = 2'000'000;

struct TraceArgs {
  CollectiveArgs c;
  ModelArgs model;
  std::string output;
};

void run_trace(const TraceArgs& a) {
  check_writable(a.output, "-o");
  Prepared p = prepare(a.c);
  p.costs.line_forwarding = a.model.line_forwarding;
  const Predictor pr(predict_setup(p, a.model));
  const Choice choice = pr.choose(p.request.count);
  // The request predict times: NCCL's channels at this size, and how it divides among them.
  p.request = pr.request(choice.candidate, p.request.count);
  const Schedule s = plan(p.request);
  const std::uint64_t ops = s.total_ops();
  if (ops > kMaxTraceOps) {
    throw RequestError(fmt::format(
        "a trace of {} ops is too large to view (at most {}); use a smaller --bytes, fewer "
        "--channels or fewer --nodes",
        ops, kMaxTraceOps));
  }
  std::ofstream out(a.output);
  if (!out) throw Error(fmt::format("-o: cannot write \"{}\"", a.output));
  TraceRecorder rec;
  Result r;
  PredictOptions o;
  o.schedule = &s;
  o.trace = &rec;
  o.result = &r;
  predict(p.request, p.topo, p.costs, pr.model(), o);
  write_trace(out, s, p.topo, r, rec);
  if (!out) throw Error(fmt::format("-o: writing \"{}\" failed", a.output));
  fmt::print("wrote {}: {}/{}{}, {} ranks, {} channels, {} ops, {:.3f} us simulated ({})\n",
             a.output, choice.candidate.algorithm, to_string(choice.candidate.protocol),
             choice.how == "fixed" ? "" : " (auto, --select " + choice.how + ")", s.rank_count(),
             s.channel_count(), ops, r.total.us(), nccl_kernel_name(s.info()));
  if (!choice.note.empty()) fmt::print("note: {}\n", choice.note);
}

}  // namespace

void register_trace(CLI::App& app) {
  auto args = std::make_shared<TraceArgs>();
  CLI::App* cmd = app.add_subcommand(
      "trace", "Write a Chrome/Perfetto trace (JSON) of one simulated collective");
  add_collective_options(cmd, args->c);
  add_model_options(cmd, args->model, {Model::kMaxMin, Model::kContentionFree});
  cmd->add_option("-o,--output", args->output, "the trace file to write (.json)")->required();
  cmd->callback([args] { run_trace(*args); });
}

}  // namespace collsim
