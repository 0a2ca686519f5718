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

// Columns this close to parallel (1 - |cos|) are one parameter twice: a product of two factors,
// or a sum of two delays, that no row separates. Finite differences of simulations rounded to
// the picosecond leave such columns a few parts in a million apart (pcie-2gpu's PCIe efficiency
// and host staging: 3.2e-6); the rank test (rank_tolerance 0.05, an angle of 2.9 degrees) already
// cannot tell apart columns far less alike than this (0.8 degrees).
constexpr double kSameColumn = 1e-4;

int priority_of(const LsqProblem& p, Eigen::Index j) {
  return p.priority.empty() ? 0 : p.priority[static_cast<std::size_t>(j)];
}

// One pass: choose the free parameters at p.x0, then iterate.
// The columns of the parameters the data determine: a rank-revealing QR of the column-scaled
// Jacobian. Every other parameter with a non-zero column is marked collinear with the free one
// its column is most parallel to. Sets out.free and out.collinear_with.
std::vector<Eigen::Index> determined_parameters(const LsqProblem& p, const Eigen::MatrixXd& J,
                                                LsqResult& out) {
  const double tolerance = p.rank_tolerance;
  const Eigen::Index m = J.rows(), n = J.cols();
  Eigen::MatrixXd scaled = J;
  for (Eigen::Index j = 0; j < n; ++j) {
    const double norm = J.col(j).norm();
    scaled.col(j) = norm > 0 ? Eigen::VectorXd(J.col(j) / norm) : Eigen::VectorXd::Zero(m);
  }
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(scaled);
  const Eigen::MatrixXd R = qr.matrixQR().triangularView<Eigen::Upper>();
  const auto perm = qr.colsPermutation().indices();
  const double r00 = R.rows() > 0 && R.cols() > 0 ? std::abs(R(0, 0)) : 0;
  std::vector<Eigen::Index> free;
  for (Eigen::Index k = 0; k < std::min(m, n); ++k) {
    if (r00 > 0 && std::abs(R(k, k)) > tolerance * r00) free.push_back(perm[k]);
  }
  // Of two parameters whose columns are the same (they move every row alike), the pivoting
  // keeps whichever rounding favours; the one of higher priority (LsqProblem::priority) is kept
  // instead.
  for (Eigen::Index& f : free) {
    for (Eigen::Index j = 0; j < n; ++j) {
      if (priority_of(p, j) >= priority_of(p, f)) continue;
      const bool taken = std::find(free.begin(), free.end(), j) != free.end();
      if (!taken && std::abs(scaled.col(j).dot(scaled.col(f))) > 1 - kSameColumn) {
        f = j;
        break;
      }
    }
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
  return free;
}

Eigen::MatrixXd columns(const Eigen::MatrixXd& full, const std::vector<Eigen::Index>& cols) {
  Eigen::MatrixXd F(full.rows(), static_cast<Eigen::Index>(cols.size()));
  for (std::size_t i = 0; i < cols.size(); ++i)
    F.col(static_cast<Eigen::Index>(i)) = full.col(cols[i]);
  return F;
}

// One pass of the robust fit, counting residual evaluations in `out`.
class Pass {
 public:
  Pass(const LsqProblem& p, LsqResult& out) : p_(p), out_(out) {}

  Eigen::VectorXd residuals(const Eigen::VectorXd& x) {
    ++out_.evaluations;
    return p_.residuals(x);
  }

  // Forward differences, stepping towards the inside of the bounds; only the columns in `cols`.
  Eigen::MatrixXd jacobian(const Eigen::VectorXd& x, const Eigen::VectorXd& r,
                           const std::vector<Eigen::Index>& cols) {
    Eigen::MatrixXd J = Eigen::MatrixXd::Zero(r.size(), p_.x0.size());
    for (Eigen::Index j : cols) {
      Eigen::VectorXd xs = x;
      const double h = x[j] + p_.step[j] <= p_.upper[j] ? p_.step[j] : -p_.step[j];
      xs[j] += h;
      J.col(j) = (residuals(xs) - r) / h;
    }
    return J;
  }

  // One Levenberg-Marquardt step on the free parameters: raise the damping until a step lowers
  // the Huber cost (then accept it and relax the damping), at most 12 times. False if none did.
  bool step(const Eigen::MatrixXd& J, const std::vector<Eigen::Index>& free, double scale,
            Eigen::VectorXd& r, double& cost, double& lambda) {
    const Eigen::VectorXd w = huber_weights(r, scale, p_.huber_k);
    const Eigen::MatrixXd Jf = columns(J, free);
    const Eigen::MatrixXd A = Jf.transpose() * w.asDiagonal() * Jf;
    const Eigen::VectorXd g = Jf.transpose() * (w.asDiagonal() * r);
    for (int tries = 0; tries < 12; ++tries) {
      Eigen::MatrixXd damped = A;
      damped.diagonal() += lambda * A.diagonal().cwiseMax(1e-12);
      const Eigen::VectorXd delta = damped.ldlt().solve(-g);
      Eigen::VectorXd x = out_.x;
      for (std::size_t i = 0; i < free.size(); ++i) {
        x[free[i]] += delta[static_cast<Eigen::Index>(i)];
      }
      x = clamp(x, p_);
      const Eigen::VectorXd rx = residuals(x);
      const double cx = huber_cost(rx, scale, p_.huber_k);
      if (cx < cost) {
        const double change = (cost - cx) / std::max(cost, 1e-300);
        out_.x = x;
        r = rx;
        cost = cx;
        lambda = std::max(lambda / 10, 1e-9);
        if (change < p_.tolerance) out_.converged = true;
        return true;
      }
      lambda *= 10;
    }
    return false;
  }

  // Bounds reached, the final residuals and weights, and the standard errors s²(JᵀWJ)⁻¹.
  void finish(Eigen::MatrixXd J, const std::vector<Eigen::Index>& free, const Eigen::VectorXd& r) {
    const Eigen::Index n = p_.x0.size(), m = r.size();
    const auto k = static_cast<Eigen::Index>(free.size());
    if (out_.iterations > 0) {
      // The columns of parameters not free were computed at x0 only; they are not valid at x.
      for (Eigen::Index j = 0; j < n; ++j) {
        if (!out_.free[static_cast<std::size_t>(j)]) J.col(j).setZero();
      }
    }
    out_.at_bound.assign(static_cast<std::size_t>(n), false);
    for (Eigen::Index j : free) {
      out_.at_bound[static_cast<std::size_t>(j)] =
          out_.x[j] <= p_.lower[j] + 1e-9 || out_.x[j] >= p_.upper[j] - 1e-9;
    }
    out_.residuals = r;
    out_.jacobian = J;
    out_.scale = std::max(p_.min_scale, robust_scale(r));
    out_.weights = huber_weights(r, out_.scale, p_.huber_k);
    if (k == 0 || m <= k) return;
    const Eigen::MatrixXd Jf = columns(J, free);
    const Eigen::MatrixXd A = Jf.transpose() * out_.weights.asDiagonal() * Jf;
    const double s2 =
        (out_.weights.array() * r.array().square()).sum() / static_cast<double>(m - k);
    const Eigen::MatrixXd cov = s2 * A.completeOrthogonalDecomposition().pseudoInverse();
    for (Eigen::Index i = 0; i < k; ++i) {
      out_.sigma[free[static_cast<std::size_t>(i)]] = std::sqrt(std::max(0.0, cov(i, i)));
    }
  }

 private:
  const LsqProblem& p_;
  LsqResult& out_;
};

// `prior`: where the parameters started before any pass; one this pass does not fit goes back
// there, so that a parameter reported as not fitted holds its prior even if an earlier pass,
// choosing at another point, moved it.
LsqResult one_pass(const LsqProblem& p, const Eigen::VectorXd& prior) {
  const Eigen::Index n = p.x0.size();
  LsqResult out;
  out.x = clamp(p.x0, p);
  out.free.assign(static_cast<std::size_t>(n), false);
  out.collinear_with.assign(static_cast<std::size_t>(n), -1);
  out.sigma = Eigen::VectorXd::Zero(n);
  Pass pass(p, out);

  Eigen::VectorXd r = pass.residuals(out.x);
  std::vector<Eigen::Index> candidates;
  for (Eigen::Index j = 0; j < n; ++j) {
    if (p.fixed.empty() || !p.fixed[static_cast<std::size_t>(j)]) candidates.push_back(j);
  }
  Eigen::MatrixXd J = pass.jacobian(out.x, r, candidates);
  const std::vector<Eigen::Index> free = determined_parameters(p, J, out);
  bool moved = false;
  for (Eigen::Index j = 0; j < n; ++j) {
    if (!out.free[static_cast<std::size_t>(j)] && out.x[j] != prior[j]) {
      out.x[j] = prior[j];
      moved = true;
    }
  }
  if (moved) {
    r = pass.residuals(out.x);
    J = pass.jacobian(out.x, r, free);
  }

  double scale = std::max(p.min_scale, robust_scale(r));
  double cost = huber_cost(r, scale, p.huber_k);
  double lambda = 1e-3;
  for (out.iterations = 0; !free.empty() && out.iterations < p.max_iterations; ++out.iterations) {
    if (!pass.step(J, free, scale, r, cost, lambda)) {
      out.converged = true;  // no step lowers the cost: a minimum up to the damping
      break;
    }
    J = pass.jacobian(out.x, r, free);
    // Re-estimate the scale on the new residuals, keeping the cost comparable.
    scale = std::max(p.min_scale, robust_scale(r));
    cost = huber_cost(r, scale, p.huber_k);
    if (out.converged) break;
  }
  if (free.empty()) out.converged = true;
  pass.finish(std::move(J), free, r);
  return out;
}

// Each free parameter of `r` on which no row depends at r.x, though it moved from its prior,
// goes back to the point where the rows start to depend on it: bisection between the prior (some
// row depends on it there) and r.x (none does), to a thousandth of its finite-difference step. It
// is then held there (`fixed`, and `prior` at the point, for the passes that follow). One no row
// depends on even at its prior goes back to the prior, like any parameter a pass cannot fit.
// Returns whether any was found.
bool keep_at_edges(const LsqProblem& p, Eigen::VectorXd& prior, std::vector<bool>& fixed,
                   LsqResult& r, std::vector<bool>& edge) {
  const Eigen::Index n = r.x.size();
  // The simulation is deterministic: rows that do not depend on a parameter read bit for bit the
  // same whatever its value.
  const auto same = [&](Eigen::Index j, double v) {
    Eigen::VectorXd x = r.x;
    x[j] = v;
    ++r.evaluations;
    return (p.residuals(x) - r.residuals).cwiseAbs().maxCoeff() == 0;
  };
  bool found = false;
  for (Eigen::Index j = 0; j < n; ++j) {
    const auto k = static_cast<std::size_t>(j);
    if (!r.free[k] || r.at_bound[k] || r.x[j] == prior[j]) continue;
    if (r.jacobian.col(j).cwiseAbs().maxCoeff() > 0) continue;
    found = true;
    if (same(j, prior[j])) {
      r.x[j] = prior[j];
      r.free[k] = false;
      continue;
    }
    double lo = prior[j], hi = r.x[j];
    const double resolution = p.step[j] * 1e-3;
    while (std::abs(hi - lo) > resolution) {
      const double mid = 0.5 * (lo + hi);
      (same(j, mid) ? hi : lo) = mid;
    }
    r.x[j] = prior[j] = hi;
    fixed[k] = true;
    edge[k] = true;
  }
  return found;
}

}  // namespace

LsqResult robust_least_squares(const LsqProblem& p) {
  // What the data can determine depends on where the parameters are (a channel cap that binds
  // hides the link behind it), so choose the free set again at the solution, and iterate from
  // there while it changes.
  const auto n = static_cast<std::size_t>(p.x0.size());
  Eigen::VectorXd prior = clamp(p.prior.size() == p.x0.size() ? p.prior : p.x0, p);
  LsqProblem base = p;
  if (base.fixed.empty()) base.fixed.assign(n, false);
  std::vector<bool> edge(n, false);
  LsqResult r = one_pass(base, prior);
  for (int pass = 1;; ++pass) {
    const bool moved = keep_at_edges(base, prior, base.fixed, r, edge);
    if (pass >= 4) break;
    LsqProblem next = base;
    next.x0 = r.x;
    LsqResult again = one_pass(next, prior);
    again.evaluations += r.evaluations;
    again.iterations += r.iterations;
    const bool same = again.free == r.free && !moved;
    r = std::move(again);
    if (same) {
      keep_at_edges(base, prior, base.fixed, r, edge);
      break;
    }
  }
  r.at_edge = edge;
  for (std::size_t k = 0; k < n; ++k) {
    if (edge[k]) r.free[k] = true;  // fitted: the rows set it, as far as they can
  }
  return r;
}

}  // namespace collsim
