// Error statistics, and validation: collsim's prediction of every row of measured tables
// beside the measurement (declared in calibration.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "calibrate/calibration.hpp"

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

Validation validate(const Topology& topo, const std::vector<MeasurementFile>& files,
                    const CostParams& costs, Model model) {
  Validation v;
  std::vector<double> all;
  for (const MeasurementFile& f : files) {
    FilePlan plan = plan_measurements(topo, f);
    for (std::string& s : plan.skipped) v.skipped.push_back(std::move(s));
    std::vector<double> errors;
    for (RowCase& c : plan.cases) {
      if (c.measured_us <= 0) continue;
      ValidationRow row;
      row.file = f.path;
      // NCCL's model's own microseconds, unrounded; collsim's models give picoseconds.
      if (model == Model::kNccl) {
        row.predicted_us = c.nccl_us;
      } else if (const auto t = predict_case(topo, c, costs, model)) {
        row.predicted_us = t->us();
      }
      if (row.predicted_us) {
        row.error_pct = error_pct(*row.predicted_us, c.measured_us);
        errors.push_back(row.error_pct);
        all.push_back(row.error_pct);
      } else {
        v.skipped.push_back(fmt::format("{}:{}: --model nccl has no cost for {} ({})", f.path,
                                        c.line, to_string(c.request.collective),
                                        c.nccl_pick.empty() ? "point-to-point" : c.nccl_pick));
      }
      row.c = std::move(c);
      v.rows.push_back(std::move(row));
    }
    v.per_file.emplace_back(f.path, error_stats(errors));
  }
  v.overall = error_stats(all);
  return v;
}

}  // namespace collsim
