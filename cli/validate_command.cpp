// `collsim validate CONFIG --measurements FILE... [--op OP] [--min-bytes B] [--max-bytes B]
//  [--model sim|contention-free|alpha-beta|nccl] [--costs F...] [--nodes N] [--format
//  table|csv|json]`: collsim's prediction against every measured row (nccl-tests logs
// or `collsim bench` output), the signed error, and median / p90 / max absolute error per file (per
// collective of a file that holds several) and overall (docs/cli.md fixes the JSON keys). Which
// algorithm and protocol a row is compared with: calibrate/row_model.hpp (the file's NCCL_ALGO /
// NCCL_PROTO or label, else NCCL's own choice).
// --model nccl gives NCCL's tuning-model time for NCCL's own pick instead, for comparison.
// The rows are predicted on parallel_threads() threads and printed in order as they finish, with
// a progress line on a terminal; Ctrl-C keeps the rows printed, and the statistics are over them
// (cli/interrupt.hpp).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "calibrate/calibration.hpp"
#include "cli/commands.hpp"
#include "cli/interrupt.hpp"
#include "cli/json_stream.hpp"
#include "cli/measurement_args.hpp"
#include "cli/model_options.hpp"
#include "cli/option_checks.hpp"
#include "cli/output_rows.hpp"
#include "cli/progress.hpp"
#include "cli/request_options.hpp"
#include "cli/row_stream.hpp"
#include "predict/parallel.hpp"
#include "topology/error.hpp"

namespace collsim {

namespace {

struct ValidateArgs {
  std::string config;
  std::optional<int> nodes;
  std::vector<std::string> cost_files;
  bool default_costs = false;
  MeasurementArgs measurements;
  std::string model = "sim";
  std::string format = "table";
  bool line_forwarding = false;
};

double rounded(double v, double scale) { return std::round(v * scale) / scale; }

ResultRow out_row(const ValidationRow& r) {
  return make_row(r.c.request, {r.c.request.algorithm, r.c.request.protocol},
                  us(r.predicted_us.value_or(0)));
}

// Statistics over no row are null, never a 0 % error a script would read as a perfect prediction.
nlohmann::ordered_json stat(const ErrorStats& s, double v) {
  return s.rows == 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(rounded(v, 1e4));
}

nlohmann::ordered_json stats_json(const ErrorStats& s) {
  nlohmann::ordered_json j;
  j["rows"] = s.rows;
  j["median_abs_error_pct"] = stat(s, s.median_abs_pct);
  j["p90_abs_error_pct"] = stat(s, s.p90_abs_pct);
  j["max_abs_error_pct"] = stat(s, s.max_abs_pct);
  return j;
}

// The paths of the files that hold several collectives, whose parts the output tells apart.
std::set<std::string> files_of_several(const std::vector<MeasurementFile>& files) {
  std::set<std::string> seen, several;
  for (const MeasurementFile& f : files) {
    if (!seen.insert(f.path).second) several.insert(f.path);
  }
  return several;
}

std::string part_suffix(const std::set<std::string>& several, const std::string& path,
                        Collective c) {
  return several.contains(path) ? fmt::format(" ({})", to_string(c)) : "";
}

void print_stats_line(const std::string& label, const ErrorStats& s) {
  if (s.rows == 0) {
    fmt::print("{:<48} {:>5} rows  (no statistics)\n", label, s.rows);
    return;
  }
  fmt::print("{:<48} {:>5} rows  median {:6.1f}%  p90 {:6.1f}%  max {:7.1f}%\n", label, s.rows,
             s.median_abs_pct, s.p90_abs_pct, s.max_abs_pct);
}

// The output in the chosen format: row() for each row in order as it is done, then end() with
// the statistics over the rows printed (a table's and a JSON document's trailer; CSV has none).
class ValidateOutput {
 public:
  ValidateOutput(const ValidateArgs& a, const std::vector<MeasurementFile>& files)
      : format_(a.format),
        nccl_(parse_model(a.model) == Model::kNccl),
        files_(files),
        several_(files_of_several(files)) {
    if (format_ == "json") {
      json_.emplace(std::cout, nlohmann::ordered_json::object());
    } else if (format_ == "csv") {
      std::cout << csv_header() << ",measured_us,error_pct,file,line,inplace_us\n";
    }
  }

  void row(const ValidationRow& r) {
    if (format_ == "json") {
      if (!r.predicted_us) return;
      nlohmann::ordered_json j = to_json(out_row(r));
      j["measured_us"] = r.c.measured_us;
      j["error_pct"] = rounded(r.error_pct, 1e4);
      j["file"] = r.file;
      j["line"] = r.c.line;
      j["selection"] = r.c.selection;
      j["nccl_pick"] = r.c.nccl_pick;
      j["inplace_us"] = r.c.inplace_us ? nlohmann::ordered_json(*r.c.inplace_us)
                                       : nlohmann::ordered_json(nullptr);
      json_->row(j);
    } else if (format_ == "csv") {
      if (!r.predicted_us) return;
      std::cout << fmt::format("{},{},{},{},{},{}\n", csv_line(out_row(r)), r.c.measured_us,
                               rounded(r.error_pct, 1e4), r.file, r.c.line,
                               r.c.inplace_us ? fmt::format("{}", *r.c.inplace_us) : "");
    } else {
      table_row(r);
    }
    std::cout.flush();
  }

  // `cut`: why rows are missing ("interrupted", or the error that stopped the run); empty when
  // none is. v.per_file has one entry per measurement file, in the order of `files`.
  void end(const Validation& v, const std::string& cut) {
    if (format_ == "json") {
      nlohmann::ordered_json tail;
      tail["files"] = nlohmann::ordered_json::array();
      for (std::size_t i = 0; i < v.per_file.size(); ++i) {
        nlohmann::ordered_json f = stats_json(v.per_file[i].second);
        f["path"] = v.per_file[i].first;
        f["collective"] = std::string(to_string(files_[i].collective));
        tail["files"].push_back(std::move(f));
      }
      tail["median_abs_error_pct"] = stat(v.overall, v.overall.median_abs_pct);
      tail["p90_abs_error_pct"] = stat(v.overall, v.overall.p90_abs_pct);
      tail["max_abs_error_pct"] = stat(v.overall, v.overall.max_abs_pct);
      tail["skipped"] = v.skipped;
      if (cut == "interrupted") tail["interrupted"] = true;
      if (!cut.empty() && cut != "interrupted") tail["error"] = cut;
      json_->close(tail);
    } else if (format_ == "table") {
      fmt::print("\n");
      print_apart(v.rows);
      for (std::size_t i = 0; i < v.per_file.size(); ++i) {
        const auto& [path, s] = v.per_file[i];
        print_stats_line(std::filesystem::path(path).filename().string() +
                             part_suffix(several_, path, files_[i].collective),
                         s);
      }
      print_stats_line("overall", v.overall);
      for (const std::string& s : v.skipped) fmt::print("skipped: {}\n", s);
    }
    std::cout.flush();
  }

 private:
  void table_row(const ValidationRow& r) {
    const std::string part = part_of(r);
    if (part != current_) {
      current_ = part;
      fmt::print("# {}\n", part);
      fmt::print("{:>6} {:>12} {:<16} {:>12} {:>12} {:>8}  {}\n", "line", "size", "algorithm",
                 "measured_us", "predicted_us", "error", "how chosen");
    }
    const std::string algo =
        nccl_ ? r.c.nccl_pick
              : fmt::format("{}/{}", r.c.request.algorithm, to_string(r.c.request.protocol));
    const std::string& how = r.c.selection;
    if (r.predicted_us) {
      fmt::print("{:>6} {:>12} {:<16} {:>12.2f} {:>12.2f} {:>+7.1f}%  {}{}\n", r.c.line,
                 request_bytes(r.c.request).count(), algo, r.c.measured_us, *r.predicted_us,
                 r.error_pct, how, apart_note(r.c));
    } else {
      fmt::print("{:>6} {:>12} {:<16} {:>12.2f} {:>12} {:>8}  {}\n", r.c.line,
                 request_bytes(r.c.request).count(), algo, r.c.measured_us, "-", "-", how);
    }
  }

  // A row measured more than kInplaceApartPct apart out of place and in place says so after
  // how it was chosen: its error is the run's as much as the model's.
  static std::string apart_note(const RowCase& c) {
    const std::optional<double> apart = apart_beyond(c);
    return apart ? fmt::format("  (in place {:.2f}: {:.1f}% apart)", *c.inplace_us, *apart) : "";
  }

  // How far the row's two times lie apart, where that is more than kInplaceApartPct.
  static std::optional<double> apart_beyond(const RowCase& c) {
    const std::optional<double> apart = inplace_apart_pct(c);
    return apart && *apart > kInplaceApartPct ? apart : std::nullopt;
  }

  // One line per file part with such rows, before the statistics (which count every row).
  void print_apart(const std::vector<ValidationRow>& rows) const {
    for (std::size_t i = 0; i < rows.size();) {
      const std::string part = part_of(rows[i]);
      std::size_t n = 0;
      std::vector<int> lines;
      for (; i < rows.size() && part_of(rows[i]) == part; ++i) {
        if (!rows[i].predicted_us) continue;
        ++n;
        if (apart_beyond(rows[i].c)) lines.push_back(rows[i].c.line);
      }
      if (lines.empty()) continue;
      fmt::print(
          "{}: {} of {} rows measured more than {:.0f}% apart out of place and in place "
          "(line{} {})\n",
          std::filesystem::path(part).filename().string(), lines.size(), n, kInplaceApartPct,
          lines.size() > 1 ? "s" : "", fmt::join(lines, ", "));
    }
  }

  // The file a row comes from, and its collective where the file holds several.
  std::string part_of(const ValidationRow& r) const {
    return r.file + part_suffix(several_, r.file, r.c.request.collective);
  }

  const std::string format_;
  const bool nccl_;
  const std::vector<MeasurementFile>& files_;
  const std::set<std::string> several_;
  std::string current_;  // the table's file part being printed
  std::optional<JsonRows> json_;
};

void run_validate(const ValidateArgs& a) {
  const Topology topo = load_cluster(a.config, a.nodes, a.cost_files, a.default_costs);
  const std::vector<MeasurementFile> files = read_measurement_args(a.measurements);
  CostParams costs = cost_params(topo);
  costs.line_forwarding = a.line_forwarding;
  const Model model = parse_model(a.model);
  ValidationPlan plan = plan_validation(topo, files);
  if (!plan.rows.empty()) {  // an error stays one line
    warn_about_other_gpus(topo, files);
    warn_about_nccl_env(topo, files);
  }
  const std::size_t n = plan.rows.size();
  ValidateOutput output(a, files);
  Progress progress("validate", n, "rows");
  InOrder<bool> rows(
      n, [&](std::size_t i, bool) { progress.above([&] { output.row(plan.rows[i]); }); });
  InterruptWatch watch;
  bool finished = false;
  try {
    finished = watch.run([&] {
      parallel_for(n, [&](std::size_t i) {
        if (watch.cancel()->load()) return;
        predict_row(topo, costs, model, plan.rows[i]);
        const ValidationRow& r = plan.rows[i];
        progress.step(
            fmt::format("{}:{}", std::filesystem::path(r.file).filename().string(), r.c.line));
        rows.put(i, true);
      });
    });
  } catch (const std::exception& e) {
    const std::size_t done = rows.close();
    progress.done();
    if (done > 0) output.end(summarize(plan, done), e.what());
    throw;
  }
  const std::size_t done = rows.close();
  progress.done();
  const Validation v = summarize(plan, done);
  output.end(v, finished ? "" : "interrupted");
  if (!finished) finish_interrupted(fmt::format("{} of {} rows done", done, n));
  // A run that predicted nothing has measured nothing: a script must not read it as a pass.
  if (v.overall.rows == 0) {
    std::cout.flush();
    throw MeasurementError(fmt::format(
        "validate: no row of the measurements could be predicted on {} ({} skipped{})", topo.name(),
        v.skipped.size(), v.skipped.empty() ? "" : fmt::format("; first: {}", v.skipped.front())));
  }
}

}  // namespace

void register_validate(CLI::App& app) {
  auto args = std::make_shared<ValidateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "validate", "Compare predictions with measurements, row by row, with error statistics");
  cmd->add_option("CONFIG", args->config, "YAML file or preset name (see configs/)")->required();
  add_measurement_options(cmd, args->measurements);
  add_nodes_option(*cmd, args->nodes);
  add_costs_option(*cmd, args->cost_files);
  cmd->add_flag("--default-costs", args->default_costs,
                "start from the NCCL-sourced defaults, leaving out CONFIG's own costs: block");
  cmd->add_option("--model", args->model,
                  "sim, contention-free or alpha-beta (collsim's models, as predict has them) "
                  "or nccl (NCCL's tuning model, for comparison)")
      ->check(CLI::IsMember(model_names(all_models())))
      ->capture_default_str();
  add_line_forwarding_flag(cmd, args->line_forwarding);
  cmd->add_option("--format", args->format, "table, csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  cmd->callback([args] { run_validate(*args); });
}

}  // namespace collsim
