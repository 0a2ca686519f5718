// Error statistics, and validation: collsim's prediction of every row of measured tables
// beside the measurement (declared in calibration.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "calibrate/calibration.hpp"
#include "predict/parallel.hpp"

namespace collsim {

namespace {

std::vector<double> abs_sorted(const std::vector<double>& e) {
  std::vector<double> a;
  for (double x : e) a.push_back(std::abs(x));
  std::sort(a.begin(), a.end());
  return a;
}

}  // namespace

double error_pct(double predicted, double measured) {
  return (predicted - measured) / measured * 100.0;
}

ErrorStats error_stats(const std::vector<double>& errors_pct) {
  ErrorStats s;
  s.rows = errors_pct.size();
  if (errors_pct.empty()) return s;
  const std::vector<double> a = abs_sorted(errors_pct);
  const std::size_t n = a.size();
  s.median_abs_pct = n % 2 ? a[n / 2] : 0.5 * (a[n / 2 - 1] + a[n / 2]);
  const auto rank = static_cast<std::size_t>(std::ceil(0.9 * static_cast<double>(n)));
  s.p90_abs_pct = a[std::max<std::size_t>(rank, 1) - 1];
  s.max_abs_pct = a.back();
  return s;
}

void keep_sizes(MeasurementFile& f, std::uint64_t min_bytes, std::uint64_t max_bytes) {
  std::erase_if(
      f.rows, [&](const MeasurementRow& r) { return r.bytes < min_bytes || r.bytes > max_bytes; });
}

ValidationPlan plan_validation(const Topology& topo, const std::vector<MeasurementFile>& files) {
  ValidationPlan plan;
  for (const MeasurementFile& f : files) {
    FilePlan fp = plan_measurements(topo, f);
    for (RowCase& c : fp.cases) {
      if (c.measured_us <= 0) continue;
      ValidationRow row;
      row.file = f.path;
      row.c = std::move(c);
      plan.rows.push_back(std::move(row));
    }
    plan.files.push_back({f.path, plan.rows.size(), std::move(fp.skipped)});
  }
  return plan;
}

void predict_row(const Topology& topo, const CostParams& costs, Model model, ValidationRow& row) {
  // NCCL's model's own microseconds, unrounded; collsim's models give picoseconds.
  if (model == Model::kNccl) {
    row.predicted_us = row.c.nccl_us;
  } else if (const auto t = predict_case(topo, row.c, costs, model)) {
    row.predicted_us = t->us();
  }
  if (row.predicted_us) row.error_pct = error_pct(*row.predicted_us, row.c.measured_us);
}

Validation summarize(const ValidationPlan& plan, std::size_t done) {
  Validation v;
  std::vector<double> all;
  std::size_t begin = 0;
  for (const ValidationPlan::File& f : plan.files) {
    const std::size_t end = std::min(f.end, done);
    for (const std::string& s : f.skipped) v.skipped.push_back(s);
    std::vector<double> errors;
    for (std::size_t i = begin; i < end; ++i) {
      const ValidationRow& row = plan.rows[i];
      v.rows.push_back(row);
      if (row.predicted_us) {
        errors.push_back(row.error_pct);
        all.push_back(row.error_pct);
      } else {
        v.skipped.push_back(
            fmt::format("{}:{}: --model nccl has no cost for {} ({})", f.path, row.c.line,
                        to_string(row.c.request.collective),
                        row.c.nccl_pick.empty() ? "point-to-point" : row.c.nccl_pick));
      }
    }
    v.per_file.emplace_back(f.path, error_stats(errors));
    begin = std::max(begin, f.end);
  }
  v.overall = error_stats(all);
  return v;
}

Validation validate(const Topology& topo, const std::vector<MeasurementFile>& files,
                    const CostParams& costs, Model model) {
  ValidationPlan plan = plan_validation(topo, files);
  parallel_for(plan.rows.size(),
               [&](std::size_t i) { predict_row(topo, costs, model, plan.rows[i]); });
  return summarize(plan, plan.rows.size());
}

}  // namespace collsim
