#include "calibrate/least_squares.hpp"

#include <algorithm>
#include <cmath>

namespace collsim {

namespace {

Eigen::VectorXd huber_weights(const Eigen::VectorXd& r, double scale, double k) {
  Eigen::VectorXd w(r.size());
  for (Eigen::Index i = 0; i < r.size(); ++i) {
    const double u = std::abs(r[i]) / scale;
    w[i] = u <= k ? 1.0 : k / u;
  }
  return w;
}

// Sum of the Huber loss: quadratic inside k scales, linear outside.
double huber_cost(const Eigen::VectorXd& r, double scale, double k) {
  double c = 0;
  for (Eigen::Index i = 0; i < r.size(); ++i) {
    const double u = std::abs(r[i]) / scale;
    c += u <= k ? 0.5 * u * u : k * u - 0.5 * k * k;
  }
  return c * scale * scale;
}

Eigen::VectorXd clamp(const Eigen::VectorXd& x, const LsqProblem& p) {
  return x.cwiseMax(p.lower).cwiseMin(p.upper);
}

}  // namespace

double robust_scale(const Eigen::VectorXd& r) {
  if (r.size() == 0) return 0;
  std::vector<double> a(r.size());
  for (Eigen::Index i = 0; i < r.size(); ++i) a[i] = std::abs(r[i]);
  const auto mid = a.begin() + static_cast<std::ptrdiff_t>(a.size() / 2);
  std::nth_element(a.begin(), mid, a.end());
  double med = *mid;
  if (a.size() % 2 == 0) {
    med = 0.5 * (med + *std::max_element(a.begin(), mid));
  }
  return 1.4826 * med;
}

namespace {

// One pass: choose the free parameters at p.x0, then iterate.
LsqResult one_pass(const LsqProblem& p) {
  const Eigen::Index n = p.x0.size();
  LsqResult out;
  out.x = clamp(p.x0, p);
  out.free.assign(static_cast<std::size_t>(n), false);
  out.collinear_with.assign(static_cast<std::size_t>(n), -1);
  out.sigma = Eigen::VectorXd::Zero(n);

  auto eval = [&](const Eigen::VectorXd& x) {
    ++out.evaluations;
    return p.residuals(x);
  };
  // Forward differences, stepping towards the inside of the bounds; only the columns in `cols`.
  auto jacobian = [&](const Eigen::VectorXd& x, const Eigen::VectorXd& r,
                      const std::vector<Eigen::Index>& cols) {
    Eigen::MatrixXd J = Eigen::MatrixXd::Zero(r.size(), n);
    for (Eigen::Index j : cols) {
      Eigen::VectorXd xs = x;
      const double h = x[j] + p.step[j] <= p.upper[j] ? p.step[j] : -p.step[j];
      xs[j] += h;
      J.col(j) = (eval(xs) - r) / h;
    }
    return J;
  };

  Eigen::VectorXd r = eval(out.x);
  const Eigen::Index m = r.size();
  std::vector<Eigen::Index> candidates;
  for (Eigen::Index j = 0; j < n; ++j) {
    if (p.fixed.empty() || !p.fixed[static_cast<std::size_t>(j)]) candidates.push_back(j);
  }
  Eigen::MatrixXd J = jacobian(out.x, r, candidates);

  // Which parameters the data determine.
  std::vector<Eigen::Index> free;
  {
    Eigen::MatrixXd scaled = J;
    for (Eigen::Index j = 0; j < n; ++j) {
      const double norm = J.col(j).norm();
      scaled.col(j) = norm > 0 ? Eigen::VectorXd(J.col(j) / norm) : Eigen::VectorXd::Zero(m);
    }
    Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(scaled);
    const Eigen::MatrixXd R = qr.matrixQR().triangularView<Eigen::Upper>();
    const auto perm = qr.colsPermutation().indices();
    const double r00 = R.rows() > 0 && R.cols() > 0 ? std::abs(R(0, 0)) : 0;
    for (Eigen::Index k = 0; k < std::min(m, n); ++k) {
      if (r00 > 0 && std::abs(R(k, k)) > p.rank_tolerance * r00) free.push_back(perm[k]);
    }
    std::sort(free.begin(), free.end());
    for (Eigen::Index j : free) out.free[static_cast<std::size_t>(j)] = true;
    for (Eigen::Index j = 0; j < n; ++j) {
      if (out.free[static_cast<std::size_t>(j)] || J.col(j).norm() == 0) continue;
      double best = -1;
      for (Eigen::Index f : free) {
        const double c = std::abs(scaled.col(j).dot(scaled.col(f)));
        if (c > best) {
          best = c;
          out.collinear_with[static_cast<std::size_t>(j)] = static_cast<int>(f);
        }
      }
    }
  }
  const auto k = static_cast<Eigen::Index>(free.size());
  auto free_cols = [&](const Eigen::MatrixXd& full) {
    Eigen::MatrixXd F(full.rows(), k);
    for (Eigen::Index i = 0; i < k; ++i) F.col(i) = full.col(free[static_cast<std::size_t>(i)]);
    return F;
  };

  double scale = std::max(p.min_scale, robust_scale(r));
  double cost = huber_cost(r, scale, p.huber_k);
  double lambda = 1e-3;
  for (out.iterations = 0; k > 0 && out.iterations < p.max_iterations; ++out.iterations) {
    const Eigen::VectorXd w = huber_weights(r, scale, p.huber_k);
    const Eigen::MatrixXd Jf = free_cols(J);
    const Eigen::MatrixXd A = Jf.transpose() * w.asDiagonal() * Jf;
    const Eigen::VectorXd g = Jf.transpose() * (w.asDiagonal() * r);
    bool accepted = false;
    for (int tries = 0; tries < 12 && !accepted; ++tries) {
      Eigen::MatrixXd damped = A;
      damped.diagonal() += lambda * A.diagonal().cwiseMax(1e-12);
      const Eigen::VectorXd delta = damped.ldlt().solve(-g);
      Eigen::VectorXd x = out.x;
      for (Eigen::Index i = 0; i < k; ++i) x[free[static_cast<std::size_t>(i)]] += delta[i];
      x = clamp(x, p);
      const Eigen::VectorXd rx = eval(x);
      const double cx = huber_cost(rx, scale, p.huber_k);
      if (cx < cost) {
        const double change = (cost - cx) / std::max(cost, 1e-300);
        out.x = x;
        r = rx;
        cost = cx;
        lambda = std::max(lambda / 10, 1e-9);
        accepted = true;
        if (change < p.tolerance) out.converged = true;
      } else {
        lambda *= 10;
      }
    }
    if (!accepted) {
      out.converged = true;  // no step lowers the cost: a minimum up to the damping
      break;
    }
    J = jacobian(out.x, r, free);
    // Re-estimate the scale on the new residuals, keeping the cost comparable.
    scale = std::max(p.min_scale, robust_scale(r));
    cost = huber_cost(r, scale, p.huber_k);
    if (out.converged) break;
  }
  if (k == 0) out.converged = true;
  if (out.iterations > 0) {
    // The columns of parameters not free were computed at x0 only; they are not valid at x.
    for (Eigen::Index j = 0; j < n; ++j) {
      if (!out.free[static_cast<std::size_t>(j)]) J.col(j).setZero();
    }
  }
  out.at_bound.assign(static_cast<std::size_t>(n), false);
  for (Eigen::Index j : free) {
    out.at_bound[static_cast<std::size_t>(j)] =
        out.x[j] <= p.lower[j] + 1e-9 || out.x[j] >= p.upper[j] - 1e-9;
  }

  out.residuals = r;
  out.jacobian = J;
  out.scale = std::max(p.min_scale, robust_scale(r));
  out.weights = huber_weights(r, out.scale, p.huber_k);
  if (k > 0 && m > k) {
    const Eigen::MatrixXd Jf = free_cols(J);
    const Eigen::MatrixXd A = Jf.transpose() * out.weights.asDiagonal() * Jf;
    const double s2 = (out.weights.array() * r.array().square()).sum() / static_cast<double>(m - k);
    const Eigen::MatrixXd cov = s2 * A.completeOrthogonalDecomposition().pseudoInverse();
    for (Eigen::Index i = 0; i < k; ++i) {
      out.sigma[free[static_cast<std::size_t>(i)]] = std::sqrt(std::max(0.0, cov(i, i)));
    }
  }
  return out;
}

}  // namespace

LsqResult robust_least_squares(const LsqProblem& p) {
  // What the data can determine depends on where the parameters are (a channel cap that binds
  // hides the link behind it), so choose the free set again at the solution, and iterate from
  // there while it changes.
  LsqResult r = one_pass(p);
  for (int pass = 1; pass < 4; ++pass) {
    LsqProblem next = p;
    next.x0 = r.x;
    LsqResult again = one_pass(next);
    again.evaluations += r.evaluations;
    again.iterations += r.iterations;
    const bool same = again.free == r.free;
    r = std::move(again);
    if (same) break;
  }
  return r;
}

}  // namespace collsim
