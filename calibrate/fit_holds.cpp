#include "calibrate/fit_holds.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace collsim {

namespace {

// The fit again from p.x0 with p.fixed held, counting the work of both.
void refit(const LsqProblem& p, LsqResult& fit) {
  const int evaluations = fit.evaluations, iterations = fit.iterations;
  fit = robust_least_squares(p);
  fit.evaluations += evaluations;
  fit.iterations += iterations;
}

// The mean |residual| of the rows listed.
double mean_abs(const Eigen::VectorXd& r, const std::vector<Eigen::Index>& rows) {
  double sum = 0;
  for (Eigen::Index i : rows) sum += std::abs(r[i]);
  return rows.empty() ? 0.0 : sum / static_cast<double>(rows.size());
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

std::string unshared_reason(const std::pair<int, double>& held,
                            const std::vector<std::string>& cluster_names) {
  return fmt::format(
      "not shared: {}'s rows alone determine it ({:.0f}% of its information), so it is that "
      "cluster's own; prior kept",
      cluster_names[static_cast<std::size_t>(held.first)], 100 * held.second);
}

std::vector<bool> hold_loose_parameters(LsqProblem& p, LsqResult& fit,
                                        const std::vector<CostParameter>& params,
                                        double max_relative_sigma) {
  const auto n = static_cast<Eigen::Index>(params.size());
  std::vector<bool> weak(params.size(), false);
  if (p.fixed.empty()) p.fixed.assign(params.size(), false);
  // One parameter a round, until none is loose: a loose one left fitted is written to the
  // overlay as a calibration it is not.
  for (Eigen::Index round = 0; round < n; ++round) {
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

std::string TransferCheck::reason(std::size_t j, const std::string& unit,
                                  const std::vector<std::string>& names) const {
  if (worst[j] < 0) {
    return fmt::format(
        "not transferable: fitted without each of {} {} in turn, it predicted the one left out "
        "worse than its prior (mean |log error| {:.2f}% with it, {:.2f}% without); prior kept",
        clusters, unit, 100 * with[j], 100 * without[j]);
  }
  return fmt::format(
      "not transferable: fitted without each of {} {} in turn, the values kept with it "
      "predicted {} worse than the priors do (mean |log error| {:.2f}% against {:.2f}%); prior "
      "kept",
      clusters, unit, names[static_cast<std::size_t>(worst[j])], 100 * with[j], 100 * without[j]);
}

std::string loose_reason(double max_relative_sigma) {
  return fmt::format(
      "not determined: the rows pin it only loosely (standard error above {:.0f}% of it); prior "
      "kept",
      100 * max_relative_sigma);
}

ResidualsOf rows_outside(ResidualsOf all, const std::vector<int>& row_group, int group) {
  std::vector<Eigen::Index> keep;
  for (std::size_t i = 0; i < row_group.size(); ++i) {
    if (row_group[i] != group) keep.push_back(static_cast<Eigen::Index>(i));
  }
  return [all = std::move(all), keep = std::move(keep)](const Eigen::VectorXd& x) {
    const Eigen::VectorXd r = all(x);
    Eigen::VectorXd out(static_cast<Eigen::Index>(keep.size()));
    for (std::size_t i = 0; i < keep.size(); ++i) out[static_cast<Eigen::Index>(i)] = r[keep[i]];
    return out;
  };
}

TransferCheck hold_untransferable_parameters(
    LsqProblem& p, LsqResult& fit, const std::vector<CostParameter>& params,
    const std::vector<int>& row_cluster, int clusters,
    const std::function<ResidualsOf(int)>& residuals_without) {
  const auto n = static_cast<Eigen::Index>(params.size());
  TransferCheck check;
  check.held.assign(params.size(), false);
  check.with.assign(params.size(), 0.0);
  check.without.assign(params.size(), 0.0);
  check.worst.assign(params.size(), -1);
  if (clusters < 2) return check;
  if (p.fixed.empty()) p.fixed.assign(params.size(), false);
  const Eigen::VectorXd prior = p.prior.size() == n ? p.prior : p.x0;
  std::vector<Eigen::Index> candidates;  // fitted, shared, and moved from the prior
  for (Eigen::Index j = 0; j < n; ++j) {
    const auto k = static_cast<std::size_t>(j);
    if (fit.free[k] && params[k].cluster.empty() && fit.x[j] != prior[j]) candidates.push_back(j);
  }
  if (candidates.empty()) return check;

  std::vector<std::vector<Eigen::Index>> rows_of(static_cast<std::size_t>(clusters));
  for (std::size_t i = 0; i < row_cluster.size(); ++i) {
    rows_of[static_cast<std::size_t>(row_cluster[i])].push_back(static_cast<Eigen::Index>(i));
  }
  // Each cluster that a candidate moves, and the parameters fitted without its rows.
  struct Fold {
    int cluster;
    Eigen::VectorXd x;
  };
  std::vector<Fold> folds;
  for (int c = 0; c < clusters; ++c) {
    const std::vector<Eigen::Index>& rows = rows_of[static_cast<std::size_t>(c)];
    const bool depends = std::any_of(rows.begin(), rows.end(), [&](Eigen::Index i) {
      return std::any_of(candidates.begin(), candidates.end(),
                         [&](Eigen::Index j) { return fit.jacobian(i, j) != 0; });
    });
    if (!depends) continue;
    LsqProblem without = p;
    without.residuals = residuals_without(c);
    without.x0 = fit.x;  // a warm start; what the others' rows cannot determine goes to prior
    const LsqResult f = robust_least_squares(without);
    fit.evaluations += f.evaluations;
    fit.iterations += f.iterations;
    folds.push_back({c, f.x});
  }
  check.clusters = static_cast<int>(folds.size());
  if (folds.empty()) return check;

  // Each fold's score with the candidates `kept` at the values fitted without its cluster.
  const auto scores = [&](const std::vector<bool>& kept) {
    std::vector<double> s;
    for (const Fold& f : folds) {
      Eigen::VectorXd x = prior;
      for (Eigen::Index j : candidates) {
        if (kept[static_cast<std::size_t>(j)]) x[j] = f.x[j];
      }
      s.push_back(mean_abs(p.residuals(x), rows_of[static_cast<std::size_t>(f.cluster)]));
    }
    return s;
  };
  const auto mean = [](const std::vector<double>& s) {
    double sum = 0;
    for (double v : s) sum += v;
    return sum / static_cast<double>(s.size());
  };
  const std::vector<double> at_prior = scores(std::vector<bool>(params.size(), false));
  // How much worse than the priors the worst-predicted fold is (zero when none is), then the
  // mean: a value carried to a cluster it was not fitted to must predict none of them worse than
  // the prior does, and among those sets the lower mean wins.
  struct Standing {
    double excess;
    int worst;  // the fold, or -1
    double mean;
    bool operator<(const Standing& o) const {
      return excess != o.excess ? excess < o.excess : mean < o.mean;
    }
  };
  const auto standing = [&](const std::vector<double>& s) {
    Standing st{0.0, -1, mean(s)};
    for (std::size_t f = 0; f < s.size(); ++f) {
      if (s[f] - at_prior[f] > st.excess) {
        st.excess = s[f] - at_prior[f];
        st.worst = static_cast<int>(f);
      }
    }
    return st;
  };
  std::vector<bool> kept(params.size(), false);
  for (Eigen::Index j : candidates) kept[static_cast<std::size_t>(j)] = true;
  std::vector<double> now = scores(kept);
  check.fitted = mean(now);
  for (;;) {
    const Standing current = standing(now);
    // While a fold is predicted worse than at the priors, one candidate goes back even where no
    // single return mends it: with none kept, none is.
    Eigen::Index best = -1;
    Standing best_standing = current;
    if (current.excess > 0) best_standing.excess = std::numeric_limits<double>::infinity();
    std::vector<double> best_scores;
    for (Eigen::Index j : candidates) {
      const auto k = static_cast<std::size_t>(j);
      if (!kept[k]) continue;
      kept[k] = false;
      std::vector<double> s = scores(kept);
      kept[k] = true;
      const Standing st = standing(s);
      if (st < best_standing) {
        best = j;
        best_standing = st;
        best_scores = std::move(s);
      }
    }
    if (best < 0) break;
    const auto k = static_cast<std::size_t>(best);
    kept[k] = false;
    check.held[k] = true;
    if (current.worst >= 0) {  // held for the fold predicted worse than at the priors
      const auto f = static_cast<std::size_t>(current.worst);
      check.worst[k] = folds[f].cluster;
      check.with[k] = now[f];
      check.without[k] = at_prior[f];
    } else {
      check.with[k] = current.mean;
      check.without[k] = best_standing.mean;
    }
    now = std::move(best_scores);
  }
  check.kept = mean(now);
  check.prior = mean(at_prior);

  if (std::none_of(check.held.begin(), check.held.end(), [](bool h) { return h; })) return check;
  p.x0 = fit.x;
  for (Eigen::Index j = 0; j < n; ++j) {
    if (!check.held[static_cast<std::size_t>(j)]) continue;
    p.fixed[static_cast<std::size_t>(j)] = true;
    p.x0[j] = prior[j];
  }
  refit(p, fit);
  return check;
}

}  // namespace collsim
