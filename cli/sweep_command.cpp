// `collsim sweep CONFIG --op OP [-b MIN] [-e MAX] [-f FACTOR] [--algo A] [--proto P]
//  [--channels N] [--model M] [--select best|nccl] [--nccl-*] [--format table|csv|json]`:
// a size sweep, printed by default exactly like an nccl-tests table (docs/cli.md), so that it can
// be put beside a real run (cli/nccl_tests_table.hpp says what differs and how it is marked).
// `--format csv` prints docs/cli.md's columns, one row per size; `--format json` an object with the
// run's settings and a "rows" array of the same keys (plus "selected_by", "nccl_pick" and
// "note" where --algo/--proto auto chose).
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/collective_args.hpp"
#include "cli/commands.hpp"
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

void run_sweep(const SweepCommandArgs& a) {
  const Prepared p = prepare(a.c);
  const std::vector<SweepPoint> points = sweep_points(a.sweep, p);
  const Predictor ev(predict_setup(p, a.model));
  std::vector<std::uint64_t> counts;
  for (const SweepPoint& pt : points) counts.push_back(pt.count);
  std::vector<Choice> choices;
  {
    Progress progress("sweep", counts.size(), "sizes");
    choices = ev.choose_all(counts, [&](const std::string& s) { progress.step(s); });
  }
  std::vector<ResultRow> rows;
  for (std::size_t i = 0; i < points.size(); ++i) {
    Request r = p.request;
    r.count = points[i].count;
    rows.push_back(make_row(r, choices[i].candidate, choices[i].eval.time));
  }
  if (a.format == "csv") {
    std::cout << csv_header() << "\n";
    for (const ResultRow& r : rows) std::cout << csv_line(r) << "\n";
    return;
  }
  if (a.format == "json") {
    nlohmann::ordered_json j = run_json(ev);
    j["rows"] = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < rows.size(); ++i) {
      nlohmann::ordered_json row = to_json(rows[i]);
      add_choice_keys(row, choices[i]);
      j["rows"].push_back(std::move(row));
    }
    std::cout << j.dump(2) << "\n";
    return;
  }
  NcclTestsTable t =
      table_frame(ev, "sweep", sweep_min(a.sweep), sweep_max(a.sweep), a.sweep.factor);
  std::set<std::string> notes;
  for (const Choice& c : choices) {
    if (!c.note.empty() && notes.insert(c.note).second) t.comments.push_back("note: " + c.note);
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    t.rows.push_back({rows[i], std::nullopt, choice_label(ev, choices[i])});
  }
  write_nccl_tests_table(std::cout, t);
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
