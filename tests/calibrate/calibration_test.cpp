// Calibration end to end on measurements collsim makes itself: known parameters, seeded noise,
// and the fit must find them again within the uncertainty it reports.
#include "calibrate/calibration.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

#include "algorithms/generators/registry.hpp"
#include "algorithms/ir/communicator.hpp"
#include "simulator/simulate.hpp"
#include "topology/loader.hpp"

namespace collsim {
namespace {

// Standard normal deviates from mt19937 by Box-Muller: the same numbers on every standard library
// (std::normal_distribution's algorithm is not specified).
class Normal {
 public:
  explicit Normal(std::uint32_t seed) : gen_(seed) {}
  double next() {
    const double u1 = (static_cast<double>(gen_()) + 1.0) / 4294967297.0;
    const double u2 = static_cast<double>(gen_()) / 4294967296.0;
    return std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
  }

 private:
  std::mt19937 gen_;
};

// A collsim-CSV-like measurement file: `collective` ring/simple on the cluster's ranks with 2
// channels, the time simulated under `truth` and multiplied by exp(sigma x N(0,1)).
MeasurementFile synthetic(const Topology& topo, Collective collective, const CostParams& truth,
                          Normal& noise, double sigma) {
  const int ranks = topo.rank_count();
  MeasurementFile f;
  f.path = std::string("synthetic-") + std::string(to_string(collective));
  f.format = MeasurementFormat::kCollsimCsv;
  f.collective = collective;
  f.ranks = ranks;
  int line = 1;
  for (std::uint64_t bytes = 64; bytes <= (16u << 20); bytes *= 4) {
    Request r;
    r.collective = collective;
    r.algorithm = "ring";
    r.protocol = Protocol::kSimple;
    r.channels = 2;
    r.comm = Communicator::from_topology(topo);
    r.count = count_for_bytes(collective, Bytes(bytes), DataType::kF32, ranks);
    SimOptions o;
    o.costs = truth;
    const double t = simulate(plan(r), topo, o).total.us();
    MeasurementRow row;
    row.bytes = bytes;
    row.count = r.count;
    row.dtype = "float";
    row.data_type = DataType::kF32;
    row.time_us = t * std::exp(sigma * noise.next());
    row.ranks = ranks;
    row.algo_override = "ring";
    row.proto_override = "simple";
    row.channels = 2;
    row.line = ++line;
    f.rows.push_back(row);
  }
  return f;
}

TEST(Calibration, RecoversKnownParametersWithinTheirUncertainty) {
  const Topology topo = load_topology("h100-nvlink-4");
  const CostParams start = cost_params(topo);
  CostParams truth = start;
  ProtocolCost& simple = truth.protocol(Protocol::kSimple);
  simple.launch = us(20);
  simple.hop_latency[static_cast<int>(RouteClass::kNvLink)] = us(4);
  // Each channel's ring runs over its own direct links (150 GB/s x 0.824), so a 20 GB/s cap is
  // what binds, and the link efficiency behind it cannot be seen.
  simple.channel_bandwidth = GBps(20);
  Normal noise(20261122);
  const std::vector<MeasurementFile> files = {
      synthetic(topo, Collective::kAllReduce, truth, noise, 0.02),
      synthetic(topo, Collective::kAllGather, truth, noise, 0.02)};

  const Calibration cal = calibrate(topo, files);
  std::ostringstream report;
  write_overlay(report, cal, "h100-nvlink-4", "test");
  SCOPED_TRACE(report.str());
  EXPECT_EQ(cal.rows, files[0].rows.size() + files[1].rows.size());
  EXPECT_LT(cal.after.median_abs_pct, 3.0);  // the noise is 2% (1 sd)
  EXPECT_LT(cal.after.median_abs_pct, cal.before.median_abs_pct);
  int checked = 0;
  for (const FittedParameter& p : cal.parameters) {
    const std::string path = p.parameter.path();
    const double want = p.parameter.value(truth);
    if (path == "link_efficiency.nvlink") {
      EXPECT_FALSE(p.fitted) << "hidden behind the cap, yet fitted: " << p.value;
    }
    if (path == "protocols.simple.launch" || path == "protocols.simple.hop_latency.nvlink" ||
        path == "protocols.simple.channel_bandwidth") {
      ASSERT_TRUE(p.fitted) << path << ": " << p.determined_by;
      ASSERT_FALSE(p.at_bound) << path;
      // Within three reported standard errors, and the error is informative (not huge).
      EXPECT_NEAR(p.fit_value, want, 3 * p.fit_sigma) << path << " sigma " << p.fit_sigma;
      EXPECT_GT(p.fit_sigma, 0) << path;
      EXPECT_LT(p.fit_sigma, path.ends_with("bandwidth") ? 0.05 : 2.0) << path;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 3);
}

TEST(Calibration, OverlayLoadsBackAsTheFittedCosts) {
  const Topology topo = load_topology("h100-nvlink-4");
  CostParams truth = cost_params(topo);
  truth.protocol(Protocol::kSimple).launch = us(15);
  Normal noise(7);
  const std::vector<MeasurementFile> files = {
      synthetic(topo, Collective::kAllReduce, truth, noise, 0.01),
      synthetic(topo, Collective::kAllGather, truth, noise, 0.01)};
  const Calibration cal = calibrate(topo, files);
  std::ostringstream yaml;
  write_overlay(yaml, cal, "h100-nvlink-4", "collsim calibrate h100-nvlink-4 ...");
  const std::string path = ::testing::TempDir() + "overlay.yaml";
  { std::ofstream(path) << yaml.str(); }
  const Topology layered = load_topology("h100-nvlink-4", {.nodes = {}, .cost_files = {path}});
  const CostParams loaded = cost_params(layered);
  for (const FittedParameter& p : cal.parameters) {
    if (!p.fitted) continue;
    // The overlay prints times to the nanosecond and fractions to 4 decimals.
    const double tol = p.parameter.log_scale() ? 1e-3 : 1e-3;
    EXPECT_NEAR(p.parameter.value(loaded), p.parameter.value(cal.fitted), tol)
        << p.parameter.path() << "\n"
        << yaml.str();
  }
  EXPECT_EQ(layered.cost_files(), std::vector<std::string>{path});
}

// A joint fit over several clusters is one least-squares problem over all their rows: the rows
// of one cluster given as two clusters fit exactly as they do given as one.
TEST(Calibration, JointFitOfOneClusterSplitInTwoIsTheFitOfBoth) {
  const Topology topo = load_topology("h100-nvlink-4");
  CostParams truth = cost_params(topo);
  truth.protocol(Protocol::kSimple).launch = us(15);
  truth.protocol(Protocol::kSimple).hop_latency[static_cast<int>(RouteClass::kNvLink)] = us(3);
  Normal noise(11);
  const MeasurementFile a = synthetic(topo, Collective::kAllReduce, truth, noise, 0.01);
  const MeasurementFile b = synthetic(topo, Collective::kAllGather, truth, noise, 0.01);
  const Calibration one = calibrate(topo, {a, b});
  const Calibration joint = calibrate(std::vector<ClusterMeasurements>{{&topo, {a}}, {&topo, {b}}});
  EXPECT_EQ(joint.rows, one.rows);
  EXPECT_EQ(joint.files, one.files);
  ASSERT_EQ(joint.parameters.size(), one.parameters.size());
  int fitted = 0;
  for (std::size_t j = 0; j < one.parameters.size(); ++j) {
    const FittedParameter &p = one.parameters[j], &q = joint.parameters[j];
    EXPECT_EQ(q.parameter.path(), p.parameter.path());
    EXPECT_EQ(q.fitted, p.fitted) << p.parameter.path();
    EXPECT_EQ(q.fit_value, p.fit_value) << p.parameter.path();
    EXPECT_EQ(q.determined_by, p.determined_by) << p.parameter.path();
    fitted += p.fitted;
  }
  EXPECT_GE(fitted, 2);
  EXPECT_EQ(joint.after.median_abs_pct, one.after.median_abs_pct);
}

// For a cluster the fit has not seen, only what the clusters share carries over: with
// max_cluster_share, a parameter one cluster's rows alone determine (here each cluster's own hop
// latency: NVLink on one, PCIe on the other) is held at its prior and says why, while the one
// both determine (the launch) is still fitted, and found.
TEST(Calibration, SharedOnlyHoldsWhatOneClusterAloneDetermines) {
  const Topology nvlink = load_topology("h100-nvlink-4");
  const Topology pcie = load_topology("pcie-2gpu");
  const auto truth_of = [](const Topology& topo) {
    CostParams t = cost_params(topo);  // the hop latencies as the fit starts: held, they are right
    t.protocol(Protocol::kSimple).launch = us(15);
    return t;
  };
  Normal noise(2026);
  const std::vector<ClusterMeasurements> clusters = {
      {&nvlink,
       {synthetic(nvlink, Collective::kAllReduce, truth_of(nvlink), noise, 0.01),
        synthetic(nvlink, Collective::kAllGather, truth_of(nvlink), noise, 0.01)}},
      {&pcie,
       {synthetic(pcie, Collective::kAllReduce, truth_of(pcie), noise, 0.01),
        synthetic(pcie, Collective::kAllGather, truth_of(pcie), noise, 0.01)}}};
  const auto find = [](const Calibration& cal, const std::string& path) {
    for (const FittedParameter& p : cal.parameters) {
      if (p.parameter.path() == path) return p;
    }
    ADD_FAILURE() << "no parameter " << path;
    return FittedParameter{};
  };

  const Calibration all = calibrate(clusters);
  EXPECT_TRUE(find(all, "protocols.simple.hop_latency.nvlink").fitted);
  EXPECT_TRUE(find(all, "protocols.simple.hop_latency.pcie").fitted);

  CalibrateOptions shared_only;
  shared_only.max_cluster_share = 0.8;
  const Calibration shared = calibrate(clusters, shared_only);
  std::ostringstream report;
  write_overlay(report, shared, "h100-nvlink-4", "test");
  SCOPED_TRACE(report.str());
  for (const char* path :
       {"protocols.simple.hop_latency.nvlink", "protocols.simple.hop_latency.pcie"}) {
    const FittedParameter p = find(shared, path);
    EXPECT_FALSE(p.fitted) << path;
    EXPECT_TRUE(p.determined_by.starts_with("not shared: ")) << path << ": " << p.determined_by;
    EXPECT_NE(p.determined_by.find(std::string(path).ends_with("pcie") ? pcie.name() : nvlink.name()),
              std::string::npos)
        << p.determined_by;
  }
  const FittedParameter launch = find(shared, "protocols.simple.launch");
  ASSERT_TRUE(launch.fitted) << launch.determined_by;
  EXPECT_FALSE(launch.at_bound);
  EXPECT_NEAR(launch.fit_value, 15.0, 3 * launch.fit_sigma);
  EXPECT_GT(launch.fit_sigma, 0);
}

// The cross-check of a fit meant for another cluster (CalibrateOptions::cross_check): a shared
// parameter whose value differs from cluster to cluster (here the launch, 15 us on one and 3 us
// on the other, 8.4 us the prior) predicts each cluster worse when fitted on the other than its
// prior does, so it is held and says why; where the clusters agree (15 us on both) it carries
// over, and stays fitted at the value they share.
TEST(Calibration, CrossCheckHoldsWhatTheClustersDisagreeOn) {
  const Topology nvlink = load_topology("h100-nvlink-4");
  const Topology pcie = load_topology("pcie-2gpu");
  const auto clusters_with = [&](double nvlink_launch_us, double pcie_launch_us, Normal& noise) {
    const auto truth = [](const Topology& topo, double launch_us) {
      CostParams t = cost_params(topo);
      t.protocol(Protocol::kSimple).launch = us(launch_us);
      return t;
    };
    const CostParams a = truth(nvlink, nvlink_launch_us), b = truth(pcie, pcie_launch_us);
    return std::vector<ClusterMeasurements>{
        {&nvlink,
         {synthetic(nvlink, Collective::kAllReduce, a, noise, 0.01),
          synthetic(nvlink, Collective::kAllGather, a, noise, 0.01)}},
        {&pcie,
         {synthetic(pcie, Collective::kAllReduce, b, noise, 0.01),
          synthetic(pcie, Collective::kAllGather, b, noise, 0.01)}}};
  };
  const auto launch_of = [](const Calibration& cal) {
    for (const FittedParameter& p : cal.parameters) {
      if (p.parameter.path() == "protocols.simple.launch") return p;
    }
    ADD_FAILURE() << "no protocols.simple.launch";
    return FittedParameter{};
  };
  CalibrateOptions options;  // the check alone: each launch is mostly one cluster's information
  options.cross_check = true;
  Normal noise(2027);

  const Calibration disagree = calibrate(clusters_with(15, 3, noise), options);
  std::ostringstream report;
  write_overlay(report, disagree, "h100-nvlink-4", "test");
  SCOPED_TRACE(report.str());
  const FittedParameter held = launch_of(disagree);
  EXPECT_FALSE(held.fitted);
  EXPECT_TRUE(held.determined_by.starts_with("not transferable: ")) << held.determined_by;
  ASSERT_TRUE(disagree.cross_check.has_value());
  EXPECT_EQ(disagree.cross_check->unit, "clusters");
  EXPECT_EQ(disagree.cross_check->left_out, 2);
  EXPECT_LT(disagree.cross_check->kept, disagree.cross_check->all_fitted);
  EXPECT_NE(report.str().find("cross_check: {clusters: 2"), std::string::npos);
  // Without the check the same rows fit it: the check is what holds it.
  CalibrateOptions unchecked = options;
  unchecked.cross_check = false;
  const Calibration fitted = calibrate(clusters_with(15, 3, noise), unchecked);
  EXPECT_TRUE(launch_of(fitted).fitted) << launch_of(fitted).determined_by;
  EXPECT_FALSE(fitted.cross_check.has_value());

  const Calibration agree = calibrate(clusters_with(15, 15, noise), options);
  const FittedParameter kept = launch_of(agree);
  ASSERT_TRUE(kept.fitted) << kept.determined_by;
  EXPECT_NEAR(kept.fit_value, 15.0, 3 * kept.fit_sigma);
  ASSERT_TRUE(agree.cross_check.has_value());
  EXPECT_LT(agree.cross_check->kept, agree.cross_check->prior);
}

// A value that most clusters share is still not carried over when it predicts one of them worse
// than the default does: two clusters whose Simple launch is 15 us and a third whose launch is
// the default (three Hopper configs, whose defaults are the same). Fitted without either of the
// first two, the value moves towards 15 us and predicts the one left out better; fitted without
// the third it is 15 us and predicts the third worse than the default, so it is held, and the
// report names that cluster. The mean over the three clusters alone would keep it: the first two
// gain more than the third loses.
TEST(Calibration, CrossCheckHoldsWhatPredictsAnyClusterWorse) {
  const Topology a = load_topology("h100-nvlink-4");
  const Topology b = load_topology("dgx-h100");
  const Topology c = load_topology("dgx-h200");
  const auto with_launch = [](const Topology& topo, double launch_us) {
    CostParams t = cost_params(topo);
    t.protocol(Protocol::kSimple).launch = us(launch_us);
    return t;
  };
  Normal noise(2029);
  const auto measured = [&](const Topology& topo, const CostParams& truth) {
    return ClusterMeasurements{&topo,
                               {synthetic(topo, Collective::kAllReduce, truth, noise, 0.01),
                                synthetic(topo, Collective::kAllGather, truth, noise, 0.01)}};
  };
  CalibrateOptions options;
  options.cross_check = true;
  const Calibration cal = calibrate({measured(a, with_launch(a, 15)),
                                     measured(b, with_launch(b, 15)), measured(c, cost_params(c))},
                                    options);
  std::ostringstream report;
  write_overlay(report, cal, "h100-nvlink-4", "test");
  SCOPED_TRACE(report.str());
  const FittedParameter* launch = nullptr;
  for (const FittedParameter& p : cal.parameters) {
    if (p.parameter.path() == "protocols.simple.launch") launch = &p;
  }
  ASSERT_NE(launch, nullptr);
  EXPECT_FALSE(launch->fitted);
  EXPECT_TRUE(launch->determined_by.starts_with(
      "not transferable: fitted without each of 3 clusters in turn, the values kept with it "
      "predicted dgx-h200 worse than the priors do"))
      << launch->determined_by;
  ASSERT_TRUE(cal.cross_check.has_value());
  // What the mean over the clusters says: better with the value than without it.
  EXPECT_LT(cal.cross_check->all_fitted, cal.cross_check->prior);
}

// In a fit of one cluster the cross-check leaves out each file in turn: an AllReduce table and
// an AllGather table of one box whose launches differ (15 us and 3 us, as a host that issues
// one faster than the other would show) do not carry the launch over to each other, and it is
// held; with one launch for both it is fitted.
TEST(Calibration, CrossCheckOfOneClusterLeavesOutEachFile) {
  const Topology topo = load_topology("h100-nvlink-4");
  const auto truth = [&](double launch_us) {
    CostParams t = cost_params(topo);
    t.protocol(Protocol::kSimple).launch = us(launch_us);
    return t;
  };
  const auto launch_of = [](const Calibration& cal) {
    for (const FittedParameter& p : cal.parameters) {
      if (p.parameter.path() == "protocols.simple.launch") return p;
    }
    ADD_FAILURE() << "no protocols.simple.launch";
    return FittedParameter{};
  };
  CalibrateOptions options;
  options.cross_check = true;
  Normal noise(2028);
  const Calibration disagree =
      calibrate(topo,
                {synthetic(topo, Collective::kAllReduce, truth(15), noise, 0.01),
                 synthetic(topo, Collective::kAllGather, truth(3), noise, 0.01)},
                options);
  std::ostringstream report;
  write_overlay(report, disagree, "h100-nvlink-4", "test");
  SCOPED_TRACE(report.str());
  ASSERT_TRUE(disagree.cross_check.has_value());
  EXPECT_EQ(disagree.cross_check->unit, "files");
  EXPECT_EQ(disagree.cross_check->left_out, 2);
  const FittedParameter held = launch_of(disagree);
  EXPECT_FALSE(held.fitted);
  EXPECT_TRUE(held.determined_by.starts_with("not transferable: fitted without each of 2 files"))
      << held.determined_by;

  const Calibration agree =
      calibrate(topo,
                {synthetic(topo, Collective::kAllReduce, truth(15), noise, 0.01),
                 synthetic(topo, Collective::kAllGather, truth(15), noise, 0.01)},
                options);
  const FittedParameter kept = launch_of(agree);
  ASSERT_TRUE(kept.fitted) << kept.determined_by;
  EXPECT_NEAR(kept.fit_value, 15.0, 3 * kept.fit_sigma);
}

// The fit predicts rows above exact_limit from two smaller simulations; in the bandwidth-bound
// regime that extrapolation agrees with simulating the row itself.
TEST(Calibration, LargeRowExtrapolationMatchesFullSimulation) {
  const Topology topo = load_topology("dgx-h100");
  auto time_at = [&](std::uint64_t bytes) {
    Request r;
    r.collective = Collective::kAllReduce;
    r.channels = 24;
    r.comm = Communicator::from_topology(topo);
    r.count = bytes / 4;
    return simulate(plan(r), topo, SimOptions{}).total.us();
  };
  // The fit's two sizes, exact_limit / 4 and exact_limit (calibration.cpp fit_rows).
  const double a = time_at(128u << 20), b = time_at(512u << 20), full = time_at(4ull << 30);
  const double extrapolated = a + (b - a) * ((4ull << 30) - (128u << 20)) / double(384u << 20);
  EXPECT_NEAR(extrapolated / full, 1.0, 0.005) << extrapolated << " vs " << full;
}

}  // namespace
}  // namespace collsim
