#include "calibrate/calibration.hpp"

#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <string_view>

#include "algorithms/generators/registry.hpp"
#include "calibrate/fit_holds.hpp"
#include "calibrate/least_squares.hpp"
#include "predict/parallel.hpp"
#include "topology/error.hpp"

namespace collsim {

namespace {

std::string request_key(const Request& r) {
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", to_string(r.collective), r.algorithm,
                     to_string(r.protocol), to_string(r.dtype), r.count, r.channels, r.root,
                     r.comm.size(), r.host.gpus_per_thread, r.host.graph);
}

// Schedules built once, shared by every row that runs the same request.
class ScheduleCache {
 public:
  int index(const Request& r) {
    const std::string key = request_key(r);
    const auto it = index_.find(key);
    if (it != index_.end()) return it->second;
    schedules_.push_back(plan(r));
    requests_.push_back(r);
    return index_[key] = static_cast<int>(schedules_.size() - 1);
  }
  std::size_t size() const { return schedules_.size(); }
  const Schedule& schedule(int i) const { return schedules_[i]; }
  const Request& request(int i) const { return requests_[i]; }

 private:
  std::map<std::string, int> index_;
  std::vector<Schedule> schedules_;
  std::vector<Request> requests_;
};

Time simulate_request(const Topology& topo, const Request& r, const Schedule& s,
                      const CostParams& costs) {
  RowCase c;
  c.request = r;
  return *predict_case(topo, c, costs, Model::kMaxMin, &s);
}

// How the fit predicts one row: one schedule, or two to extrapolate from.
struct FitRow {
  int a = -1, b = -1;  // schedule indices; b < 0: exact
  double bytes = 0, bytes_a = 0, bytes_b = 0;
  double measured_us = 0;
  std::size_t file = 0;
};

// `r` at another size, NCCL's division among its channels scaled with it (the fit's secant
// between two sizes keeps the row's shape).
Request with_count(Request r, std::uint64_t count) {
  r.count = std::max<std::uint64_t>(1, count);
  r.split = r.split.scaled_to(r.count);
  return r;
}

using FileCase = std::pair<std::size_t, RowCase>;  // (file index, case)

// The rows the fit can use, and the protocols they ran; what it cannot use goes to cal.skipped.
std::vector<FileCase> fit_cases(const Topology& topo, const std::vector<MeasurementFile>& files,
                                Calibration& cal, std::set<Protocol>& protocols) {
  std::vector<FileCase> cases;
  for (std::size_t fi = 0; fi < files.size(); ++fi) {
    FilePlan plan = plan_measurements(topo, files[fi]);
    // A file of several collectives comes as several parts: list it once.
    if (std::find(cal.files.begin(), cal.files.end(), files[fi].path) == cal.files.end()) {
      cal.files.push_back(files[fi].path);
    }
    for (std::string& s : plan.skipped) cal.skipped.push_back(std::move(s));
    for (RowCase& c : plan.cases) {
      if (c.measured_us <= 0) continue;
      protocols.insert(c.request.protocol);
      cases.emplace_back(fi, std::move(c));
    }
  }
  if (cases.empty()) {
    throw MeasurementError(
        "calibrate: no row of the measurements can be predicted on this "
        "cluster, so there is nothing to fit");
  }
  return cases;
}

// How each case is predicted during the fit: its own schedule, or (above exact_limit) two
// smaller ones to extrapolate from.
std::vector<FitRow> fit_rows(const std::vector<FileCase>& cases, const CalibrateOptions& options,
                             ScheduleCache& cache) {
  std::vector<FitRow> rows;
  for (const auto& [fi, c] : cases) {
    FitRow fr;
    fr.file = fi;
    fr.measured_us = c.measured_us;
    const double bytes = static_cast<double>(request_bytes(c.request).count());
    fr.bytes = bytes;
    if (bytes > static_cast<double>(options.exact_limit) && c.request.count > 4) {
      const double scale_b = static_cast<double>(options.exact_limit) / bytes;
      const auto count_b =
          static_cast<std::uint64_t>(static_cast<double>(c.request.count) * scale_b);
      const Request rb = with_count(c.request, count_b);
      // A quarter of exact_limit, not half: the secant's error is what the two sizes deviate
      // from the line (the channels' step overheads fall into a different pattern at each size,
      // about 1 % on 8 H100) over the distance between them, so a wider base divides it.
      const Request ra = with_count(c.request, count_b / 4);
      fr.a = cache.index(ra);
      fr.b = cache.index(rb);
      fr.bytes_a = static_cast<double>(request_bytes(ra).count());
      fr.bytes_b = static_cast<double>(request_bytes(rb).count());
    } else {
      fr.a = cache.index(c.request);
    }
    rows.push_back(fr);
  }
  return rows;
}

// The costs of `cluster` (a config name) at x: the shared parameters and that cluster's own
// (CostParameter::cluster); an empty `cluster` takes the shared ones only.
CostParams costs_at(const CostParams& start, const std::vector<CostParameter>& params,
                    const Eigen::VectorXd& x, std::string_view cluster) {
  CostParams c = start;
  for (std::size_t j = 0; j < params.size(); ++j) {
    if (!params[j].cluster.empty() && params[j].cluster != cluster) continue;
    params[j].set_value(c, x[static_cast<Eigen::Index>(j)]);
  }
  return c;
}

// The least-squares problem: the parameters on their fit scales, and log(predicted / measured)
// of every row. The problem refers to its arguments, which must outlive it.
LsqProblem fit_problem(const Topology& topo, const CostParams& start,
                       const std::vector<CostParameter>& params, const ScheduleCache& cache,
                       const std::vector<FitRow>& rows) {
  const auto n = static_cast<Eigen::Index>(params.size());
  LsqProblem p;
  p.x0.resize(n);
  p.lower.resize(n);
  p.upper.resize(n);
  p.step.resize(n);
  for (Eigen::Index j = 0; j < n; ++j) {
    const CostParameter& cp = params[static_cast<std::size_t>(j)];
    p.x0[j] = cp.value(start);
    p.lower[j] = cp.lower();
    p.upper[j] = cp.upper();
    p.step[j] = cp.step();
  }
  p.residuals = [&topo, &start, &params, &cache, &rows](const Eigen::VectorXd& x) {
    const CostParams c = costs_at(start, params, x, topo.name());
    std::vector<double> t(cache.size());
    parallel_for(cache.size(), [&](std::size_t i) {
      const int k = static_cast<int>(i);
      t[i] = simulate_request(topo, cache.request(k), cache.schedule(k), c).us();
    });
    Eigen::VectorXd r(static_cast<Eigen::Index>(rows.size()));
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const FitRow& fr = rows[i];
      double pred = t[fr.a];
      if (fr.b >= 0) {
        pred = t[fr.a] + (t[fr.b] - t[fr.a]) * (fr.bytes - fr.bytes_a) / (fr.bytes_b - fr.bytes_a);
      }
      r[static_cast<Eigen::Index>(i)] = std::log(std::max(pred, 1e-9) / fr.measured_us);
    }
    return r;
  };
  return p;
}

// The index of `name` in `names`, appended if it is not there yet: rows grouped by a name.
int group_of(std::vector<std::string>& names, const std::string& name) {
  auto at = std::find(names.begin(), names.end(), name);
  if (at == names.end()) at = names.insert(at, name);
  return static_cast<int>(at - names.begin());
}

// Each row's file, numbered in order of appearance (`paths` gets each file's path once): the
// parts of a file of several collectives are one file.
std::vector<int> row_files(const std::vector<FitRow>& rows,
                           const std::vector<MeasurementFile>& files,
                           std::vector<std::string>& paths) {
  std::vector<int> row_file;
  for (const FitRow& r : rows) row_file.push_back(group_of(paths, files[r.file].path));
  return row_file;
}

// The files that carry at least 5 % of the information on parameter j (sum over their rows of
// w J^2): "a.txt 72%, b.txt 28%"; the parts of a file of several collectives count as one.
std::string information_shares(const LsqResult& fit, Eigen::Index j,
                               const std::vector<FitRow>& rows,
                               const std::vector<MeasurementFile>& files) {
  std::vector<std::string> paths;
  const std::vector<int> row_path = row_files(rows, files, paths);
  const std::vector<double> share =
      information_by_group(fit, j, row_path, static_cast<int>(paths.size()));
  std::vector<std::string> parts;
  for (std::size_t f = 0; f < paths.size(); ++f) {
    if (share[f] >= 0.05) parts.push_back(fmt::format("{} {:.0f}%", paths[f], 100 * share[f]));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

// What the report says of parameter j: its values, and what determined it or why nothing did
// (`held`: why a hold kept it at its prior). `start`: the costs it started from.
FittedParameter describe(const std::vector<CostParameter>& params, Eigen::Index j,
                         const LsqResult& fit, const std::string& held, const CostParams& start,
                         const std::vector<FitRow>& rows,
                         const std::vector<MeasurementFile>& files) {
  const auto k = static_cast<std::size_t>(j);
  const CostParameter& cp = params[k];
  FittedParameter fp;
  fp.parameter = cp;
  fp.before = cp.format(start);
  CostParams at = start;  // not cal.fitted, which has no other cluster's host
  cp.set_value(at, fit.x[j]);
  fp.value = cp.format(at);
  fp.fitted = fit.free[k];
  fp.fit_value = fit.x[j];
  fp.fit_sigma = fit.sigma[j];
  fp.at_bound = fp.fitted && fit.at_bound[k];
  fp.at_edge = fp.fitted && fit.at_edge[k];
  if (fp.fitted) {
    fp.sigma = fp.at_bound  ? "at bound"
               : fp.at_edge ? "at the edge"
                            : cp.format_sigma(at, fit.sigma[j]);
    fp.determined_by = information_shares(fit, j, rows, files);
    if (!cp.cluster.empty()) {
      fp.determined_by = fmt::format("{}'s host, not shared: {}", cp.cluster, fp.determined_by);
    }
    if (fp.at_bound) {
      fp.determined_by = fmt::format(
          "ran to its bound (the rows say only that it is {}); {}",
          fit.x[j] <= cp.lower() + 1e-9 ? "at most this" : "at least this", fp.determined_by);
    }
    if (fp.at_edge) {
      fp.determined_by = fmt::format(
          "the fit took it past where any row depends on it; kept where they start to, the value "
          "nearest its prior that they allow (the rows say only that it is {})",
          cp.value(start) < fit.x[j] ? "at least this" : "at most this");
    }
  } else if (!held.empty()) {
    fp.determined_by = held;
  } else {
    const int other = fit.collinear_with[k];
    fp.determined_by =
        other >= 0 ? fmt::format("not determined: moves the rows as {} does, which is fitted",
                                 params[static_cast<std::size_t>(other)].label())
                   : std::string("not determined: no row depends on it");
  }
  return fp;
}

}  // namespace

namespace {

// One cluster's share of a fit: its rows, the schedules they run, and the costs its config starts
// from. A parameter of the fit is one value for every cluster (`costs_at` writes it into each
// cluster's own start), so a fit over several clusters determines what they share.
struct FitSet {
  const Topology* topo = nullptr;
  CostParams start;
  std::vector<FileCase> cases;  // file indices into the fit's list of every cluster's files
  ScheduleCache cache;
  std::vector<FitRow> rows;
};

// The costs a parameter starts from: its own cluster's for one cluster's host, else the first
// set's (the overlay's config, where it has rows).
const CostParams& start_of(const std::vector<FitSet>& sets, const CostParameter& p) {
  for (const FitSet& s : sets) {
    if (!p.cluster.empty() && s.topo->name() == p.cluster) return s.start;
  }
  return sets.front().start;
}

// The union of the sets' parameters, each once (by its `costs:` path), in order of appearance;
// in a fit over several clusters (`joint`), the host's costs once per cluster that shows them.
std::vector<CostParameter> fit_parameters(const std::vector<FitSet>& sets,
                                          const std::vector<std::set<Protocol>>& protocols,
                                          bool joint) {
  std::vector<CostParameter> params;
  std::set<std::string> seen;
  for (std::size_t k = 0; k < sets.size(); ++k) {
    const std::vector<Protocol> ps(protocols[k].begin(), protocols[k].end());
    for (CostParameter& p : cost_parameters_for(*sets[k].topo, ps, sets[k].start)) {
      if (seen.insert(p.path()).second) params.push_back(std::move(p));
    }
  }
  // The host's launch costs show only where one thread drove several GPUs without a CUDA graph
  // (with one GPU per thread, a launch is far shorter than any collective); its cost per channel
  // is determined where such rows ran on several channel counts, which the fit's QR judges.
  // Those costs are the measuring host's (its CPU, driver, NCCL version: one-thread AllReduce
  // floors of 35.0 us over 8 H100s on one host, 23.5 us over 4 on another, docs/calibration.md),
  // not the hardware class's, so a fit over several clusters gives each cluster its own and lets
  // none of them pass its host on to the others or to a cluster none of the rows came from.
  const auto host_driven = [](const FileCase& fc) {
    return fc.second.request.host.gpus_per_thread > 1 && !fc.second.request.host.graph;
  };
  std::set<std::string> hosts;
  for (const FitSet& s : sets) {
    const std::string& name = s.topo->name();
    if (hosts.contains(name) || std::none_of(s.cases.begin(), s.cases.end(), host_driven)) continue;
    hosts.insert(name);
    const std::string own = joint ? name : std::string();
    params.push_back({{CostField::Kind::kHostLaunch}, own});
    params.push_back({{CostField::Kind::kHostChannel}, own});
    if (own.empty()) break;
  }
  return params;
}

// Drops the parameters that --fix holds at their starting values.
void hold_fixed(std::vector<CostParameter>& params, const std::vector<std::string>& fixed) {
  const auto matches = [](const std::string& pattern, const CostParameter& p) {
    return fnmatch(pattern.c_str(), p.path().c_str(), 0) == 0;
  };
  for (const std::string& pattern : fixed) {
    if (std::none_of(params.begin(), params.end(),
                     [&](const CostParameter& p) { return matches(pattern, p); })) {
      std::string names;
      for (const CostParameter& p : params) names += (names.empty() ? "" : ", ") + p.path();
      throw RequestError(fmt::format(
          "--fix {}: matches no parameter of this fit (its parameters: {})", pattern, names));
    }
  }
  std::erase_if(params, [&](const CostParameter& p) {
    return std::any_of(fixed.begin(), fixed.end(),
                       [&](const std::string& pattern) { return matches(pattern, p); });
  });
}

// One set's residuals, kept for the last two points that differed in the parameters its costs
// read: a finite-difference step in another cluster's own parameter leaves them as they were at
// the base point, and is not simulated again.
class PartResiduals {
 public:
  PartResiduals(LsqProblem part, const std::vector<CostParameter>& params, const std::string& name)
      : part_(std::move(part)) {
    for (std::size_t j = 0; j < params.size(); ++j) {
      if (params[j].cluster.empty() || params[j].cluster == name)
        reads_.push_back(static_cast<Eigen::Index>(j));
    }
  }
  const Eigen::VectorXd& operator()(const Eigen::VectorXd& x) {
    Eigen::VectorXd key(static_cast<Eigen::Index>(reads_.size()));
    for (std::size_t i = 0; i < reads_.size(); ++i)
      key[static_cast<Eigen::Index>(i)] = x[reads_[i]];
    for (Memo& m : memo_) {
      if (m.valid && m.key == key) return m.r;
    }
    Memo& oldest = memo_[next_];
    next_ = 1 - next_;
    oldest = {true, std::move(key), part_.residuals(x)};
    return oldest.r;
  }

 private:
  struct Memo {
    bool valid = false;
    Eigen::VectorXd key;
    Eigen::VectorXd r;
  };
  LsqProblem part_;
  std::vector<Eigen::Index> reads_;
  std::array<Memo, 2> memo_{};
  int next_ = 0;
};

// The least-squares problem over the sets `keep` selects (every set where it is empty): one
// residual per row of each, in set order.
LsqProblem joint_problem(const std::vector<FitSet>& sets, const std::vector<CostParameter>& params,
                         const std::vector<bool>& keep = {}) {
  auto parts = std::make_shared<std::vector<PartResiduals>>();
  LsqProblem p;  // bounds and steps: the first set's; x0 each parameter's start (start_of)
  for (std::size_t k = 0; k < sets.size(); ++k) {
    if (!keep.empty() && !keep[k]) continue;
    const FitSet& s = sets[k];
    LsqProblem part = fit_problem(*s.topo, s.start, params, s.cache, s.rows);
    if (parts->empty()) p = part;
    parts->emplace_back(std::move(part), params, s.topo->name());
  }
  for (std::size_t j = 0; j < params.size(); ++j) {
    p.x0[static_cast<Eigen::Index>(j)] = params[j].value(start_of(sets, params[j]));
  }
  p.residuals = [parts](const Eigen::VectorXd& x) {
    std::vector<Eigen::VectorXd> r;
    Eigen::Index n = 0;
    for (PartResiduals& part : *parts) {
      r.push_back(part(x));
      n += r.back().size();
    }
    Eigen::VectorXd all(n);
    Eigen::Index at = 0;
    for (const Eigen::VectorXd& v : r) {
      all.segment(at, v.size()) = v;
      at += v.size();
    }
    return all;
  };
  return p;
}

}  // namespace

Calibration calibrate(const Topology& topo, const std::vector<MeasurementFile>& files,
                      const CalibrateOptions& options) {
  return calibrate(std::vector<ClusterMeasurements>{{&topo, files}}, options);
}

Calibration calibrate(const std::vector<ClusterMeasurements>& clusters,
                      const CalibrateOptions& options) {
  Calibration cal;
  std::vector<FitSet> sets(clusters.size());
  std::vector<std::set<Protocol>> protocols(clusters.size());
  std::vector<MeasurementFile> files;  // every cluster's, in order: the rows' file indices
  for (std::size_t k = 0; k < clusters.size(); ++k) {
    FitSet& s = sets[k];
    s.topo = clusters[k].topo;
    s.start = cost_params(*s.topo);
    const std::size_t offset = files.size();
    files.insert(files.end(), clusters[k].files.begin(), clusters[k].files.end());
    // A cluster whose rows cannot be predicted is an error only if no cluster has any.
    try {
      s.cases = fit_cases(*s.topo, clusters[k].files, cal, protocols[k]);
    } catch (const MeasurementError&) {
      if (clusters.size() == 1) throw;
    }
    for (auto& [fi, c] : s.cases) fi += offset;
    s.rows = fit_rows(s.cases, options, s.cache);
    cal.rows += s.cases.size();
  }
  // A cluster with no predictable row leaves the fit, and its protocols with it: each set reads
  // its own cluster's protocols (fit_parameters) by index.
  for (std::size_t k = sets.size(); k-- > 0;) {
    if (!sets[k].cases.empty()) continue;
    sets.erase(sets.begin() + static_cast<std::ptrdiff_t>(k));
    protocols.erase(protocols.begin() + static_cast<std::ptrdiff_t>(k));
  }
  if (sets.empty()) {
    throw MeasurementError(
        "calibrate: no row of the measurements can be predicted on these clusters, so there is "
        "nothing to fit");
  }
  cal.start = sets.front().start;
  cal.fitted = cal.start;
  std::vector<FitRow> rows;  // every set's, in the residuals' order
  // Each row's cluster: sets of the same config are one cluster.
  std::vector<std::string> cluster_names;
  std::vector<int> row_cluster, set_cluster;
  for (const FitSet& s : sets) {
    rows.insert(rows.end(), s.rows.begin(), s.rows.end());
    set_cluster.push_back(group_of(cluster_names, s.topo->name()));
    row_cluster.insert(row_cluster.end(), s.rows.size(), set_cluster.back());
  }
  std::vector<CostParameter> params = fit_parameters(sets, protocols, cluster_names.size() > 1);
  hold_fixed(params, options.fixed);

  LsqProblem p = joint_problem(sets, params);
  p.prior = p.x0;  // the holds below warm-start refits from the fit; unfitted values stay here
  // Host staging before the efficiency of every PCIe link, where the rows cannot tell them apart
  // (a PCIe box without P2P, whose root-port links bind): the slowness is the staging's.
  p.priority.assign(params.size(), 1);
  for (std::size_t j = 0; j < params.size(); ++j) {
    if (params[j].field.kind == CostField::Kind::kHostStaging) p.priority[j] = 0;
  }
  LsqResult fit = robust_least_squares(p);
  const std::vector<std::pair<int, double>> unshared =
      hold_unshared_parameters(p, fit, params, row_cluster, static_cast<int>(cluster_names.size()),
                               options.max_cluster_share);
  const std::vector<bool> weak = hold_loose_parameters(p, fit, params, options.max_relative_sigma);
  TransferCheck transfer;
  std::vector<std::string> left_out;  // the groups the check leaves out, by name
  if (options.cross_check) {
    // Each cluster left out in turn, the others' sets simulated alone; in a fit of one cluster,
    // each file (another collective, another size range).
    const bool by_cluster = cluster_names.size() > 1;
    std::vector<std::string> paths;
    const std::vector<int> row_file = row_files(rows, files, paths);
    left_out = by_cluster ? cluster_names : paths;
    const auto without = [&](int group) -> ResidualsOf {
      if (!by_cluster) return rows_outside(p.residuals, row_file, group);
      std::vector<bool> keep;
      for (int c : set_cluster) keep.push_back(c != group);
      return joint_problem(sets, params, keep).residuals;
    };
    transfer = hold_untransferable_parameters(p, fit, params, by_cluster ? row_cluster : row_file,
                                              static_cast<int>(left_out.size()), without);
    cal.cross_check = {by_cluster ? "clusters" : "files", transfer.clusters, 100 * transfer.fitted,
                       100 * transfer.prior, 100 * transfer.kept};
  }
  // The overlay carries the shared values and its own cluster's host, unless it is meant for a
  // cluster none of the rows came from (--shared-only), whose host none of them measured.
  const bool shared_only = options.max_cluster_share < 1.0;
  const std::string overlay_cluster = shared_only ? "" : clusters.front().topo->name();
  cal.fitted = costs_at(cal.start, params, fit.x, overlay_cluster);
  cal.iterations = fit.iterations;
  cal.evaluations = fit.evaluations;
  cal.converged = fit.converged;
  for (std::size_t j = 0; j < params.size(); ++j) {
    std::string held;
    if (unshared[j].first >= 0 && !fit.free[j]) {
      held = unshared_reason(unshared[j], cluster_names);
    } else if (!transfer.held.empty() && transfer.held[j] && !fit.free[j]) {
      held = transfer.reason(j, cal.cross_check->unit, left_out);
    } else if (weak[j]) {
      held = loose_reason(options.max_relative_sigma);
    }
    cal.parameters.push_back(describe(params, static_cast<Eigen::Index>(j), fit, held,
                                      start_of(sets, params[j]), rows, files));
    FittedParameter& fp = cal.parameters.back();
    fp.written = fp.fitted && (params[j].cluster.empty() || params[j].cluster == overlay_cluster);
  }

  std::vector<double> before, after;
  for (FitSet& s : sets) {
    const CostParams fitted = costs_at(s.start, params, fit.x, s.topo->name());
    for (const auto& [fi, c] : s.cases) {
      const Schedule& sched = s.cache.schedule(s.cache.index(c.request));
      before.push_back(error_pct(predict_case(*s.topo, c, s.start, Model::kMaxMin, &sched)->us(),
                                 c.measured_us));
      after.push_back(
          error_pct(predict_case(*s.topo, c, fitted, Model::kMaxMin, &sched)->us(), c.measured_us));
    }
  }
  cal.before = error_stats(before);
  cal.after = error_stats(after);
  return cal;
}

void write_overlay(std::ostream& out, const Calibration& cal, const std::string& config,
                   const std::string& command_line) {
  out << "# Calibration overlay written by `collsim calibrate`. Layer it over its config:\n";
  out << fmt::format("#   collsim predict {} --costs THIS.yaml ...\n", config);
  out << "# Every value under costs: was fitted to the files below (robust least squares on\n";
  out << "# log time, docs/calibration.md); parameters the rows could not determine are left "
         "out.\n";
  out << "calibration:\n";
  out << fmt::format("  config: {}\n", config);
  out << fmt::format("  command: \"{}\"\n", command_line);
  out << "  measurements:\n";
  for (const std::string& f : cal.files) out << fmt::format("    - {}\n", f);
  out << fmt::format("  rows: {}\n", cal.rows);
  out << fmt::format("  skipped_rows: {}\n", cal.skipped.size());
  out << fmt::format("  iterations: {}\n", cal.iterations);
  out << fmt::format("  simulations_per_row: {}\n", cal.evaluations);
  out << fmt::format(
      "  error_before: {{median_abs_pct: {:.2f}, p90_abs_pct: {:.2f}, max_abs_pct: {:.2f}}}\n",
      cal.before.median_abs_pct, cal.before.p90_abs_pct, cal.before.max_abs_pct);
  out << fmt::format(
      "  error_after: {{median_abs_pct: {:.2f}, p90_abs_pct: {:.2f}, max_abs_pct: {:.2f}}}\n",
      cal.after.median_abs_pct, cal.after.p90_abs_pct, cal.after.max_abs_pct);
  if (cal.cross_check && cal.cross_check->left_out > 0) {
    const CrossCheck& x = *cal.cross_check;
    out << fmt::format(
        "  cross_check: {{{}: {}, mean_abs_log_pct_all_fitted: {:.2f}, "
        "mean_abs_log_pct_prior: {:.2f}, mean_abs_log_pct_kept: {:.2f}}}\n",
        x.unit, x.left_out, x.all_fitted, x.prior, x.kept);
  }
  out << "  parameters:\n";
  for (const FittedParameter& p : cal.parameters) {
    out << fmt::format("    - path: {}\n", p.parameter.label());
    out << fmt::format("      before: \"{}\"\n", p.before);
    if (p.fitted) {
      out << fmt::format("      value: \"{}\"\n", p.value);
      out << fmt::format("      sigma: \"{}\"\n", p.sigma);
    }
    out << fmt::format("      determined_by: \"{}\"\n", p.determined_by);
  }
  // The costs: mapping, written through the schema that reads it back.
  std::vector<CommentedSetting> costs;
  for (const FittedParameter& p : cal.parameters) {
    if (!p.written) continue;
    const CostField& f = p.parameter.field;
    const bool no_cap = f.kind == CostField::Kind::kChannelBandwidth && p.at_bound;
    const std::string comment = no_cap       ? "the rows fit best with no cap"
                                : p.at_bound ? "at its bound"
                                : p.at_edge  ? "where the rows start to depend on it"
                                             : "+- " + p.sigma;
    costs.push_back({{f, no_cap ? 0.0 : cost_value(cal.fitted, f)}, comment});
  }
  write_cost_settings(out, costs);
}

}  // namespace collsim
