// Which parameters a fit holds at their prior values, and why (calibration.cpp uses these after
// the robust fit of least_squares.hpp):
//   hold_unshared_parameters  one cluster's rows alone determine it (calibrate --shared-only)
//   hold_loose_parameters     the rows pin it only loosely (a large standard error)
//   hold_untransferable_parameters  fitted without a cluster (or a file), it predicts what was
//                             left out worse than its prior (calibrate --shared-only,
//                             --cross-check)
// Each holds what it finds (LsqProblem::fixed, at LsqProblem::prior, which must be set) and fits
// the rest again.
#pragma once

#include <functional>
#include <string>
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
// What the report says of a parameter held for `held` (one entry of the above), the clusters
// named as in the fit.
std::string unshared_reason(const std::pair<int, double>& held,
                            const std::vector<std::string>& cluster_names);

// A parameter the rows pin only loosely (a standard error above max_relative_sigma of its
// value) is no calibration: the loosest one goes back to its prior value and is held, and the
// rest are fitted again, one at a time, since two correlated parameters are loose together and
// holding one usually pins the other. Returns which were held.
std::vector<bool> hold_loose_parameters(LsqProblem& p, LsqResult& fit,
                                        const std::vector<CostParameter>& params,
                                        double max_relative_sigma);
// What the report says of a parameter held as loose.
std::string loose_reason(double max_relative_sigma);

// A fit meant for a cluster none of its rows came from predicts across clusters, and that can be
// tried on the fit's own clusters before it is trusted: for each cluster c whose rows depend on
// a fitted shared parameter, the same fit on the other clusters' rows alone (`residuals_without`:
// the residuals of every row but c's, in order) predicts c's rows. A cluster's score is the mean
// |log(predicted / measured)| of its rows; the check's score is the mean over the clusters.
// Starting from every shared parameter at its fitted value (cluster c's prediction takes the
// values fitted without c, the others their priors), parameters go back to their priors one at
// a time: while some cluster is predicted worse than with every one at its prior, the one whose
// return leaves the worst such excess smallest (then the lowest score); after that, while one
// does, the one whose return lowers the score most. A value carried to a cluster it was not
// fitted to must predict none of them worse than the prior does: what the clusters' fits
// disagree on, or what only mends some clusters' misfit at the others' expense, does not carry
// over to the next cluster, and is held at its prior; the rest is fitted again on every row. A
// cluster's own parameters (CostParameter::cluster) are not the check's: a cluster left out has
// none fitted. Nothing is held with fewer than two clusters. The groups left out are whatever
// `row_cluster` numbers: calibration.cpp passes each row's file instead where the fit has one
// cluster.
struct TransferCheck {
  std::vector<bool> held;       // per parameter
  std::vector<double> with;     // per held parameter: the score before it went back
  std::vector<double> without;  // and after
  // Per held parameter, the group predicted worse than at the priors that it was held for, or
  // -1 where it was held for the mean score. For such a group `with` is the group's score with
  // the values kept then, this one among them, and `without` its score at the priors.
  std::vector<int> worst;
  int clusters = 0;             // groups predicted (those whose rows depend on a candidate)
  double fitted = 0;            // the score with every shared parameter fitted
  double prior = 0;             // with every one at its prior
  double kept = 0;              // with those kept fitted

  // What the report says of held parameter j: `unit` is "clusters" or "files", `names` the
  // groups' names as row_cluster numbers them.
  std::string reason(std::size_t j, const std::string& unit,
                     const std::vector<std::string>& names) const;
};
using ResidualsOf = std::function<Eigen::VectorXd(const Eigen::VectorXd&)>;
// `all`'s residuals less the rows of `group` (row_group numbers each row's), in order: a fit
// without them, where the rows left out cannot be skipped in the simulation.
ResidualsOf rows_outside(ResidualsOf all, const std::vector<int>& row_group, int group);
TransferCheck hold_untransferable_parameters(
    LsqProblem& p, LsqResult& fit, const std::vector<CostParameter>& params,
    const std::vector<int>& row_cluster, int clusters,
    const std::function<ResidualsOf(int)>& residuals_without);

}  // namespace collsim
