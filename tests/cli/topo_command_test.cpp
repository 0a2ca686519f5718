// `collsim topo` end to end: the summary, DOT export, exit statuses and one-line errors.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/cli/run_collsim.hpp"

namespace collsim::test {
namespace {

TEST(TopoCommand, SummarizesTheDefaultCluster) {
  const CommandResult r = run_collsim("topo dgx-h100");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, golden("topo_dgx-h100.txt", r.out));
}

TEST(TopoCommand, JsonHasTheSummaryKeys) {
  const CommandResult r = run_collsim("topo h100-2node-ib --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, golden("topo_h100-2node-ib.json", r.out));
}

// A transport that changes what NCCL runs says so: EFA without in-order delivery (Simple only)
// and the latency its plugin reports to NCCL's tuner.
TEST(TopoCommand, SaysWhatTheTransportLeavesNccl) {
  const CommandResult r =
      run_collsim("topo " COLLSIM_SOURCE_DIR "/tests/data/configs/held-out/aws-p4d.yaml");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("  efa              8       12.5 GB/s      300 ns\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("transport  Simple only (the NICs do not deliver 128-byte blocks in "
                       "order); the network plugin reports 75 us to NCCL's tuner\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(run_collsim("topo dgx-h100").out.find("transport"), std::string::npos);
}

TEST(TopoCommand, WritesGraphvizDot) {
  const std::string dot = std::string(COLLSIM_BINARY_DIR) + "/topo_test.dot";
  const CommandResult r = run_collsim("topo pcie-2gpu --dot " + dot);
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream in(dot);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), golden("topo_pcie-2gpu.dot", text.str()));
}

TEST(TopoCommand, DrawsSvgWithGraphviz) {
  const std::string svg = std::string(COLLSIM_BINARY_DIR) + "/topo_test.svg";
  std::filesystem::remove(svg);
  const CommandResult r = run_collsim("topo dgx-h100 --svg " + svg);
  if (std::system("command -v dot >/dev/null 2>&1") != 0) {
    // A machine without Graphviz (scripts/install-deps.sh installs it; a GPU machine may not have
    // it): the precise error, not a drawing.
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("--svg needs Graphviz's dot, which is not installed"), std::string::npos)
        << r.err;
    return;
  }
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("wrote " + svg + "\n"), std::string::npos) << r.out;
  std::ifstream in(svg);
  std::stringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  // An SVG document with one node per device: the eight GPUs of node 0 by name.
  EXPECT_NE(s.find("<svg"), std::string::npos) << s.substr(0, 200);
  EXPECT_NE(s.find("</svg>"), std::string::npos);
  EXPECT_NE(s.find("node0/gpu7"), std::string::npos);
}

TEST(TopoCommand, SvgWithoutGraphvizSaysWhatToInstall) {
  // PATH without Graphviz: collsim finds no `dot` to run.
  const std::string err = std::string(COLLSIM_BINARY_DIR) + "/topo_test_svg.err";
  const std::string cmd = "PATH=/nonexistent " + std::string(COLLSIM_BINARY_DIR) +
                          "/cli/collsim topo pcie-2gpu --svg " + COLLSIM_BINARY_DIR +
                          "/topo_test_nodot.svg 2>" + err;
  const int status = std::system(cmd.c_str());
  EXPECT_EQ(WEXITSTATUS(status), 1);
  std::ifstream in(err);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line,
            "collsim: --svg needs Graphviz's dot, which is not installed (Debian/Ubuntu: apt-get "
            "install graphviz; or run scripts/install-deps.sh); --dot FILE writes the DOT text "
            "without it");
}

TEST(TopoCommand, NodesOverride) {
  const CommandResult r = run_collsim("topo dgx-h100 --nodes 4");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("nodes      4 x 8 H100-SXM (sm90) = 32 GPUs"), std::string::npos) << r.out;
}

TEST(TopoCommand, ConfigErrorsAreOneLineAndExitOne) {
  const CommandResult r = run_collsim("topo " + std::string(COLLSIM_SOURCE_DIR) +
                                      "/tests/data/configs/bad/misspelled-fabric.yaml");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("did you mean \"nvswitch\"?"), std::string::npos) << r.err;
}

TEST(TopoCommand, MissingConfigExitsOne) {
  const CommandResult r = run_collsim("topo no-such-cluster");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err.rfind("collsim: unknown config \"no-such-cluster\"", 0), 0u) << r.err;
}

TEST(TopoCommand, UsageErrorsExitTwoWithHelp) {
  CommandResult r = run_collsim("topo dgx-h100 --bogus");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--bogus"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Usage:"), std::string::npos) << r.err;
  r = run_collsim("topo");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("CONFIG is required"), std::string::npos) << r.err;
  r = run_collsim("frobnicate");
  EXPECT_EQ(r.status, 2);
  r = run_collsim("topo dgx-h100 --nodes 0");
  EXPECT_EQ(r.status, 2);
}

TEST(TopoCommand, CostOverridesAreCheckedWhenLoaded) {
  const std::string path =
      std::string(COLLSIM_SOURCE_DIR) + "/tests/data/configs/bad/costs-unknown-protocol.yaml";
  const CommandResult r = run_collsim("topo " + path);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "collsim: " + path +
                       ":9:5: costs.protocols.simpel: unknown key; expected one of ll, ll128, "
                       "simple; did you mean \"simple\"?\n");
}

TEST(TopoCommand, CostValuesOutOfRangeAreLocated) {
  const std::string dir = std::string(COLLSIM_SOURCE_DIR) + "/tests/data/configs/bad/";
  CommandResult r = run_collsim("topo " + dir + "costs-efficiency-above-one.yaml");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "collsim: " + dir +
                       "costs-efficiency-above-one.yaml:10:15: costs.link_efficiency.nvswitch: "
                       "expected a number from 0.01 to 1, got 1.5\n");
  r = run_collsim("topo " + dir + "costs-launch-not-a-time.yaml");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "collsim: " + dir +
                       "costs-launch-not-a-time.yaml:11:15: costs.protocols.simple.launch: "
                       "expected a time such as \"0.6us\", got \"soon\"\n");
}

TEST(TopoCommand, CostOverridesReachTheSimulator) {
  // Simple's launch raised from NCCL's 8.4 us to 100 us: an 8-byte AllReduce pays the difference.
  const std::string slow =
      std::string(COLLSIM_SOURCE_DIR) + "/tests/data/configs/h100-2gpu-slow-launch.yaml";
  const std::string args = " --op allreduce --bytes 8 --algo ring --proto simple --format csv";
  const CommandResult a = run_collsim("predict " + slow + args);
  ASSERT_EQ(a.status, 0) << a.err;
  const auto time_of = [](const std::string& csv) {
    const std::string row = csv.substr(csv.find('\n') + 1);
    std::size_t pos = 0;
    for (int i = 0; i < 8; ++i) pos = row.find(',', pos) + 1;
    return std::stod(row.substr(pos));
  };
  const CommandResult b = run_collsim("predict h100-nvlink-4" + args);
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_GT(time_of(a.out), 100.0);
  EXPECT_LT(time_of(b.out), 50.0);
}

TEST(TopoCommand, HelpListsCommands) {
  const CommandResult r = run_collsim("--help");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("topo"), std::string::npos);
}

}  // namespace
}  // namespace collsim::test

namespace collsim::test {
namespace {

TEST(TopoCommand, AnEndlessConfigIsRefusedAtItsSizeCap) {
  // /dev/zero used to grow to gigabytes before failing; the reader stops at 16 MiB.
  const auto r = run_collsim("topo /dev/zero");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err,
            "collsim: /dev/zero: the config file is larger than 16 MiB; expected a YAML cluster "
            "description\n");
}

TEST(TopoCommand, ReadsTheConfigFromStandardInput) {
  const auto piped = run_collsim("topo - < " COLLSIM_SOURCE_DIR "/configs/pcie-2gpu.yaml");
  const auto named = run_collsim("topo pcie-2gpu");
  EXPECT_EQ(piped.status, 0) << piped.err;
  EXPECT_EQ(piped.out, named.out);
}

}  // namespace
}  // namespace collsim::test
