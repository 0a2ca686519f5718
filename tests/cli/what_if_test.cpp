// What-if faults on the command line (docs/cli.md "What-if faults"): every predicting command
// takes them, a fault slows what it touches, and a bad target is one precise line, exit 1.
#include <gtest/gtest.h>

#include <string>

#include "tests/cli/run_collsim.hpp"

namespace collsim::test {
namespace {

double time_us(const std::string& out) {
  const std::size_t at = out.find("time ");
  EXPECT_NE(at, std::string::npos) << out;
  return std::stod(out.substr(at + 5));
}

constexpr const char* kPredict =
    "predict h100-4gpu-2node-ndr200 --op allreduce --bytes 16M --algo ring --proto simple";

TEST(WhatIf, DegradedNicSlowsTheRing) {
  const CommandResult healthy = run_collsim(kPredict);
  const CommandResult slow = run_collsim(std::string(kPredict) + " --degrade node1/nic0:0.5");
  ASSERT_EQ(healthy.status, 0) << healthy.err;
  ASSERT_EQ(slow.status, 0) << slow.err;
  EXPECT_GT(time_us(slow.out), 1.3 * time_us(healthy.out));
}

TEST(WhatIf, EveryPredictingCommandTakesFaults) {
  for (const char* cmd :
       {"sweep h100-4gpu-2node-ndr200 --op allreduce -b 1M -e 1M --fail node0/nic1",
        "compare h100-4gpu-2node-ndr200 --op allreduce -b 1M -e 1M --straggler node1:1.5",
        "plan h100-4gpu-2node-ndr200 --op allreduce --bytes 1M --degrade rail0:0.5"}) {
    const CommandResult r = run_collsim(cmd);
    EXPECT_EQ(r.status, 0) << cmd << "\n" << r.err;
  }
}

TEST(WhatIf, BadTargetsAreOneLineErrors) {
  for (const char* fault :
       {"--degrade node7/nic0:0.5", "--straggler node0/nic0:2", "--fail node0/gpu0",
        "--fail node1/nics", "--degrade node0/nic0:1.5"}) {
    const CommandResult r = run_collsim(std::string(kPredict) + " " + fault);
    EXPECT_EQ(r.status, 1) << fault;
    EXPECT_EQ(r.err.rfind("collsim: --", 0), 0u) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  }
}

}  // namespace
}  // namespace collsim::test
