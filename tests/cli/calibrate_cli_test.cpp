// `collsim calibrate`, `collsim validate` and `--costs`, end to end through the binary.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/cli/run_collsim.hpp"

namespace collsim {
namespace {

using test::predicted_us;
using test::run_collsim;

const std::string kData = COLLSIM_SOURCE_DIR "/tests/data/nccl-tests/";
const std::string kAllReduce =
    kData + "rtx2080ti-x2_1node-pcie-noP2P_allreduce_anthony-hoo-blog.txt";
const std::string kAllGather =
    kData + "rtx2080ti-x2_1node-pcie-noP2P_allgather_anthony-hoo-blog.txt";

// Two H100 tables of different step counts (AllGather: 3 ring steps, AllReduce: 6) that the
// joint-fit tests add to pcie-2gpu's AllReduce: with one alone, the launch and the NVLink hop
// latency move its rows alike and neither is determined.
const std::string kH100Ag = kData + "h100x4_1node_allgather_waynehacking8.txt";
const std::string kH100Ar = kData + "h100x4_1node_allreduce_waynehacking8.txt";
// Small messages on the same H100s, LL throughout, issued as a CUDA graph (-G 1: the host issues
// nothing per iteration, so the floors are the GPUs'): with them the H100 rows hold more than a
// fifth of what determines the LL launch, beside pcie-2gpu's LL rows up to 128 KiB.
const std::string kH100Small =
    kData + "h100x4_1node_allreduce_small-msg_reg0_graph1_waynehacking8.txt";
// The same small messages issued eagerly by one thread for the 4 GPUs (-g 4, no graph): every row
// up to 1 MiB is that host's launches.
const std::string kH100Eager =
    kData + "h100x4_1node_allreduce_small-msg_reg0_graph0_waynehacking8.txt";
// 8 A100s driven by one thread of another host (-g 8, no graph).
const std::string kA100Eager = kData + "a100x8_1node_allreduce_oci-bm-gpu4.8_ocitutorials.txt";

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// calibrate pcie-2gpu on its AllReduce, --also both H100 tables on dgx-h100, up to 1 MiB.
test::CommandResult joint_fit(const std::string& overlay, const std::string& extra = "") {
  return run_collsim("calibrate pcie-2gpu --default-costs --measurements " + kAllReduce +
                     " --also dgx-h100=" + kH100Ag + " --also dgx-h100=" + kH100Ar +
                     " --max-bytes 1M" + extra + " -o " + overlay);
}

TEST(ValidateCli, JsonCarriesCliMdKeysPerRowAndTheSummary) {
  const auto r = run_collsim("validate pcie-2gpu --measurements " + kAllGather + " --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::ordered_json::parse(r.out);
  ASSERT_FALSE(j.at("rows").empty());
  const auto& row = j.at("rows").front();
  std::vector<std::string> keys;
  for (const auto& [k, v] : row.items()) keys.push_back(k);
  const std::vector<std::string> want = {
      "collective", "algorithm", "protocol",   "channels",   "ranks",       "bytes",    "count",
      "dtype",      "time_us",   "algbw_GBps", "busbw_GBps", "measured_us", "error_pct"};
  ASSERT_GE(keys.size(), want.size());
  EXPECT_EQ(std::vector<std::string>(keys.begin(), keys.begin() + want.size()), want);
  // error_pct = (predicted - measured) / measured x 100, signed.
  const double t = row.at("time_us"), m = row.at("measured_us"), e = row.at("error_pct");
  EXPECT_NEAR(e, (t - m) / m * 100, 1e-3);
  for (const char* k : {"median_abs_error_pct", "p90_abs_error_pct", "max_abs_error_pct"}) {
    EXPECT_TRUE(j.contains(k)) << k;
  }
  EXPECT_LE(j.at("median_abs_error_pct").get<double>(), j.at("p90_abs_error_pct").get<double>());
}

// Calibrate on AllReduce, then the overlay loads with --costs everywhere, and validation on the
// other collective uses it.
TEST(CalibrateCli, WritesAnOverlayThatCostsLoads) {
  const std::string overlay = ::testing::TempDir() + "pcie-cal.yaml";
  const auto c = run_collsim("calibrate pcie-2gpu --measurements " + kAllReduce + " -o " + overlay);
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_NE(c.out.find("protocols.simple.launch"), std::string::npos) << c.out;
  const std::string text = read_text(overlay);
  EXPECT_NE(text.find("calibration:"), std::string::npos);
  EXPECT_NE(text.find(kAllReduce), std::string::npos) << "provenance names the file";
  EXPECT_NE(text.find("\ncosts:"), std::string::npos);

  const auto p = run_collsim("predict pcie-2gpu --costs " + overlay +
                             " --op allreduce --bytes 1M --algo ring --proto simple");
  EXPECT_EQ(p.status, 0) << p.err;
  const auto v = run_collsim("validate pcie-2gpu --costs " + overlay + " --measurements " +
                             kAllGather + " --format json");
  ASSERT_EQ(v.status, 0) << v.err;
  const auto j = nlohmann::json::parse(v.out);
  EXPECT_FALSE(j.at("rows").empty());
}

// --also fits another cluster's rows jointly: one value per parameter, determined by the files
// of both clusters, recorded in the overlay's command.
TEST(CalibrateCli, AlsoFitsAnotherClustersRowsJointly) {
  const std::string overlay = ::testing::TempDir() + "joint.yaml";
  // host_channel held: with it free, the H100 AllReduce rows' floors go to it and the NVLink hop
  // latency. The PCIe hop latency held: on the PCIe rows it moves every row as the LL launch
  // does, and the pivoting may take either; held, the LL launch carries both clusters' rows.
  const auto c = joint_fit(overlay, " --fix host_channel --fix protocols.ll.hop_latency.pcie");
  ASSERT_EQ(c.status, 0) << c.err;
  const std::string text = read_text(overlay);
  EXPECT_NE(text.find(" --also dgx-h100=" + kH100Ar +
                      " --fix 'host_channel' --fix 'protocols.ll.hop_latency.pcie' --max-bytes 1M"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    - " + kH100Ag), std::string::npos) << "both clusters' files are listed";
  // The LL launch is one value for both: the rows of both determine it.
  const auto at = text.find("- path: protocols.ll.launch");
  ASSERT_NE(at, std::string::npos) << text;
  const std::string entry = text.substr(at, text.find("- path:", at + 1) - at);
  EXPECT_NE(entry.find(kAllReduce), std::string::npos) << entry;
  EXPECT_NE(entry.find(kH100Ar), std::string::npos) << entry;

  const auto bad = run_collsim("calibrate pcie-2gpu --measurements " + kAllReduce +
                               " --also dgx-h100 -o " + overlay);
  EXPECT_EQ(bad.status, 1);
  EXPECT_EQ(bad.err, "collsim: --also dgx-h100: expected CONFIG=FILE\n");
}

// --shared-only, for a fit meant for a cluster none of whose rows it has: what one cluster's rows
// alone determine (the PCIe hop latency, only pcie-2gpu has PCIe hops) is held at its prior and
// says so; what both determine (the LL launch, with the H100s' small messages) is fitted, and
// carries over from each cluster to the other. It needs --also.
TEST(CalibrateCli, SharedOnlyHoldsOneClustersOwnParameters) {
  const std::string overlay = ::testing::TempDir() + "shared.yaml";
  const auto c = joint_fit(overlay, " --also dgx-h100=" + kH100Small + " --shared-only");
  ASSERT_EQ(c.status, 0) << c.err;
  const std::string text = read_text(overlay);
  EXPECT_NE(text.find(" --shared-only"), std::string::npos) << "the command records it";
  const auto entry = [&](const std::string& path) {
    const auto at = text.find("- path: " + path + "\n");
    return at == std::string::npos ? std::string()
                                   : text.substr(at, text.find("- path:", at + 1) - at);
  };
  const std::string pcie = entry("protocols.ll.hop_latency.pcie");
  EXPECT_NE(pcie.find("determined_by: \"not shared: "), std::string::npos) << text;
  EXPECT_EQ(pcie.find("value:"), std::string::npos) << pcie;
  const std::string launch = entry("protocols.ll.launch");
  EXPECT_NE(launch.find("value:"), std::string::npos) << text;
  EXPECT_NE(c.out.find("not shared: "), std::string::npos) << "the table says it too\n" << c.out;
  // It also checks its transfer, fitting without each cluster in turn (both depend on the
  // launch), and records the check's scores.
  EXPECT_NE(text.find("  cross_check: {clusters: 2, "), std::string::npos) << text;
  EXPECT_NE(c.out.find("check    each of 2 clusters fitted without: "), std::string::npos) << c.out;

  const auto bad = run_collsim("calibrate pcie-2gpu --measurements " + kAllReduce +
                               " --shared-only -o " + overlay);
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("--shared-only keeps what several clusters' rows determine together"),
            std::string::npos)
      << bad.err;
}

// --cross-check in a fit of one cluster leaves out each file in turn (here the PCIe box's
// AllReduce and AllGather tables), says so in the table, and records its scores in the overlay;
// with one file there is nothing to leave out, which the table says, and the overlay records
// no check.
TEST(CalibrateCli, CrossCheckLeavesOutEachFileOfOneCluster) {
  const std::string overlay = ::testing::TempDir() + "cross-check.yaml";
  const auto two = run_collsim("calibrate pcie-2gpu --default-costs --measurements " + kAllReduce +
                               " --measurements " + kAllGather + " --cross-check -o " + overlay);
  ASSERT_EQ(two.status, 0) << two.err;
  EXPECT_NE(two.out.find("check    each of 2 files fitted without: "), std::string::npos)
      << two.out;
  const std::string text = read_text(overlay);
  EXPECT_NE(text.find("  cross_check: {files: 2, "), std::string::npos) << text;
  EXPECT_NE(text.find(" --cross-check -o "), std::string::npos) << "the command records it";

  const auto one = run_collsim("calibrate pcie-2gpu --default-costs --measurements " + kAllReduce +
                               " --cross-check -o " + overlay);
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_NE(one.out.find("check    nothing to leave out: one file of rows"), std::string::npos)
      << one.out;
  EXPECT_EQ(read_text(overlay).find("cross_check:"), std::string::npos);
}

// The host's costs are each cluster's own in a joint fit: one thread issuing for 4 H100s and
// another host's thread issuing for 8 A100s (every row up to 1 MiB bound by those launches) each
// keep the host_launch that cluster's rows give alone. The overlay sets its own config's host, and
// none with --shared-only, which is for a cluster whose host no row measured.
TEST(CalibrateCli, EachClusterOfAJointFitKeepsItsOwnHost) {
  const std::string dir = ::testing::TempDir();
  const std::string h100 = "calibrate dgx-h100 --default-costs --measurements " + kH100Eager;
  const std::string a100 = " --also dgx-a100=" + kA100Eager + " --max-bytes 1M";
  const auto alone = run_collsim(h100 + " --max-bytes 1M --format json -o " + dir + "alone.yaml");
  const auto joint = run_collsim(h100 + a100 + " --format json -o " + dir + "hosts.yaml");
  const auto shared = run_collsim(h100 + a100 + " --shared-only -o " + dir + "hosts-shared.yaml");
  ASSERT_EQ(alone.status, 0) << alone.err;
  ASSERT_EQ(joint.status, 0) << joint.err;
  ASSERT_EQ(shared.status, 0) << shared.err;
  // host_launch of `cluster` (null: a shared one) in a --format json report, as written
  // ("6.259us"), and its value and sigma in us.
  struct Fitted {
    std::string text;
    double value = 0, sigma = 0;
  };
  const auto host_launch = [](const std::string& report, const nlohmann::json& cluster) {
    const nlohmann::json j = nlohmann::json::parse(report);
    for (const auto& r : j.at("rows")) {
      if (r.at("parameter") != "host_launch" || r.at("cluster") != cluster) continue;
      EXPECT_FALSE(r.at("fitted").is_null()) << r.dump();
      if (r.at("fitted").is_null()) break;
      EXPECT_FALSE(r.at("at_edge").get<bool>()) << r.dump();  // a fitted value with a sigma
      const std::string text = r.at("fitted").get<std::string>();
      return Fitted{text, std::stod(text), std::stod(r.at("sigma").get<std::string>())};
    }
    ADD_FAILURE() << "no fitted host_launch for " << cluster.dump() << " in\n" << report;
    return Fitted{};
  };
  const Fitted solo = host_launch(alone.out, nullptr);
  const Fitted h = host_launch(joint.out, "dgx-h100");
  const Fitted a = host_launch(joint.out, "dgx-a100");
  EXPECT_NEAR(h.value, solo.value, 2 * std::hypot(h.sigma, solo.sigma))
      << "the A100 rows leave it alone";
  EXPECT_GT(std::abs(h.value - a.value), 5 * std::hypot(h.sigma, a.sigma)) << "two hosts";
  EXPECT_NE(joint.out.find("dgx-a100's host, not shared: "), std::string::npos) << joint.out;

  const auto costs_of = [&](const std::string& name) {
    const std::string text = read_text(dir + name);
    return text.substr(text.find("\ncosts:"));
  };
  const std::string own = costs_of("hosts.yaml");
  EXPECT_NE(own.find("  host_launch: " + h.text), std::string::npos) << own;
  EXPECT_EQ(own.find("host_launch", own.find("host_launch") + 1), std::string::npos)
      << "one host_launch, dgx-h100's\n"
      << own;
  const std::string none = costs_of("hosts-shared.yaml");
  EXPECT_EQ(none.find("host_"), std::string::npos) << none;
  EXPECT_NE(read_text(dir + "hosts-shared.yaml").find("- path: host_launch@dgx-a100\n"),
            std::string::npos)
      << "still reported";
}

// --fix holds parameters at their starting values: the overlay neither lists nor sets them, the
// command records the patterns, and a pattern that names no parameter of the fit is an error.
TEST(CalibrateCli, AClusterWithNoPredictableRowLeavesItsProtocolsOut) {
  // pcie-2gpu cannot run the 8-GPU table, so only dgx-h100's rows are fitted: the protocol
  // parameters are those of the protocol its rows ran (LL up to 1 MiB), not the empty set of the
  // cluster that left.
  const std::string overlay = ::testing::TempDir() + "/collsim_dropped_cluster.yaml";
  const auto r =
      run_collsim("calibrate pcie-2gpu --default-costs --measurements " + kData +
                  "h100x8_1node_allgather_xxrjun-cluster01.txt --also dgx-h100=" + kH100Ag +
                  " --max-bytes 1M -o " + overlay + " --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  std::vector<std::string> paths;
  for (const auto& p : j.at("rows")) paths.push_back(p.at("parameter").get<std::string>());
  EXPECT_NE(std::find(paths.begin(), paths.end(), "protocols.ll.launch"), paths.end()) << r.out;
  EXPECT_NE(std::find(paths.begin(), paths.end(), "protocols.ll.hop_latency.nvlink"), paths.end())
      << r.out;
}

TEST(CalibrateCli, FixHoldsParametersAtTheirStart) {
  const std::string overlay = ::testing::TempDir() + "fixed.yaml";
  const auto c =
      run_collsim("calibrate pcie-2gpu --default-costs --measurements " + kAllReduce +
                  " --fix 'protocols.*.efficiency' --fix link_efficiency.pcie -o " + overlay);
  ASSERT_EQ(c.status, 0) << c.err;
  const std::string text = read_text(overlay);
  EXPECT_NE(text.find("--fix 'protocols.*.efficiency' --fix 'link_efficiency.pcie'"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("- path: protocols.ll.efficiency"), std::string::npos) << text;
  EXPECT_EQ(text.find("- path: link_efficiency.pcie"), std::string::npos) << text;
  EXPECT_NE(text.find("- path: protocols.ll.launch"), std::string::npos) << text;
  EXPECT_EQ(c.out.find("link_efficiency.pcie "), std::string::npos) << c.out;

  const auto bad = run_collsim("calibrate pcie-2gpu --measurements " + kAllReduce +
                               " --fix 'protocols.*.eficiency' -o " + overlay);
  EXPECT_EQ(bad.status, 1);
  EXPECT_EQ(bad.err.rfind("collsim: --fix protocols.*.eficiency: matches no parameter of this fit "
                          "(its parameters: protocols.ll.launch, ",
                          0),
            0u)
      << bad.err;
}

TEST(CalibrateCli, BadOverlaysAndRangesAreOneLineErrors) {
  const std::string bad = ::testing::TempDir() + "bad-costs.yaml";
  std::ofstream(bad) << "costs:\n  protocols:\n    simpel:\n      launch: 5us\n";
  auto r = run_collsim("predict pcie-2gpu --costs " + bad + " --op allreduce --bytes 1M");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "collsim: " + bad +
                       ":3:5: costs.protocols.simpel: unknown key; expected one of ll, ll128, "
                       "simple; did you mean \"simple\"?\n");

  const std::string nocosts = ::testing::TempDir() + "no-costs.yaml";
  std::ofstream(nocosts) << "calibration:\n  config: x\n";
  r = run_collsim("predict pcie-2gpu --costs " + nocosts + " --op allreduce --bytes 1M");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "collsim: " + nocosts + ":1:1: missing required key \"costs\"\n");

  r = run_collsim("validate pcie-2gpu --measurements " + kAllGather +
                  " --min-bytes 1M --max-bytes 1K");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "collsim: --min-bytes 1M is above --max-bytes 1K\n");
}

const std::string kWrapped = COLLSIM_SOURCE_DIR "/tests/data/nccl-tests-wrapped/";
// kAllGather without its command line: nothing in it names the collective.
const std::string kNoCollective =
    kWrapped + "no-collective_rtx2080ti-x2_1node-pcie-noP2P_allgather_anthony-hoo-blog.txt";

// The JSON rows of a validate run, without the file they came from.
nlohmann::json rows_without_file(const std::string& out) {
  nlohmann::json rows = nlohmann::json::parse(out).at("rows");
  for (auto& row : rows) row.erase("file");
  return rows;
}

TEST(ValidateCli, OpNamesTheCollectiveOfAFileThatDoesNot) {
  const auto named =
      run_collsim("validate pcie-2gpu --measurements " + kAllGather + " --format json");
  ASSERT_EQ(named.status, 0) << named.err;
  const auto op = run_collsim("validate pcie-2gpu --measurements " + kNoCollective +
                              " --op allgather --format json");
  ASSERT_EQ(op.status, 0) << op.err;
  EXPECT_EQ(rows_without_file(op.out), rows_without_file(named.out));

  const auto none = run_collsim("validate pcie-2gpu --measurements " + kNoCollective);
  EXPECT_EQ(none.status, 1);
  EXPECT_EQ(none.err, "collsim: " + kNoCollective +
                          ": cannot tell which collective was measured: no \"# Collective test "
                          "starting:\" line and no command line naming a *_perf program; pass it "
                          "with --op (e.g. --op allreduce)\n");

  // A file that names its collective keeps it: --op must agree.
  const auto clash =
      run_collsim("validate pcie-2gpu --measurements " + kAllGather + " --op allreduce");
  EXPECT_EQ(clash.status, 1);
  EXPECT_EQ(clash.err, "collsim: " + kAllGather +
                           ":6: the file measured all_gather_perf, but --op says allreduce; "
                           "expected them to agree\n");
}

TEST(CalibrateCli, OpIsReadAndRecorded) {
  const std::string overlay = ::testing::TempDir() + "pcie-op.yaml";
  const auto c = run_collsim("calibrate pcie-2gpu --measurements " + kNoCollective +
                             " --op allgather -o " + overlay);
  ASSERT_EQ(c.status, 0) << c.err;
  const std::string text = read_text(overlay);
  EXPECT_NE(text.find(" --op allgather -o "), std::string::npos) << text;
}

TEST(ValidateCli, FileOfSeveralCollectivesIsValidatedPerCollective) {
  const std::string path = kWrapped + "five-collectives_h100x8_1node_xxrjun-cluster01.txt";
  const auto r =
      run_collsim("validate dgx-h100 --measurements " + path + " --max-bytes 64M --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  std::vector<std::string> collectives;
  for (const auto& f : j.at("files")) {
    EXPECT_EQ(f.at("path"), path);
    EXPECT_EQ(f.at("rows"), 2);
    collectives.push_back(f.at("collective"));
  }
  EXPECT_EQ(collectives, (std::vector<std::string>{"allreduce", "allgather", "reducescatter",
                                                   "alltoall", "sendrecv"}));
  EXPECT_EQ(j.at("rows").at(2).at("collective"), "allgather");
}

}  // namespace
}  // namespace collsim

namespace collsim::test {
namespace {

TEST(ValidateCli, NoPredictableRowIsNoStatisticAndAFailure) {
  // Statistics over zero rows used to print "0 rows median 0.0%" and exit 0.
  const std::string log = ::testing::TempDir() + "no-rows.txt";
  std::ofstream(log) << "# Collective test starting: all_reduce_perf\n"
                        "        1024           256      weird     sum      -1    10.00    0.10    "
                        "0.19      0    10.00    0.10    0.19      0\n";
  const CommandResult table = run_collsim("validate dgx-h100 --measurements " + log);
  EXPECT_EQ(table.status, 1);
  EXPECT_NE(table.out.find("0 rows  (no statistics)"), std::string::npos) << table.out;
  EXPECT_NE(table.err.find("no row of the measurements could be predicted"), std::string::npos)
      << table.err;
  const CommandResult json =
      run_collsim("validate dgx-h100 --measurements " + log + " --format json");
  EXPECT_EQ(json.status, 1);
  EXPECT_TRUE(nlohmann::json::parse(json.out)["median_abs_error_pct"].is_null()) << json.out;
}

}  // namespace
}  // namespace collsim::test

namespace collsim::test {
namespace {

TEST(ValidateCli, ReadsALogFromStandardInput) {
  const std::string log =
      COLLSIM_SOURCE_DIR "/tests/data/nccl-tests/h100x8_1node_allgather_xxrjun-cluster01.txt";
  const CommandResult named = run_collsim("validate dgx-h100 --format csv --measurements " + log);
  const CommandResult piped =
      run_collsim("validate dgx-h100 --format csv --measurements - < " + log);
  ASSERT_EQ(piped.status, 0) << piped.err;
  // The same rows; only the file column says where they came from.
  EXPECT_EQ(std::count(piped.out.begin(), piped.out.end(), '\n'),
            std::count(named.out.begin(), named.out.end(), '\n'));
  EXPECT_NE(piped.out.find(",stdin,"), std::string::npos) << piped.out;
}

TEST(ValidateCli, AnEndlessLogIsRefusedAtItsSizeCap) {
  const CommandResult r = run_collsim("validate dgx-h100 --measurements /dev/zero");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err,
            "collsim: /dev/zero: larger than 64 MiB; expected an nccl-tests log or collsim's "
            "output\n");
}

}  // namespace
}  // namespace collsim::test

namespace collsim {
namespace {

// The time_us of each row of a validate run, in order.
TEST(ValidateCli, TheHeadersHostLoopBoundsTheFloor) {
  // The same 4 H100s, one thread driving all four: eager launches (graph: 0) and a CUDA graph
  // (graph: 1). Eager, each iteration takes at least 4 x (host_launch + 1 channel x
  // host_channel) = 4 x (4.2 + 0.04) = 16.96 us.
  const std::string eager =
      kData + "h100x4_1node_allreduce_small-msg_reg0_graph0_waynehacking8.txt";
  const std::string graph =
      kData + "h100x4_1node_allreduce_small-msg_reg0_graph1_waynehacking8.txt";
  const auto e = run_collsim("validate dgx-h100 --default-costs --measurements " + eager +
                             " --max-bytes 64 --format json");
  const auto g = run_collsim("validate dgx-h100 --default-costs --measurements " + graph +
                             " --max-bytes 64 --format json");
  ASSERT_EQ(e.status, 0) << e.err;
  ASSERT_EQ(g.status, 0) << g.err;
  const std::vector<double> te = predicted_us(e.out), tg = predicted_us(g.out);
  ASSERT_EQ(te.size(), 4u);
  ASSERT_EQ(tg.size(), te.size());
  for (std::size_t i = 0; i < te.size(); ++i) {
    EXPECT_DOUBLE_EQ(te[i], 16.96) << i;
    EXPECT_LT(tg[i], 16.96) << i;
  }
}

TEST(ValidateCli, GpusPerThreadStandsInForAHeaderThatDoesNotSay) {
  // The 4-GPU eager table without its "# nThread 1 nGpus 4 ..." line: one GPU per thread is
  // assumed, unless --gpus-per-thread says what the header would have.
  const std::string table =
      kData + "h100x4_1node_allreduce_small-msg_reg0_graph0_waynehacking8.txt";
  std::ifstream in(table);
  const std::string path = ::testing::TempDir() + "no-nthread-line.txt";
  std::ofstream out(path);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# nThread", 0) != 0) out << line << "\n";
  }
  out.close();
  const std::string args = " --default-costs --max-bytes 64 --format json";
  const auto said = run_collsim("validate dgx-h100 --measurements " + table + args);
  const auto given =
      run_collsim("validate dgx-h100 --measurements " + path + " --gpus-per-thread 4" + args);
  const auto unsaid = run_collsim("validate dgx-h100 --measurements " + path + args);
  ASSERT_EQ(said.status, 0) << said.err;
  ASSERT_EQ(given.status, 0) << given.err;
  ASSERT_EQ(unsaid.status, 0) << unsaid.err;
  EXPECT_EQ(predicted_us(given.out), predicted_us(said.out));
  for (double t : predicted_us(unsaid.out)) EXPECT_LT(t, 16.8);

  const auto clash =
      run_collsim("validate pcie-2gpu --measurements " + kAllGather + " --gpus-per-thread 4");
  EXPECT_EQ(clash.status, 1);
  EXPECT_EQ(clash.err, "collsim: --gpus-per-thread 4: " + kAllGather +
                           ":7 says nGpus 2; give it only for files whose header does not say\n");
}

}  // namespace
}  // namespace collsim

namespace collsim {
namespace {

TEST(ValidateCli, ASweepsHostLoopReadsBack) {
  // sweep writes the host loop it predicted into its header ("nGpus 8 ... graph: 0"), so the
  // table validates against itself to the digits it prints. At 10 us a launch and 0.04 us for
  // its one channel, eight of them (80.32 us) are longer than dgx-h100's 8-byte ring.
  const std::string overlay = ::testing::TempDir() + "host-launch-10us.yaml";
  std::ofstream(overlay) << "costs:\n  host_launch: 10us\n";
  const std::string table = ::testing::TempDir() + "sweep-g8.txt";
  const std::string costs = " --costs " + overlay;
  const auto s = run_collsim(
      "sweep dgx-h100 --op allreduce -b 8 -e 64K -f 8 --algo ring --proto ll --gpus-per-thread 8" +
      costs);
  ASSERT_EQ(s.status, 0) << s.err;
  EXPECT_NE(s.out.find("# nThread 1 nGpus 8 "), std::string::npos) << s.out;
  EXPECT_NE(s.out.find(" graph: 0\n"), std::string::npos) << s.out;
  std::ofstream(table) << s.out;
  const auto v =
      run_collsim("validate dgx-h100 --measurements " + table + costs + " --format json");
  ASSERT_EQ(v.status, 0) << v.err;
  const nlohmann::json j = nlohmann::json::parse(v.out);
  ASSERT_EQ(j.at("rows").size(), 5u);  // 8 B to 32 KiB
  for (const auto& row : j.at("rows")) {
    EXPECT_NEAR(row.at("error_pct").get<double>(), 0.0, 0.05) << row;
  }
  EXPECT_DOUBLE_EQ(j.at("rows")[0].at("measured_us").get<double>(), 80.32);
}

// What the reader noticed reaches the user on stderr, the table on stdout unchanged: here
// nccl-tests' own warning of a lowered maxBytes.
TEST(ValidateCli, TheReadersWarningsGoToStderr) {
  const auto r = run_collsim("validate dgx-h100 --measurements " + kData +
                             "h100x8_1node_allreduce_xxrjun-cluster01.txt");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "collsim: warning: " + kData +
                       "h100x8_1node_allreduce_xxrjun-cluster01.txt:20: nccl-tests: Reducing "
                       "maxBytes to 26549638485 due to memory limitation\n");
  EXPECT_EQ(r.out.find("warning"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace collsim
