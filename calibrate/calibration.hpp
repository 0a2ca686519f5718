// Fitting collsim's cost parameters to measurements, and the error of its predictions.
//
//   std::vector<MeasurementFile> files = {read_measurements("a.txt"), read_measurements("b.txt")};
//   Calibration cal = calibrate(topo, files);      // robust fit (least_squares.hpp)
//   write_overlay(out, cal, "dgx-h100");            // YAML for --costs (LoadOptions::cost_files)
//   Validation v = validate(topo, files, cal.fitted);
//   v.overall.median_abs_pct;
//
// The residual of a row is log(predicted / measured): relative error is what matters from 8 B to
// 16 GiB, and a log keeps a 30 us floor and a 40 ms transfer on one footing. The parameters
// fitted are cost_parameters.hpp's, restricted to what the rows can determine (the rank-revealing
// QR of least_squares.hpp); the others keep their values from the config and its overlays.
//
// Speed: each evaluation simulates every row. Schedules are built once. Rows larger than
// `Options::exact_limit` are predicted during the fit from the two simulations at exact_limit/4 and
// exact_limit, extrapolated linearly in size (transfer time is affine in size once the pipeline is
// full; a test checks the extrapolation against direct simulation). The reported errors
// (`validate`, and the before/after figures) always simulate every row in full.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/cost_parameters.hpp"
#include "calibrate/measurement.hpp"
#include "calibrate/row_model.hpp"
#include "simulator/cost_params.hpp"
#include "topology/topology.hpp"

namespace collsim {

struct ErrorStats {
  std::size_t rows = 0;
  double median_abs_pct = 0;
  double p90_abs_pct = 0;  // nearest rank
  double max_abs_pct = 0;
};
// A prediction's signed error against a measurement, in %: (predicted - measured) / measured.
double error_pct(double predicted, double measured);
// Statistics of signed percentage errors (by absolute value). All zero for none.
ErrorStats error_stats(const std::vector<double>& errors_pct);

struct FittedParameter {
  CostParameter parameter;
  std::string before;  // natural units, as the overlay writes them
  std::string value;
  std::string sigma;     // one standard error, natural units ("" when not fitted)
  double fit_value = 0;  // the value and its standard error on the fit's scale
  double fit_sigma = 0;  // (CostParameter::value: us, or a log)
  bool fitted = false;
  // Fitted, but the fit ended on a bound of the parameter (a launch of 0, a channel cap that
  // never binds): the rows say only that the value lies at or beyond it; no sigma.
  bool at_bound = false;
  // Fitted, but the fit took it past where any row depends on it: it is written at that point,
  // the value nearest its prior that the rows allow (least_squares.hpp, LsqResult::at_edge), and
  // the rows say only that it lies at or beyond it; no sigma.
  bool at_edge = false;
  // Fitted: the files whose rows carry most of the information on it ("a.txt 72%").
  // Not fitted: why ("collinear with protocols.simple.launch", "no row depends on it").
  std::string determined_by;
  // Fitted and one of the overlay's costs: a shared parameter, or the overlay's own cluster's
  // host (CostParameter::cluster) when the fit is not --shared-only.
  bool written = false;
};

// The cross-check of a fit (CalibrateOptions::cross_check; fit_holds.hpp,
// hold_untransferable_parameters): each of `left_out` clusters (or, in a fit of one cluster,
// files) predicted by the fit on the others, its score the mean over them of each one's mean
// |log(predicted / measured)|, in %.
struct CrossCheck {
  std::string unit;  // "clusters" or "files"
  int left_out = 0;
  double all_fitted = 0;  // every one checked at the value fitted without what is predicted
  double prior = 0;       // every one at its prior
  double kept = 0;        // those the check kept
};

struct Calibration {
  CostParams start;
  CostParams fitted;
  std::vector<FittedParameter> parameters;
  std::vector<std::string> files;
  std::vector<std::string> skipped;  // rows that could not be predicted, with why
  std::size_t rows = 0;
  ErrorStats before;  // of the fitted rows, full simulation
  ErrorStats after;
  int iterations = 0;
  int evaluations = 0;
  bool converged = false;
  std::optional<CrossCheck> cross_check;  // CalibrateOptions::cross_check
};

struct CalibrateOptions {
  std::uint64_t exact_limit = 512ull << 20;  // rows above: extrapolated during the fit
  // A fitted parameter whose standard error exceeds this fraction of its value (relative, for
  // rates) is reported as not determined and held at its prior value.
  double max_relative_sigma = 0.5;
  // Parameters held at their starting values, by `costs:` path or shell pattern
  // ("protocols.*.efficiency"); each must match at least one parameter of the fit.
  std::vector<std::string> fixed;
  // For a fit meant for a cluster that is none of the fit's own (leave one class out): a
  // parameter more than this share of whose information comes from one cluster (one config) is
  // that cluster's trait, not something the clusters share, and is held at its prior value.
  // 1 (the default) keeps every parameter the rows determine.
  double max_cluster_share = 1.0;
  // Fit without each cluster in turn (in a fit of one cluster, each file: another collective or
  // size range) and predict it, and hold at its prior every parameter, other than a cluster's
  // own host, whose fitted value predicts what was left out worse than the prior does
  // (fit_holds.hpp, hold_untransferable_parameters). Part of a fit for a cluster none of the
  // rows came from (calibrate --shared-only); calibrate --cross-check asks for it anywhere.
  bool cross_check = false;
};

Calibration calibrate(const Topology& topo, const std::vector<MeasurementFile>& files,
                      const CalibrateOptions& options = {});

// A joint fit over several clusters: one value of each parameter (a protocol's launch and hop
// latency per route class, a link kind's efficiency...) explains every cluster's rows, which is
// how parameters shared across hardware classes are fitted, and how a fit on some classes is
// tested on another (scripts/validation-report.sh, leave one class out). `start`, `before` and
// the overlay's values are the first cluster's; its costs are what the overlay is layered over.
struct ClusterMeasurements {
  const Topology* topo = nullptr;
  std::vector<MeasurementFile> files;
};
Calibration calibrate(const std::vector<ClusterMeasurements>& clusters,
                      const CalibrateOptions& options = {});

// The overlay YAML: a `calibration:` record (config, files, rows, errors before and after, every
// parameter with its uncertainty and provenance) and the `costs:` mapping of the fitted values.
void write_overlay(std::ostream& out, const Calibration& cal, const std::string& config,
                   const std::string& command_line);

struct ValidationRow {
  std::string file;
  RowCase c;
  std::optional<double> predicted_us;  // nullopt: the model cannot cost it (--model nccl)
  double error_pct = 0;                // signed, (predicted - measured) / measured x 100
};

struct Validation {
  std::vector<ValidationRow> rows;
  std::vector<std::pair<std::string, ErrorStats>> per_file;
  ErrorStats overall;
  std::vector<std::string> skipped;
};

// Keeps the rows whose size (nccl-tests' size column) lies in [min_bytes, max_bytes]: how a
// cross-validation calibrates on one size range and validates on another.
void keep_sizes(MeasurementFile& f, std::uint64_t min_bytes, std::uint64_t max_bytes);

Validation validate(const Topology& topo, const std::vector<MeasurementFile>& files,
                    const CostParams& costs, Model model = Model::kMaxMin);

// validate() in its three steps, for a caller that shows progress, prints rows as they finish
// and stops early (cli/validate_command.cpp):
//
//   ValidationPlan plan = plan_validation(topo, files);  // every row, none predicted yet
//   parallel_for(plan.rows.size(),
//                [&](std::size_t i) { predict_row(topo, costs, model, plan.rows[i]); });
//   Validation v = summarize(plan, plan.rows.size());    // or over the rows done so far
//
// Rows are independent, so predict_row may run on several threads at once.
struct ValidationPlan {
  struct File {
    std::string path;
    std::size_t end = 0;               // its rows are rows[previous file's end, end)
    std::vector<std::string> skipped;  // rows the plan could not predict
  };
  std::vector<ValidationRow> rows;  // in file order, not yet predicted
  std::vector<File> files;          // one per measurement file, in order
};
ValidationPlan plan_validation(const Topology& topo, const std::vector<MeasurementFile>& files);
void predict_row(const Topology& topo, const CostParams& costs, Model model, ValidationRow& row);
// The statistics over the plan's first `done` rows (all of them but an interrupted run's); the
// files past them count no row.
Validation summarize(const ValidationPlan& plan, std::size_t done);

}  // namespace collsim
