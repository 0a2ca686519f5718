#include "calibrate/fit_holds.hpp"

#include <algorithm>
#include <cmath>

namespace collsim {

namespace {

// The fit again from p.x0 with p.fixed held, counting the work of both.
void refit(const LsqProblem& p, LsqResult& fit) {
  const int evaluations = fit.evaluations, iterations = fit.iterations;
  fit = robust_least_squares(p);
  fit.evaluations += evaluations;
  fit.iterations += iterations;
}

}  // namespace

std::vector<double> information_by_group(const LsqResult& fit, Eigen::Index j,
                                         const std::vector<int>& row_group, int groups) {
  std::vector<double> share(static_cast<std::size_t>(groups), 0.0);
  double total = 0;
  for (std::size_t i = 0; i < row_group.size(); ++i) {
    const auto ii = static_cast<Eigen::Index>(i);
    const double info = fit.weights[ii] * fit.jacobian(ii, j) * fit.jacobian(ii, j);
    share[static_cast<std::size_t>(row_group[i])] += info;
    total += info;
  }
  for (double& s : share) s = total > 0 ? s / total : 0.0;
  return share;
}

std::vector<std::pair<int, double>> hold_unshared_parameters(
    LsqProblem& p, LsqResult& fit, const std::vector<CostParameter>& params,
    const std::vector<int>& row_cluster, int clusters, double max_share) {
  const auto n = static_cast<Eigen::Index>(params.size());
  std::vector<std::pair<int, double>> held(params.size(), {-1, 0.0});
  if (clusters < 2 || max_share >= 1.0) return held;
  if (p.fixed.empty()) p.fixed.assign(params.size(), false);
  // A parameter's shares follow from which rows depend on it, which hardly moves with the
  // values: every one found in a round is held at once.
  for (int round = 0; round < 4; ++round) {
    bool any = false;
    Eigen::VectorXd x0 = fit.x;
    for (Eigen::Index j = 0; j < n; ++j) {
      const auto k = static_cast<std::size_t>(j);
      if (!fit.free[k] || !params[k].cluster.empty()) continue;  // one cluster's by design
      const std::vector<double> share = information_by_group(fit, j, row_cluster, clusters);
      const auto top = std::max_element(share.begin(), share.end());
      if (*top <= max_share) continue;
      held[k] = {static_cast<int>(top - share.begin()), *top};
      p.fixed[k] = true;
      x0[j] = p.prior[j];
      any = true;
    }
    if (!any) break;
    p.x0 = x0;
    refit(p, fit);
  }
  return held;
}

std::vector<bool> hold_loose_parameters(LsqProblem& p, LsqResult& fit,
                                        const std::vector<CostParameter>& params,
                                        double max_relative_sigma) {
  const auto n = static_cast<Eigen::Index>(params.size());
  std::vector<bool> weak(params.size(), false);
  if (p.fixed.empty()) p.fixed.assign(params.size(), false);
  for (int round = 0; round < 4; ++round) {
    Eigen::Index worst = -1;
    double worst_rel = max_relative_sigma;
    for (Eigen::Index j = 0; j < n; ++j) {
      const auto k = static_cast<std::size_t>(j);
      if (!fit.free[k] || fit.at_bound[k]) continue;
      const double rel =
          params[k].log_scale() ? fit.sigma[j] : fit.sigma[j] / std::max(std::abs(fit.x[j]), 1e-3);
      if (rel > worst_rel) {
        worst_rel = rel;
        worst = j;
      }
    }
    if (worst < 0) break;
    weak[static_cast<std::size_t>(worst)] = true;
    p.fixed[static_cast<std::size_t>(worst)] = true;
    p.x0 = fit.x;
    p.x0[worst] = p.prior[worst];
    refit(p, fit);
  }
  return weak;
}

}  // namespace collsim
