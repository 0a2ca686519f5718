// Robust nonlinear least squares for calibration: Levenberg-Marquardt over a residual function
// that is only known by evaluating it (the simulator), with Huber weights against outliers (the
// mid-size dips real nccl-tests logs show) and standard errors from the weighted Jacobian.
//
//   LsqProblem p;
//   p.residuals = [&](const Eigen::VectorXd& x) { return predicted_log_times(x) - measured; };
//   p.x0 = start;  p.lower = lo;  p.upper = hi;  p.step = fd_steps;
//   LsqResult r = robust_least_squares(p);
//   r.x[i] +- r.sigma[i]        // only where r.free[i]; other entries stay at x0
//
// Identifiability: parameters the data cannot tell apart are not fitted. Before iterating, the
// Jacobian's columns (scaled to unit norm) go through a rank-revealing QR (Eigen's
// ColPivHouseholderQR, threshold `rank_tolerance`); the columns beyond its rank are left at x0 and
// marked not free, and `collinear_with` names the free parameter each resembles most. A launch
// overhead and a per-step latency measured at one rank count only ever appear as their sum, for
// example, so only one of them is fitted: of two that move every row alike, the one of higher
// LsqProblem::priority where they differ.
// What can be determined depends on where the parameters
// are (a channel cap that binds hides the link behind it), so the choice is made again at the
// solution and the fit continues from there until the free set stops changing (at most 4 passes);
// a parameter a pass does not fit goes back to its prior (LsqProblem::prior), so `x` holds the
// prior of every parameter not free. One exception: a parameter a pass fitted past the point where
// any row depends on it (a channel's cap raised until no row reaches it) would go back to its
// prior, where it binds, be fitted past the point again by the next pass, and so on. Every value
// beyond that point fits the rows alike, so it is kept at the point, the value nearest its prior
// that the rows allow (found by bisection, the residuals bit for bit the same), and held there by
// the later passes: it counts as fitted, `at_edge`, with no sigma.
//
// Uncertainty: with W the final Huber weights, r the residuals and J the Jacobian of the free
// parameters, s^2 = sum(w r^2) / (m - k) and Cov = s^2 (J^T W J)^-1 (the usual asymptotic
// covariance of an M-estimator; Huber 1981, ch. 7). sigma = sqrt(diag(Cov)).
//
// Deterministic: no randomness, a fixed evaluation order.
#pragma once

#include <Eigen/Dense>
#include <functional>
#include <vector>

namespace collsim {

struct LsqProblem {
  std::function<Eigen::VectorXd(const Eigen::VectorXd&)> residuals;
  Eigen::VectorXd x0;
  // Where a parameter the fit leaves out goes back to (empty: x0). A refit that warm-starts from
  // an earlier solution keeps the first start here, so that whatever is reported as not fitted
  // holds its prior, whichever pass moved it before.
  Eigen::VectorXd prior;
  Eigen::VectorXd lower;  // bounds, enforced by clamping each step
  Eigen::VectorXd upper;
  Eigen::VectorXd step;     // finite-difference step per parameter (> 0)
  std::vector<bool> fixed;  // parameters held at x0 (empty: none)
  // Of two parameters that move every row alike, the one with the lower number here is fitted
  // and the other held (empty, or equal numbers: whichever the pivoting picks).
  std::vector<int> priority;
  int max_iterations = 30;
  double huber_k = 1.345;        // in units of the robust residual scale (95% efficiency)
  double min_scale = 1e-4;       // floor of the robust scale (residuals are log-times)
  double rank_tolerance = 0.05;  // |R_kk| / |R_00| below this: not identifiable
  double tolerance = 1e-6;       // relative cost change that ends the iteration
};

struct LsqResult {
  Eigen::VectorXd x;
  Eigen::VectorXd sigma;            // 0 where not free
  std::vector<bool> free;           // fitted (identifiable and sensitive)
  std::vector<int> collinear_with;  // for a parameter not free: the free one it resembles, or -1
  std::vector<bool> at_bound;       // free, but the fit ended on one of its bounds
  std::vector<bool> at_edge;        // free, kept where the rows start to depend on it (above)
  Eigen::VectorXd residuals;        // at x
  Eigen::VectorXd weights;          // final Huber weights, in (0, 1]
  Eigen::MatrixXd jacobian;         // at x; the columns of parameters not free are zero
  double scale = 0;                 // robust residual scale (1.4826 MAD)
  int iterations = 0;
  int evaluations = 0;
  bool converged = false;
};

LsqResult robust_least_squares(const LsqProblem& p);

// 1.4826 x the median absolute residual: the robust scale Huber weights are measured in.
double robust_scale(const Eigen::VectorXd& r);

}  // namespace collsim
