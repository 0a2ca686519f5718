// `collsim topo` end to end: the summary, DOT export, exit statuses and one-line errors.
#include <gtest/gtest.h>

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

TEST(TopoCommand, WritesGraphvizDot) {
  const std::string dot = std::string(COLLSIM_BINARY_DIR) + "/topo_test.dot";
  const CommandResult r = run_collsim("topo pcie-2gpu --dot " + dot);
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream in(dot);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), golden("topo_pcie-2gpu.dot", text.str()));
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

TEST(TopoCommand, HelpListsCommands) {
  const CommandResult r = run_collsim("--help");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("topo"), std::string::npos);
}

}  // namespace
}  // namespace collsim::test
