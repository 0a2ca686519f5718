// `collsim sweep CONFIG --op OP [-b MIN] [-e MAX] [-f FACTOR] [--algo A] [--proto P]
//  [--channels N] [--model M] [--select best|nccl] [--nccl-*] [--format table|csv|json]`:
// a size sweep, printed by default exactly like an nccl-tests table (docs/cli.md), so that it can
// be put beside a real run (cli/nccl_tests_table.hpp says what differs and how it is marked).
// `--format csv` prints docs/cli.md's columns, one row per size; `--format json` an object with the
// run's settings and a "rows" array of the same keys (plus "selected_by", "nccl_pick" and
// "note" where --algo/--proto auto chose).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/collective_args.hpp"
#include "cli/commands.hpp"
#include "cli/interrupt.hpp"
#include "cli/nccl_tests_table.hpp"
#include "cli/output_rows.hpp"
#include "cli/progress.hpp"
#include "cli/sweep_args.hpp"
#include "cli/sweep_output.hpp"

namespace collsim {

namespace {

struct SweepCommandArgs {
  CollectiveArgs c;
  SweepArgs sweep;
  ModelArgs model;
  std::string format = "table";
};

// Prints the rows of the sizes in `done` (all of them unless interrupted) in `a.format`.
void print_sweep(const SweepCommandArgs& a, const Prepared& p, const Predictor& ev,
                 const std::vector<SweepPoint>& points,
                 const std::vector<std::optional<Choice>>& choices, bool interrupted) {
  std::vector<ResultRow> rows;
  std::vector<const Choice*> chosen;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (!choices[i]) continue;
    Request r = p.request;
    r.count = points[i].count;
    rows.push_back(make_row(r, choices[i]->candidate, choices[i]->eval.time));
    chosen.push_back(&*choices[i]);
  }
  if (a.format == "csv") {
    std::cout << csv_header() << "\n";
    for (const ResultRow& r : rows) std::cout << csv_line(r) << "\n";
    return;
  }
  if (a.format == "json") {
    nlohmann::ordered_json j = run_json(ev);
    if (interrupted) j["interrupted"] = true;
    j["rows"] = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < rows.size(); ++i) {
      nlohmann::ordered_json row = to_json(rows[i]);
      add_choice_keys(row, *chosen[i]);
      j["rows"].push_back(std::move(row));
    }
    std::cout << j.dump(2) << "\n";
    return;
  }
  NcclTestsTable t =
      table_frame(ev, "sweep", sweep_min(a.sweep), sweep_max(a.sweep), a.sweep.factor);
  if (interrupted) {
    t.comments.push_back(fmt::format("interrupted: {} of {} sizes done; only those are below",
                                     rows.size(), points.size()));
  }
  std::set<std::string> notes;
  for (const Choice* c : chosen) {
    if (!c->note.empty() && notes.insert(c->note).second) t.comments.push_back("note: " + c->note);
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    t.rows.push_back({rows[i], std::nullopt, choice_label(ev, *chosen[i])});
  }
  write_nccl_tests_table(std::cout, t);
}

void run_sweep(const SweepCommandArgs& a) {
  const Prepared p = prepare(a.c);
  const std::vector<SweepPoint> points = sweep_points(a.sweep, p);
  const Predictor ev(predict_setup(p, a.model));
  std::vector<std::uint64_t> counts;
  for (const SweepPoint& pt : points) counts.push_back(pt.count);
  std::vector<std::optional<Choice>> choices(counts.size());
  std::mutex mutex;  // `choices` is filled from the predictor's worker threads
  Progress progress("sweep", counts.size(), "sizes");
  InterruptWatch watch;
  const bool finished = watch.run([&] {
    ev.choose_each(
        counts, [&](const std::string& s) { progress.step(s); }, watch.cancel(),
        [&](std::size_t i, const Choice& c) {
          const std::lock_guard<std::mutex> lock(mutex);
          choices[i] = c;
        });
  });
  progress.done();
  const std::lock_guard<std::mutex> lock(mutex);
  print_sweep(a, p, ev, points, choices, !finished);
  if (!finished) {
    std::vector<std::string> cut;
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (!choices[i]) cut.push_back(human_bytes(points[i].bytes));
    }
    finish_interrupted(fmt::format("{} of {} sizes done; not done: {}", points.size() - cut.size(),
                                   points.size(), fmt::join(cut, ", ")));
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
