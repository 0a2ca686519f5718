// `collsim diagnose CONFIG --measurements FILE... [--op OP] [--min-bytes B] [--max-bytes B]
//  [--nodes N] [--costs F...] [--tolerance PCT] [--rows N] [--format table|json]`: is the
// measured table what the healthy cluster gives (within --tolerance)? If not, which single fault,
// then which pair (topology/faults.hpp), explains it best: hypotheses ranked by fit error, equal
// explanations together, each with the check a person would run (docs/diagnose.md).
//
// Fit error: the root mean square of log(predicted / measured) over the rows used, written as a
// percentage (exp(rms) - 1). Rows: the measured rows predict_case can simulate, at most --rows of
// them, spread evenly over the sizes. Search: one representative per class of symmetric devices
// (node0's NIC 0 stands for every NIC of every node: a whole-cluster table cannot tell them
// apart, and the report says so), a grid of effect sizes, a golden-section refinement of the
// best ones, then pairs of the best distinct classes.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "algorithms/generators/registry.hpp"
#include "calibrate/row_model.hpp"
#include "cli/commands.hpp"
#include "cli/measurement_args.hpp"
#include "cli/progress.hpp"
#include "cli/request_options.hpp"
#include "topology/error.hpp"
#include "topology/faults.hpp"

namespace collsim {

namespace {

struct DiagnoseArgs {
  std::string config;
  std::optional<int> nodes;
  std::vector<std::string> cost_files;
  MeasurementArgs measurements;
  double tolerance = 10;
  int rows = 6;
  std::string format = "table";
};

struct Sample {
  RowCase c;
  Schedule schedule;
};

// A class of symmetric faults: its representative at effect size `x`, the grid of x to try.
struct FaultClass {
  std::string name;   // "one NIC"
  std::string scope;  // "any NIC of any node"
  std::string check;
  std::function<Fault(double)> make;
  std::vector<double> grid;
};

struct Hypothesis {
  std::vector<const FaultClass*> classes;
  std::vector<Fault> faults;
  double error_pct = 0;
};

class Evaluator {
 public:
  Evaluator(const DiagnoseArgs& a, std::vector<Sample> samples)
      : a_(a), samples_(std::move(samples)) {}

  // Fit error of the cluster with these faults; +inf where they stop the run.
  double error_pct(const std::vector<Fault>& faults) {
    ++evaluations_;
    Topology topo = load_cluster(a_.config, a_.nodes, a_.cost_files);
    try {
      apply_faults(topo, faults);
    } catch (const RequestError&) {
      return std::numeric_limits<double>::infinity();
    }
    const CostParams costs = cost_params(topo);
    double sum = 0;
    for (const Sample& s : samples_) {
      const auto t = predict_case(topo, s.c, costs, Model::kMaxMin, &s.schedule);
      if (!t) return std::numeric_limits<double>::infinity();
      const double r = std::log(t->us() / s.c.measured_us);
      sum += r * r;
    }
    return 100 * (std::exp(std::sqrt(sum / static_cast<double>(samples_.size()))) - 1);
  }
  int evaluations() const { return evaluations_; }
  std::size_t rows() const { return samples_.size(); }

 private:
  const DiagnoseArgs& a_;
  std::vector<Sample> samples_;
  int evaluations_ = 0;
};

std::vector<Sample> pick_samples(const Topology& topo, const std::vector<MeasurementFile>& files,
                                 int limit, std::size_t& available) {
  std::vector<RowCase> cases;
  for (const MeasurementFile& f : files) {
    for (RowCase& c : plan_measurements(topo, f).cases) cases.push_back(std::move(c));
  }
  available = cases.size();
  if (cases.empty()) {
    throw MeasurementError(
        fmt::format("diagnose: no row of the measurements can be simulated on {}", topo.name()));
  }
  std::stable_sort(cases.begin(), cases.end(), [](const RowCase& x, const RowCase& y) {
    return request_bytes(x.request) < request_bytes(y.request);
  });
  std::vector<Sample> out;
  const std::size_t n = std::min(cases.size(), static_cast<std::size_t>(limit));
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t at = n == 1 ? cases.size() - 1 : i * (cases.size() - 1) / (n - 1);
    out.push_back({cases[at], plan(cases[at].request)});
  }
  return out;
}

Fault degrade(std::string target, double keep) {
  Fault f;
  f.kind = FaultKind::kDegrade;
  f.target = std::move(target);
  f.bandwidth = keep;
  return f;
}

Fault straggler(std::string target, double factor) {
  Fault f;
  f.kind = FaultKind::kStraggler;
  f.target = std::move(target);
  f.factor = factor;
  return f;
}

std::vector<FaultClass> fault_classes(const Topology& topo) {
  const std::vector<double> keep = {0.85, 0.7, 0.5, 0.35, 0.2, 0.1};
  const std::vector<double> slow = {1.15, 1.3, 1.6, 2, 3, 5};
  std::vector<FaultClass> out;
  const bool several = topo.node_count() > 1;
  int nics = 0;
  for (const Device& d : topo.devices()) nics += d.kind == DeviceKind::kNic && d.node == 0 ? 1 : 0;
  const auto name_exists = [&](std::string_view n) {
    return std::any_of(topo.devices().begin(), topo.devices().end(),
                       [&](const Device& d) { return d.name == n; });
  };
  if (several && nics > 0) {
    out.push_back({"one NIC degraded", "any NIC of any node: this table cannot tell which",
                   "ibstat / ibstatus on every node (Rate, State, Physical state); perfquery for "
                   "symbol and link-downed counters; then all_reduce_perf between node pairs with "
                   "NCCL_IB_HCA set to one NIC to find it",
                   [](double x) { return degrade("node0/nic0", x); }, keep});
    out.push_back({"all NICs of one node degraded", "any one node",
                   "ibstat on every node; all_reduce_perf on each pair of nodes (-g 8) to find the "
                   "slow one; check the node's PCIe link width (lspci -vv: LnkSta)",
                   [](double x) { return degrade("node0/nics", x); }, keep});
    if (nics > 1) {
      out.push_back({"one NIC failed",
                     "any NIC of any node",
                     "ibstat on every node (a port Down or Polling); NCCL_DEBUG=INFO "
                     "NCCL_DEBUG_SUBSYS=INIT,NET lists the NICs NCCL opened on each node",
                     [](double) {
                       Fault f;
                       f.kind = FaultKind::kFail;
                       f.target = "node0/nic0";
                       return f;
                     },
                     {1.0}});
    }
    if (name_exists("node0/nic0") && nics > 1) {
      out.push_back({"one rail degraded", "any rail",
                     "ibstat on NIC R of every node; all_reduce_perf with NCCL_IB_HCA set to one "
                     "rail's HCA at a time; the rail switch's port counters",
                     [](double x) { return degrade("rail0", x); }, keep});
    }
  }
  // The first switch with uplinks stands for every leaf.
  const std::optional<std::string> leaf = [&]() -> std::optional<std::string> {
    for (const Device& d : topo.devices()) {
      if (d.kind != DeviceKind::kSwitch) continue;
      try {
        (void)fault_links(topo, degrade(d.name + "/uplinks", 0.5));
        return d.name;
      } catch (const RequestError&) {
      }
    }
    return std::nullopt;
  }();
  if (leaf) {
    out.push_back({"a leaf switch's uplinks degraded", "any leaf",
                   "iblinkinfo / ibnetdiscover for uplink ports of the leaves running below rate; "
                   "perfquery on them for errors and congestion (PortXmitWait)",
                   [name = *leaf](double x) { return degrade(name + "/uplinks", x); }, keep});
  }
  out.push_back({"one GPU's NVLink degraded", "any GPU",
                 "nvidia-smi nvlink -s (link speeds) and nvidia-smi nvlink -e (error counters) on "
                 "every node; all_reduce_perf -g 8 on each node alone",
                 [](double x) { return degrade("node0/gpu0/nvlink", x); }, keep});
  out.push_back({"one straggler GPU", "any GPU",
                 "nvidia-smi -q -d PERFORMANCE,CLOCK,TEMPERATURE for clock throttle reasons; "
                 "dcgmi diag -r 2 on the suspect node",
                 [](double x) { return straggler("node0/gpu0", x); }, slow});
  if (several) {
    out.push_back({"one straggler node", "any one node",
                   "all_reduce_perf -g 8 on each node alone and compare; nvidia-smi -q -d "
                   "PERFORMANCE for throttling; the node's CPU load and NUMA binding",
                   [](double x) { return straggler("node0", x); }, slow});
  }
  // Keep only the classes this cluster has.
  std::erase_if(out, [&](const FaultClass& c) {
    try {
      (void)fault_links(topo, c.make(c.grid.front()));
      return false;
    } catch (const RequestError&) {
      return true;
    }
  });
  return out;
}

// Golden-section refinement of x in [lo, hi] (log scale) for one class.
Hypothesis refine(Evaluator& ev, const FaultClass& c, double lo, double hi) {
  const double g = (std::sqrt(5.0) - 1) / 2;
  double a = std::log(lo), b = std::log(hi);
  const auto f = [&](double lx) { return ev.error_pct({c.make(std::exp(lx))}); };
  double x1 = b - g * (b - a), x2 = a + g * (b - a), f1 = f(x1), f2 = f(x2);
  for (int i = 0; i < 6; ++i) {
    if (f1 < f2) {
      b = x2, x2 = x1, f2 = f1, x1 = b - g * (b - a), f1 = f(x1);
    } else {
      a = x1, x1 = x2, f1 = f2, x2 = a + g * (b - a), f2 = f(x2);
    }
  }
  const double x = std::exp(f1 < f2 ? x1 : x2);
  return {{&c}, {c.make(x)}, std::min(f1, f2)};
}

constexpr double kClearlyBetter = 0.7;

// Everything within this of the best is an equal explanation, reported with it.
bool equal_fit(double e, double best) { return e <= best + std::max(0.25, 0.05 * best); }

struct Diagnosis {
  double healthy_pct = 0;
  std::vector<Hypothesis> ranked;  // best first
  std::size_t rows_available = 0;
};

Diagnosis diagnose(const DiagnoseArgs& a, Evaluator& ev, const std::vector<FaultClass>& classes,
                   std::size_t available) {
  Diagnosis d;
  d.rows_available = available;
  d.healthy_pct = ev.error_pct({});
  if (d.healthy_pct <= a.tolerance) return d;
  // One fault: the grid, then the best point of each class refined between its neighbours.
  std::vector<Hypothesis> singles;
  for (const FaultClass& c : classes) {
    Hypothesis best{{&c}, {}, std::numeric_limits<double>::infinity()};
    std::size_t at = 0;
    for (std::size_t i = 0; i < c.grid.size(); ++i) {
      const double e = ev.error_pct({c.make(c.grid[i])});
      if (e < best.error_pct) best = {{&c}, {c.make(c.grid[i])}, e}, at = i;
    }
    if (c.grid.size() > 1 && std::isfinite(best.error_pct)) {
      const auto& g = c.grid;
      const double lo = at == 0 ? std::min(1.0, g[0] * g[0] / g[1]) : g[at - 1];
      const double hi = at + 1 == g.size() ? g[at] * g[at] / g[at - 1] : g[at + 1];
      Hypothesis r = refine(ev, c, std::min(lo, hi), std::max(lo, hi));
      if (r.error_pct < best.error_pct) best = std::move(r);
    }
    singles.push_back(std::move(best));
  }
  std::sort(singles.begin(), singles.end(),
            [](const Hypothesis& x, const Hypothesis& y) { return x.error_pct < y.error_pct; });
  // Pairs of the three best classes, at their fitted sizes: reported only where they explain
  // clearly more than the best single fault.
  std::vector<Hypothesis> pairs;
  const std::size_t top = std::min<std::size_t>(3, singles.size());
  for (std::size_t i = 0; i < top; ++i) {
    for (std::size_t j = i + 1; j < top; ++j) {
      std::vector<Fault> both = singles[i].faults;
      both.push_back(singles[j].faults.front());
      const double e = ev.error_pct(both);
      if (e < 0.7 * singles.front().error_pct) {
        pairs.push_back({{singles[i].classes[0], singles[j].classes[0]}, both, e});
      }
    }
  }
  d.ranked = std::move(pairs);
  d.ranked.insert(d.ranked.end(), singles.begin(), singles.end());
  std::stable_sort(d.ranked.begin(), d.ranked.end(), [](const Hypothesis& x, const Hypothesis& y) {
    return x.error_pct < y.error_pct;
  });
  // A fault must explain clearly more than the healthy cluster does (cut the rms error by 30 %),
  // or it is the model's own error dressed up as a fault.
  std::erase_if(d.ranked, [&](const Hypothesis& h) {
    return !std::isfinite(h.error_pct) || h.error_pct > kClearlyBetter * d.healthy_pct;
  });
  return d;
}

// Rank numbers, equal explanations sharing the rank of the first of them.
std::vector<int> ranks_of(const std::vector<Hypothesis>& h) {
  std::vector<int> out;
  std::size_t leader = 0;
  for (std::size_t i = 0; i < h.size(); ++i) {
    if (i == 0 || !equal_fit(h[i].error_pct, h[leader].error_pct)) leader = i;
    out.push_back(static_cast<int>(leader) + 1);
  }
  return out;
}

std::string flags(const Hypothesis& h) {
  std::string s;
  for (const Fault& f : h.faults) s += (s.empty() ? "" : " ") + to_flag(f);
  return s;
}

void print(const DiagnoseArgs& a, const Topology& topo, const Diagnosis& d, const Evaluator& ev) {
  const bool healthy = d.healthy_pct <= a.tolerance;
  const std::vector<int> ranks = ranks_of(d.ranked);
  const std::size_t shown = std::min<std::size_t>(d.ranked.size(), 5);
  if (a.format == "json") {
    nlohmann::ordered_json j;
    j["cluster"] = topo.name();
    j["rows"] = ev.rows();
    j["rows_available"] = d.rows_available;
    j["tolerance_pct"] = a.tolerance;
    j["healthy_error_pct"] = std::round(d.healthy_pct * 100) / 100;
    j["healthy"] = healthy;
    j["verdict"] = healthy ? "healthy" : d.ranked.empty() ? "unexplained" : "faults";
    j["evaluations"] = ev.evaluations();
    j["hypotheses"] = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < shown; ++i) {
      const Hypothesis& h = d.ranked[i];
      nlohmann::ordered_json o;
      o["rank"] = ranks[i];
      o["error_pct"] = std::round(h.error_pct * 100) / 100;
      o["faults"] = nlohmann::ordered_json::array();
      for (const Fault& f : h.faults) o["faults"].push_back(describe(f));
      o["flags"] = flags(h);
      o["classes"] = nlohmann::ordered_json::array();
      for (const FaultClass* c : h.classes) o["classes"].push_back(c->name);
      o["scope"] = h.classes.front()->scope;
      o["check"] = h.classes.front()->check;
      j["hypotheses"].push_back(std::move(o));
    }
    std::cout << j.dump(2) << "\n";
    return;
  }
  fmt::print("cluster      {} ({} of {} measured rows used, {} simulations)\n", topo.name(),
             ev.rows(), d.rows_available, ev.evaluations());
  fmt::print("healthy fit  {:.1f}% rms error (tolerance {:g}%)\n", d.healthy_pct, a.tolerance);
  if (healthy) {
    fmt::print("verdict      healthy: the model of the healthy cluster explains the measurement\n");
    return;
  }
  if (d.ranked.empty()) {
    fmt::print(
        "verdict      unexplained: the healthy cluster misses the measurement, and no fault "
        "searched fits clearly better (by {:.0f}%); the model itself may be off here (try "
        "`collsim calibrate`)\n",
        100 * (1 - kClearlyBetter));
    return;
  }
  fmt::print("verdict      not explained by the healthy cluster; best hypotheses:\n");
  for (std::size_t i = 0; i < shown; ++i) {
    const Hypothesis& h = d.ranked[i];
    const bool tie =
        (i > 0 && ranks[i] == ranks[i - 1]) || (i + 1 < shown && ranks[i + 1] == ranks[i]);
    std::string what;
    for (const Fault& f : h.faults) what += (what.empty() ? "" : " and ") + describe(f);
    fmt::print("{:>3}{} {:6.1f}%  {}  [{}]\n     as flags: {}\n     check: {}\n", ranks[i],
               tie ? "=" : " ", h.error_pct, what, h.classes.front()->scope, flags(h),
               h.classes.front()->check);
  }
}

void run_diagnose(const DiagnoseArgs& a) {
  const Topology topo = load_cluster(a.config, a.nodes, a.cost_files);
  const std::vector<MeasurementFile> files = read_measurement_args(a.measurements);
  std::size_t available = 0;
  Evaluator ev(a, pick_samples(topo, files, a.rows, available));
  // After the rows are known to fit: an error stays one line.
  warn_about_other_gpus(topo, files);
  warn_about_nccl_env(topo, files);
  const std::vector<FaultClass> classes = fault_classes(topo);
  Progress progress("diagnose", simulated_events_status());
  const Diagnosis d = diagnose(a, ev, classes, available);
  progress.done();
  print(a, topo, d, ev);
}

}  // namespace

void register_diagnose(CLI::App& app) {
  auto args = std::make_shared<DiagnoseArgs>();
  CLI::App* cmd = app.add_subcommand(
      "diagnose", "Which fault (degraded link, straggler, failed NIC) explains a measurement?");
  cmd->add_option("CONFIG", args->config, "YAML file or preset name (see configs/)")->required();
  add_measurement_options(cmd, args->measurements);
  add_nodes_option(*cmd, args->nodes);
  add_costs_option(*cmd, args->cost_files);
  cmd->add_option("--tolerance", args->tolerance,
                  "rms error (%) under which the healthy cluster explains the measurement")
      ->check(CLI::Range(0.0, 1000.0))
      ->capture_default_str();
  cmd->add_option("--rows", args->rows, "measured rows used, spread over the sizes")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--format", args->format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  cmd->callback([args] { run_diagnose(*args); });
}

}  // namespace collsim
