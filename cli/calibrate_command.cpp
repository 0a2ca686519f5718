// `collsim calibrate CONFIG --measurements FILE... -o OUT.yaml [--op OP] [--min-bytes B]
//  [--max-bytes B] [--nodes N] [--costs F...] [--also CONFIG=FILE...]`: fits
//  the cluster's cost parameters (jointly with other clusters' rows, --also) to measured
//  nccl-tests logs or
// `collsim bench` output (calibrate/calibration.hpp) and writes them as a YAML overlay that any
// command loads with `--costs OUT.yaml`. Prints each parameter before and after with its standard
// error and the files that determined it, and the prediction error before and after the fit.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "calibrate/calibration.hpp"
#include "cli/commands.hpp"
#include "cli/measurement_args.hpp"
#include "cli/option_checks.hpp"
#include "cli/progress.hpp"
#include "cli/request_options.hpp"
#include "topology/error.hpp"

namespace collsim {

namespace {

struct CalibrateArgs {
  std::string config;
  std::optional<int> nodes;
  std::vector<std::string> cost_files;
  bool default_costs = false;
  MeasurementArgs measurements;
  std::string output;
  std::string format = "table";
  std::vector<std::string> also;  // "CONFIG=FILE": rows of another cluster, fitted jointly
  bool shared_only = false;       // hold what one cluster alone determines (CalibrateOptions)
  bool cross_check = false;       // hold what does not carry over to a cluster or file left out
  std::vector<std::string> fixed;  // --fix: parameters held at their starting values
  std::string command_line;
};

// --shared-only: a parameter is shared if at least a fifth of its information comes from the
// other clusters, i.e. no one cluster gives more than this. A rule chosen before any
// leave-one-class-out fit was run with it, not tuned on their results.
constexpr double kSharedOnlyMaxShare = 0.8;

// --also CONFIG=FILE, read like --measurements (the same --op and size range) on CONFIG, loaded
// with the same --default-costs and --costs as the main CONFIG (its own node count).
struct OtherCluster {
  Topology topo;
  std::vector<MeasurementFile> files;
};

std::vector<OtherCluster> read_also(const CalibrateArgs& a) {
  std::vector<OtherCluster> others;
  for (const std::string& item : a.also) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
      throw RequestError(fmt::format("--also {}: expected CONFIG=FILE", item));
    }
    MeasurementArgs m = a.measurements;
    m.files = {item.substr(eq + 1)};
    others.push_back({load_cluster(item.substr(0, eq), std::nullopt, a.cost_files, a.default_costs),
                      read_measurement_args(m)});
  }
  return others;
}

void print_stats(const char* label, const ErrorStats& s) {
  fmt::print("{:<8} median {:.1f}%  p90 {:.1f}%  max {:.1f}% over {} rows\n", label,
             s.median_abs_pct, s.p90_abs_pct, s.max_abs_pct, s.rows);
}

nlohmann::ordered_json stats_json(const ErrorStats& s) {
  return {{"rows", s.rows},
          {"median_abs_error_pct", s.median_abs_pct},
          {"p90_abs_error_pct", s.p90_abs_pct},
          {"max_abs_error_pct", s.max_abs_pct}};
}

// --format json: the table's content, one object per parameter under "rows" (what the Python
// module returns from collsim.calibrate).
void print_json(const Topology& topo, const Calibration& cal, const std::string& output) {
  nlohmann::ordered_json j;
  j["cluster"] = topo.name();
  j["ranks"] = topo.rank_count();
  j["fitted_rows"] = cal.rows;
  j["iterations"] = cal.iterations;
  j["converged"] = cal.converged;
  j["rows"] = nlohmann::ordered_json::array();
  for (const FittedParameter& p : cal.parameters) {
    const std::string& own = p.parameter.cluster;
    j["rows"].push_back(
        {{"parameter", p.parameter.path()},
         {"cluster", own.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(own)},
         {"before", p.before},
         {"fitted", p.fitted ? nlohmann::ordered_json(p.value) : nullptr},
         {"sigma", p.fitted ? nlohmann::ordered_json(p.sigma) : nullptr},
         {"at_bound", p.at_bound},
         {"at_edge", p.at_edge},
         {"determined_by", p.determined_by}});
  }
  j["before"] = stats_json(cal.before);
  j["after"] = stats_json(cal.after);
  if (cal.cross_check) {
    const CrossCheck& x = *cal.cross_check;
    j["cross_check"] = {{x.unit, x.left_out},
                        {"mean_abs_log_error_pct_all_fitted", x.all_fitted},
                        {"mean_abs_log_error_pct_prior", x.prior},
                        {"mean_abs_log_error_pct_kept", x.kept}};
  }
  j["skipped"] = cal.skipped;
  j["output"] = output;
  std::cout << j.dump(2) << "\n";
}

void run_calibrate(const CalibrateArgs& a) {
  check_writable(a.output, "-o");  // before a fit of minutes, not after
  const Topology topo = load_cluster(a.config, a.nodes, a.cost_files, a.default_costs);
  const std::vector<OtherCluster> others = read_also(a);
  std::vector<ClusterMeasurements> clusters = {{&topo, read_measurement_args(a.measurements)}};
  for (const OtherCluster& c : others) clusters.push_back({&c.topo, c.files});
  CalibrateOptions o;
  o.fixed = a.fixed;
  o.cross_check = a.cross_check;
  if (a.shared_only) {
    if (a.also.empty()) {
      throw RequestError(
          "--shared-only keeps what several clusters' rows determine together: give the others "
          "with --also CONFIG=FILE");
    }
    o.max_cluster_share = kSharedOnlyMaxShare;
    o.cross_check = true;
  }
  Progress progress("calibrate", simulated_events_status());
  const Calibration cal = calibrate(clusters, o);
  // After the fit, so that a request it refuses stays one line on stderr.
  for (const ClusterMeasurements& c : clusters) {
    warn_about_other_gpus(*c.topo, c.files);
    warn_about_nccl_env(*c.topo, c.files);
  }
  progress.done();

  std::ofstream out(a.output);
  if (!out) throw RequestError(fmt::format("-o {}: cannot write the file", a.output));
  write_overlay(out, cal, a.config, a.command_line);
  out.close();
  if (!out) throw RequestError(fmt::format("-o {}: writing the file failed", a.output));

  if (a.format == "json") {
    print_json(topo, cal, a.output);
    return;
  }
  fmt::print("cluster     {} ({} GPUs)\n", topo.name(), topo.rank_count());
  fmt::print("rows        {} fitted, {} skipped; {} iterations, {} simulations per row{}\n",
             cal.rows, cal.skipped.size(), cal.iterations, cal.evaluations,
             cal.converged ? "" : " (not converged)");
  fmt::print("{:<40} {:>12} {:>12} {:>10}  {}\n", "parameter", "before", "fitted", "+-",
             "determined by");
  for (const FittedParameter& p : cal.parameters) {
    fmt::print("{:<40} {:>12} {:>12} {:>10}  {}\n", p.parameter.label(), p.before,
               p.fitted ? p.value : "-", p.fitted ? p.sigma : "-", p.determined_by);
  }
  print_stats("before", cal.before);
  print_stats("after", cal.after);
  if (cal.cross_check && cal.cross_check->left_out == 0) {
    fmt::print("check    nothing to leave out: one {} of rows, or no value fitted\n",
               cal.cross_check->unit == "files" ? "file" : "cluster");
  } else if (cal.cross_check) {
    const CrossCheck& x = *cal.cross_check;
    fmt::print(
        "check    each of {} {} fitted without: mean |log error| {:.1f}% all fitted, "
        "{:.1f}% none, {:.1f}% as kept\n",
        x.left_out, x.unit, x.all_fitted, x.prior, x.kept);
  }
  for (std::size_t i = 0; i < cal.skipped.size() && i < 5; ++i) {
    fmt::print("skipped     {}\n", cal.skipped[i]);
  }
  if (cal.skipped.size() > 5) fmt::print("skipped     ... and {} more\n", cal.skipped.size() - 5);
  fmt::print("wrote       {} (use: --costs {})\n", a.output, a.output);
}

}  // namespace

void register_calibrate(CLI::App& app) {
  auto args = std::make_shared<CalibrateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate", "Fit the cluster's cost parameters to measurements (nccl-tests logs, bench)");
  cmd->add_option("CONFIG", args->config, "YAML file or preset name (see configs/)")->required();
  add_measurement_options(cmd, args->measurements);
  cmd->add_option("-o,--output", args->output, "the overlay YAML to write")->required();
  add_nodes_option(*cmd, args->nodes);
  add_costs_option(*cmd, args->cost_files);
  cmd->add_flag("--default-costs", args->default_costs,
                "start from the NCCL-sourced defaults, leaving out CONFIG's own costs: block");
  cmd->add_option("--also", args->also,
                  "CONFIG=FILE: also fit FILE's rows measured on cluster CONFIG; every parameter "
                  "takes one value for all the clusters (a fit of what they share)");
  cmd->add_flag("--shared-only", args->shared_only,
                fmt::format("with --also, for a fit meant for a cluster the fit has not seen: "
                            "hold at its prior every parameter more than {:.0f}% of whose "
                            "information comes from one cluster's rows (that cluster's own "
                            "trait), and every one that, fitted without each cluster in turn, "
                            "predicts the cluster left out worse than its prior",
                            100 * kSharedOnlyMaxShare));
  cmd->add_flag("--cross-check", args->cross_check,
                "fit again without each cluster (in a fit of one cluster, each file) in turn and "
                "predict it; hold at its prior every parameter whose fitted value predicts what "
                "was left out worse than its prior does (--shared-only does this too)");
  cmd->add_option("--fix", args->fixed,
                  "hold these parameters at their starting values (the config's, or the defaults "
                  "with --default-costs): costs: paths or shell patterns, e.g. "
                  "'protocols.*.efficiency'");
  cmd->add_option("--format", args->format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  cmd->callback([args, cmd] {
    args->command_line = "collsim calibrate " + args->config;
    if (args->default_costs) args->command_line += " --default-costs";
    for (const auto& m : args->measurements.files) args->command_line += " --measurements " + m;
    for (const auto& m : args->also) args->command_line += " --also " + m;
    if (args->shared_only) args->command_line += " --shared-only";
    if (args->cross_check) args->command_line += " --cross-check";
    for (const auto& f : args->fixed) args->command_line += " --fix '" + f + "'";
    if (!args->measurements.op.empty()) args->command_line += " --op " + args->measurements.op;
    if (!args->measurements.min_bytes.empty()) {
      args->command_line += " --min-bytes " + args->measurements.min_bytes;
    }
    if (!args->measurements.max_bytes.empty()) {
      args->command_line += " --max-bytes " + args->measurements.max_bytes;
    }
    args->command_line += " -o " + args->output;
    (void)cmd;
    run_calibrate(*args);
  });
}

}  // namespace collsim
