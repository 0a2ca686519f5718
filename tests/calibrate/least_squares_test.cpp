// The robust least-squares core on problems whose answer is known in closed form.
#include "calibrate/least_squares.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>

#include "calibrate/calibration.hpp"
#include "calibrate/fit_holds.hpp"

namespace collsim {
namespace {

TEST(ErrorStats, MedianNearestRankP90AndMax) {
  // |e| sorted: 1 2 5 10 20. Median the middle one; p90 by nearest rank: ceil(0.9 x 5) = 5th.
  const ErrorStats s = error_stats({-10, 5, 1, -2, 20});
  EXPECT_EQ(s.rows, 5u);
  EXPECT_DOUBLE_EQ(s.median_abs_pct, 5);
  EXPECT_DOUBLE_EQ(s.p90_abs_pct, 20);
  EXPECT_DOUBLE_EQ(s.max_abs_pct, 20);
  // Even count: the mean of the middle two; ceil(0.9 x 4) = 4th.
  const ErrorStats e = error_stats({1, -3, 2, 4});
  EXPECT_DOUBLE_EQ(e.median_abs_pct, 2.5);
  EXPECT_DOUBLE_EQ(e.p90_abs_pct, 4);
  EXPECT_EQ(error_stats({}).rows, 0u);
}

// A problem of `n` parameters over `residuals`, each starting at 0 within +-10, with
// finite-difference steps of 1e-3.
LsqProblem problem(int n, std::function<Eigen::VectorXd(const Eigen::VectorXd&)> residuals) {
  LsqProblem p;
  p.residuals = std::move(residuals);
  p.x0 = Eigen::VectorXd::Zero(n);
  p.lower = Eigen::VectorXd::Constant(n, -10);
  p.upper = Eigen::VectorXd::Constant(n, 10);
  p.step = Eigen::VectorXd::Constant(n, 1e-3);
  return p;
}

// y = a + b t sampled at t = 0..9 with a fixed +-0.01 alternating perturbation: the fit is the
// ordinary least-squares line, a = 2, b = 0.5 (the perturbation has zero mean and is orthogonal
// to t's centred values only approximately, so allow its size).
TEST(LeastSquares, FitsALineAndReportsSmallErrors) {
  const LsqProblem p = problem(2, [](const Eigen::VectorXd& x) {
    Eigen::VectorXd r(10);
    for (int t = 0; t < 10; ++t) r[t] = x[0] + x[1] * t - (2 + 0.5 * t + (t % 2 ? 0.01 : -0.01));
    return r;
  });
  const LsqResult r = robust_least_squares(p);
  EXPECT_TRUE(r.converged);
  EXPECT_TRUE(r.free[0] && r.free[1]);
  EXPECT_NEAR(r.x[0], 2, 0.02);
  EXPECT_NEAR(r.x[1], 0.5, 0.005);
  EXPECT_GT(r.sigma[0], 0);
  EXPECT_LT(r.sigma[0], 0.02);
}

// y = x0 + w x1 + x2 t = target + t at t = 0..4, starting from `x0`: x0 and x1 only ever appear
// together, as x0 + w x1, so no row tells them apart.
LsqProblem two_alike(double w, double target, const Eigen::Vector3d& x0) {
  LsqProblem p = problem(3, [w, target](const Eigen::VectorXd& x) {
    Eigen::VectorXd r(5);
    for (int t = 0; t < 5; ++t) r[t] = (x[0] + w * x[1]) + x[2] * t - (target + t);
    return r;
  });
  p.x0 = x0;
  return p;
}

// Two parameters that only ever appear as their sum cannot both be fitted: one is held and named
// as collinear with the other, and the sum still fits.
TEST(LeastSquares, CollinearParametersAreNotBothFitted) {
  const LsqProblem p = two_alike(1, 3, Eigen::Vector3d(1, 1, 0));
  const LsqResult r = robust_least_squares(p);
  EXPECT_NE(r.free[0], r.free[1]);
  const int held = r.free[0] ? 1 : 0;
  EXPECT_EQ(r.collinear_with[held], 1 - held);
  EXPECT_NEAR(r.x[0] + r.x[1], 3, 1e-6);
  EXPECT_NEAR(r.x[2], 1, 1e-6);
}

// With a priority, the one of higher priority is fitted, whichever the pivoting would take (the
// other's column is the larger, by a factor of 3, here).
TEST(LeastSquares, OfTwoAlikeThePreferredIsFitted) {
  LsqProblem p = two_alike(3, 4, Eigen::Vector3d(1, 0, 0));
  p.priority = {0, 1, 1};
  const LsqResult r = robust_least_squares(p);
  EXPECT_TRUE(r.free[0]);
  EXPECT_FALSE(r.free[1]);
  EXPECT_NEAR(r.x[0], 4, 1e-6);
  EXPECT_EQ(r.x[1], 0);
  p.priority = {1, 0, 1};
  const LsqResult q = robust_least_squares(p);
  EXPECT_FALSE(q.free[0]);
  EXPECT_TRUE(q.free[1]);
  EXPECT_EQ(q.x[0], 1);
  EXPECT_NEAR(q.x[1], 1, 1e-6);
}

// A refit warm-started away from the prior (as calibration's holds do) leaves the parameter it
// cannot fit at the prior, not where the warm start had it: the fitted values alone then give
// the fit's residuals, which is what an overlay that lists only them relies on.
TEST(LeastSquares, AParameterNotFittedHoldsItsPrior) {
  LsqProblem p = two_alike(1, 3, Eigen::Vector3d(1, 5, 0));  // an earlier solution moved x1
  p.prior = Eigen::Vector3d(1, 1, 0);
  const LsqResult r = robust_least_squares(p);
  ASSERT_FALSE(r.free[1]);
  EXPECT_EQ(r.x[1], 1);
  EXPECT_NEAR(r.x[0], 2, 1e-6);
}

// Six parameters, each the mean of its own three rows, which scatter by +-1 around 0.1: every
// one is loose (a standard error far above half its value), and every one is held at its prior,
// however many there are.
TEST(FitHolds, EveryLooseParameterIsHeld) {
  constexpr int kParams = 6;
  LsqProblem p;
  p.residuals = [](const Eigen::VectorXd& x) {
    Eigen::VectorXd r(3 * kParams);
    for (int j = 0; j < kParams; ++j) {
      for (int i = 0; i < 3; ++i) r[3 * j + i] = x[j] - (0.1 + (i - 1) * (1.0 + 0.1 * j));
    }
    return r;
  };
  p.x0 = Eigen::VectorXd::Constant(kParams, 0.5);
  p.prior = p.x0;
  p.lower = Eigen::VectorXd::Constant(kParams, -10);
  p.upper = Eigen::VectorXd::Constant(kParams, 10);
  p.step = Eigen::VectorXd::Constant(kParams, 1e-3);
  LsqResult fit = robust_least_squares(p);
  for (int j = 0; j < kParams; ++j) ASSERT_TRUE(fit.free[static_cast<std::size_t>(j)]) << j;
  const std::vector<CostParameter> params(kParams, CostParameter{{CostField::Kind::kHostLaunch}});
  const std::vector<bool> weak = hold_loose_parameters(p, fit, params, 0.5);
  for (int j = 0; j < kParams; ++j) {
    EXPECT_TRUE(weak[static_cast<std::size_t>(j)]) << j;
    EXPECT_FALSE(fit.free[static_cast<std::size_t>(j)]) << j;
    EXPECT_EQ(fit.x[j], 0.5) << j;
  }
}

// A channel's cap (x0, the log of its rate) that the rows stop depending on once it is above
// log 4: three rows whose time is the longer of what the cap allows (s / e^x0) and what their
// links allow (1), measured at the links' 1 with s = 2, 3, 4, and rows of a second parameter
// (x1 = 0.3). From a binding prior of 0 the first pass raises the cap past log 4, where no row
// depends on it; the next would put it back at its prior, where it binds. The fit keeps it at
// log 4, the value nearest the prior that the rows allow, fitted, with residuals of zero.
TEST(LeastSquares, ACapRaisedPastTheRowsIsKeptWhereTheyStartToDependOnIt) {
  const LsqProblem p = problem(2, [](const Eigen::VectorXd& x) {
    Eigen::VectorXd r(6);
    for (int i = 0; i < 3; ++i) r[i] = std::log(std::max((2.0 + i) / std::exp(x[0]), 1.0));
    for (int i = 0; i < 3; ++i) r[3 + i] = x[1] - 0.3 + 0.01 * (i - 1);
    return r;
  });
  const LsqResult fit = robust_least_squares(p);
  ASSERT_EQ(fit.at_edge.size(), 2u);
  EXPECT_TRUE(fit.free[0]);
  EXPECT_TRUE(fit.at_edge[0]);
  EXPECT_FALSE(fit.at_edge[1]);
  EXPECT_GE(fit.x[0], std::log(4.0));
  EXPECT_NEAR(fit.x[0], std::log(4.0), 1e-5);
  EXPECT_NEAR(fit.x[1], 0.3, 1e-6);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(fit.residuals[i], 0.0) << i;
}

// One wild outlier among 20 points barely moves a Huber fit; it would move a plain mean by 0.5.
TEST(LeastSquares, HuberWeightsResistAnOutlier) {
  LsqProblem p;
  p.residuals = [](const Eigen::VectorXd& x) {
    Eigen::VectorXd r(20);
    for (int i = 0; i < 20; ++i) r[i] = x[0] - (i == 7 ? 11.0 : 1.0 + (i % 2 ? 0.01 : -0.01));
    return r;
  };
  p.x0 = Eigen::VectorXd::Constant(1, 0);
  p.lower = Eigen::VectorXd::Constant(1, -100);
  p.upper = Eigen::VectorXd::Constant(1, 100);
  p.step = Eigen::VectorXd::Constant(1, 1e-3);
  const LsqResult r = robust_least_squares(p);
  EXPECT_NEAR(r.x[0], 1, 0.01);
  EXPECT_LT(r.weights[7], 0.01);
}

}  // namespace
}  // namespace collsim
