// `collsim sweep CONFIG --op OP [-b MIN] [-e MAX] [-f FACTOR] [--algo A] [--proto P]
//  [--channels N] [--model M] [--select best|nccl] [--nccl-*] [--format table|csv|json]`:
// a size sweep, printed by default exactly like an nccl-tests table (docs/cli.md), so that it can
// be put beside a real run (cli/nccl_tests_table.hpp says what differs and how it is marked).
// `--format csv` prints docs/cli.md's columns, one row per size; `--format json` an object with the
// run's settings and a "rows" array of the same keys (plus "selected_by", "nccl_pick" and
// "note" where --algo/--proto auto chose). Rows are printed as their sizes are finished, in size
// order; Ctrl-C keeps every printed row and closes the document (cli/interrupt.hpp). Under
// `mpirun -np K` the sizes are shared out and process 0 prints (cli/distribute.hpp).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/collective_args.hpp"
#include "cli/commands.hpp"
#include "cli/distribute.hpp"
#include "cli/interrupt.hpp"
#include "cli/json_stream.hpp"
#include "cli/nccl_tests_table.hpp"
#include "cli/output_rows.hpp"
#include "cli/progress.hpp"
#include "cli/row_stream.hpp"
#include "cli/sweep_args.hpp"
#include "cli/sweep_output.hpp"
#include "predict/parallel.hpp"

namespace collsim {

namespace {

struct SweepCommandArgs {
  CollectiveArgs c;
  SweepArgs sweep;
  ModelArgs model;
  std::string format = "table";
};

// The sweep's output, written as the sizes are finished: a row per size in `a.format`. It opens
// (CSV header, JSON keys, the table's frame) with the first row, or at end() when no row came, so
// an error before any row leaves only the error; end() closes it valid whatever happened.
class SweepOutput {
 public:
  SweepOutput(const SweepCommandArgs& a, const Prepared& p, const Predictor& ev,
              const std::vector<SweepPoint>& points)
      : a_(a), p_(p), ev_(ev), points_(points) {}

  void row(std::size_t i, const Choice& c) {
    open();
    // The request as simulated: NCCL's channel count for this size (Predictor::request).
    const ResultRow row =
        make_row(ev_.request(c.candidate, points_[i].count), c.candidate, c.eval.time);
    ++rows_;
    if (a_.format == "csv") {
      std::cout << csv_line(row) << "\n" << std::flush;
    } else if (a_.format == "json") {
      nlohmann::ordered_json j = to_json(row);
      add_choice_keys(j, c);
      json_->row(j);
    } else {
      if (!c.note.empty() && std::find(notes_.begin(), notes_.end(), c.note) == notes_.end()) {
        notes_.push_back(c.note);
      }
      table_->row({row, std::nullopt, choice_label(ev_, c)});
    }
  }

  // `cut`: why rows are missing ("interrupted", or the error that stopped the sweep); empty when
  // every size is there.
  void end(const std::string& cut) {
    open();
    if (a_.format == "json") {
      nlohmann::ordered_json tail = nlohmann::ordered_json::object();
      if (cut == "interrupted") tail["interrupted"] = true;
      if (!cut.empty() && cut != "interrupted") tail["error"] = cut;
      json_->close(tail);
    } else if (a_.format == "table") {
      std::vector<std::string> trailer;
      for (const std::string& n : notes_) trailer.push_back("note: " + n);
      if (!cut.empty()) {
        trailer.push_back(fmt::format("{}: {} of {} sizes done; only those are above",
                                      cut == "interrupted" ? cut : "stopped by an error", rows_,
                                      points_.size()));
      }
      table_->end(trailer);
    }
    std::cout.flush();
  }

 private:
  void open() {
    if (opened_) return;
    opened_ = true;
    if (a_.format == "csv") {
      std::cout << csv_header() << "\n";
    } else if (a_.format == "json") {
      json_.emplace(std::cout, run_json(ev_));
    } else {
      table_.emplace(std::cout, table_frame(ev_, "sweep", sweep_min(a_.sweep),
                                            sweep_max(a_.sweep), a_.sweep.factor));
    }
  }

  const SweepCommandArgs& a_;
  const Prepared& p_;
  const Predictor& ev_;
  const std::vector<SweepPoint>& points_;
  bool opened_ = false;
  std::size_t rows_ = 0;
  std::vector<std::string> notes_;  // the table's notes, printed once each below the rows
  std::optional<JsonRows> json_;
  std::optional<NcclTestsTableWriter> table_;
};

// Under `mpirun -np K`: the sizes, handed out to the processes' workers as they free up and
// gathered on process 0, which prints what one process would (cli/distribute.hpp).
void sweep_across_processes(const SweepCommandArgs& a, const Prepared& p, const Predictor& ev,
                            const std::vector<SweepPoint>& points, const Distribution& d) {
  std::vector<double> weights;
  for (const SweepPoint& pt : points) weights.push_back(size_weight(pt.bytes));
  Progress progress("sweep", points.size(), "sizes handed out", d.prints());
  const Gathered all = d.run(
      weights, parallel_threads(),
      [&](std::size_t u) { return encode(ev.choose(points[u].count)); },
      [&](std::size_t u) { progress.step(human_bytes(points[u].bytes)); });
  progress.done();
  if (!d.prints()) return;
  SweepOutput output(a, p, ev, points);
  for (const auto& [i, choice] : all) output.row(i, decode_choice(choice));
  output.end("");
}

void run_sweep(const SweepCommandArgs& a) {
  const Prepared p = prepare(a.c);
  const std::vector<SweepPoint> points = sweep_points(a.sweep, p);
  const Predictor ev(predict_setup(p, a.model));
  const Distribution processes;
  if (processes.distributed()) {
    sweep_across_processes(a, p, ev, points, processes);
    return;
  }
  std::vector<std::uint64_t> counts;
  for (const SweepPoint& pt : points) counts.push_back(pt.count);
  SweepOutput output(a, p, ev, points);
  Progress progress("sweep", counts.size(), "sizes");
  InOrder<Choice> rows(counts.size(), [&](std::size_t i, const Choice& c) {
    progress.above([&] { output.row(i, c); });
  });
  InterruptWatch watch;
  bool finished = false;
  try {
    finished = watch.run([&] {
      ev.choose_each(
          counts, [&](const std::string& s) { progress.step(s); }, watch.cancel(),
          [&](std::size_t i, const Choice& c) { rows.put(i, c); });
    });
  } catch (const std::exception& e) {
    const std::size_t done = rows.close();
    progress.done();
    if (done > 0) output.end(e.what());  // rows are out: close the document, then the error
    throw;
  }
  const std::size_t done = rows.close();
  progress.done();
  output.end(finished ? "" : "interrupted");
  if (!finished) {
    std::vector<std::string> cut;
    for (std::size_t i = done; i < points.size(); ++i) cut.push_back(human_bytes(points[i].bytes));
    finish_interrupted(fmt::format("{} of {} sizes done; not done: {}", done, points.size(),
                                   fmt::join(cut, ", ")));
  }
}

}  // namespace

void register_sweep(CLI::App& app) {
  auto args = std::make_shared<SweepCommandArgs>();
  CLI::App* cmd =
      app.add_subcommand("sweep", "A size sweep, printed like an nccl-tests table (or CSV / JSON)");
  add_collective_options(cmd, args->c, false);
  add_sweep_options(cmd, args->sweep);
  add_model_options(cmd, args->model, all_models());
  cmd->add_option("--format", args->format, "table (nccl-tests), csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  cmd->callback([args] { run_sweep(*args); });
}

}  // namespace collsim
