// Which parameters a fit holds at their prior values, and why (calibration.cpp uses these after
// the robust fit of least_squares.hpp):
//   hold_unshared_parameters  one cluster's rows alone determine it (calibrate --shared-only)
//   hold_loose_parameters     the rows pin it only loosely (a large standard error)
// Each holds what it finds (LsqProblem::fixed, at LsqProblem::prior, which must be set) and fits
// the rest again.
#pragma once

#include <utility>
#include <vector>

#include "calibrate/cost_parameters.hpp"
#include "calibrate/least_squares.hpp"

namespace collsim {

// The share of parameter j's information (the sum over rows of w J^2, at the fit) that each
// group of rows gives: row_group[i] is row i's group, one of `groups`. All zero if no row
// depends on j.
std::vector<double> information_by_group(const LsqResult& fit, Eigen::Index j,
                                         const std::vector<int>& row_group, int groups);

// A parameter that one cluster alone determines (more than max_share of its information) says
// how that cluster differs, not what the clusters share: held at its prior value, and the rest
// fitted again, until no fitted parameter is one cluster's. A parameter that is one cluster's
// by design (CostParameter::cluster) stays fitted. Returns, per parameter, the cluster that held
// it (-1: not held) and its share. Nothing is held with fewer than two clusters or
// max_share >= 1.
std::vector<std::pair<int, double>> hold_unshared_parameters(
    LsqProblem& p, LsqResult& fit, const std::vector<CostParameter>& params,
    const std::vector<int>& row_cluster, int clusters, double max_share);

// A parameter the rows pin only loosely (a standard error above max_relative_sigma of its
// value) is no calibration: the loosest one goes back to its prior value and is held, and the
// rest are fitted again, one at a time, since two correlated parameters are loose together and
// holding one usually pins the other. Returns which were held.
std::vector<bool> hold_loose_parameters(LsqProblem& p, LsqResult& fit,
                                        const std::vector<CostParameter>& params,
                                        double max_relative_sigma);

}  // namespace collsim
