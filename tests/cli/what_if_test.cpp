// What-if faults on the command line (docs/cli.md "What-if faults"): every predicting command
// takes them, a fault slows what it touches, and a bad target is one precise line, exit 1.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
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

// GPUDirect RDMA off stages the network traffic in host memory: on h100-2node-ib two GPUs and
// two NICs share each PCIe switch's uplink to the CPU, which then carries it all, so the 2-node
// ring falls to well under half of its busbw (docs/cli.md).
TEST(WhatIf, GdrOffStagesThroughHostMemory) {
  const std::string ring =
      "predict h100-2node-ib --op allreduce --bytes 256M --algo ring --proto simple";
  const CommandResult on = run_collsim(ring);
  const CommandResult off = run_collsim(ring + " --gdr off");
  ASSERT_EQ(on.status, 0) << on.err;
  ASSERT_EQ(off.status, 0) << off.err;
  EXPECT_GT(time_us(off.out), 2.0 * time_us(on.out));
  EXPECT_NE(off.out.find("-> node0/cpu0 (pcie)"), std::string::npos) << off.out;  // bottleneck
  EXPECT_EQ(run_collsim(ring + " --gdr on").out, on.out);  // the preset's own setting
}

// Ethernet NICs are NCCL's socket transport, which moves host memory only: the cluster runs as
// the same NICs as RoCE with GPUDirect RDMA off, and --gdr on is refused.
TEST(WhatIf, EthernetIsTheSocketTransportWithoutGdr) {
  const std::string sockets = COLLSIM_SOURCE_DIR "/tests/data/configs/sockets-2node.yaml";
  std::ifstream in(sockets);
  std::stringstream text;
  text << in.rdbuf();
  std::string roce = text.str();
  roce.replace(roce.find("kind: ethernet"), 14, "kind: roce");
  const std::string roce_file = std::string(COLLSIM_BINARY_DIR) + "/sockets-as-roce.yaml";
  std::ofstream(roce_file) << roce << "  gdr: false\n";
  const std::string ring = " --op allreduce --bytes 256M --algo ring --proto simple";
  const CommandResult eth = run_collsim("predict " + sockets + ring);
  const CommandResult off = run_collsim("predict " + roce_file + ring);
  ASSERT_EQ(eth.status, 0) << eth.err;
  ASSERT_EQ(off.status, 0) << off.err;
  EXPECT_EQ(time_us(eth.out), time_us(off.out));
  // Staged through the CPUs, the 8 x 400G nodes lose more than half of what RDMA carries.
  const CommandResult rdma = run_collsim("predict " + roce_file + ring + " --gdr on");
  ASSERT_EQ(rdma.status, 0) << rdma.err;
  EXPECT_GT(time_us(eth.out), 2.0 * time_us(rdma.out));
  EXPECT_NE(eth.out.find("-> node0/cpu0 (pcie)"), std::string::npos) << eth.out;
  const CommandResult on = run_collsim("predict " + sockets + ring + " --gdr on");
  EXPECT_EQ(on.status, 1);
  EXPECT_EQ(on.err,
            "collsim: --gdr on: this cluster's NICs are kind ethernet, NCCL's socket transport, "
            "which moves host memory only\n");
}

TEST(WhatIf, TransportSwitchesSayWhatCannotBe) {
  const CommandResult both =
      run_collsim("predict h100-2node-ib --op allreduce --bytes 1M --gdr off --pxn on");
  EXPECT_EQ(both.status, 1);
  EXPECT_EQ(both.err, "collsim: --pxn on needs GPUDirect RDMA: give --gdr on or leave --pxn out\n");
  const CommandResult flat =
      run_collsim("predict a100-2node-roce --op allreduce --bytes 1M --pxn on");
  EXPECT_EQ(flat.status, 1);
  EXPECT_NE(flat.err.find("not rail_optimized"), std::string::npos) << flat.err;
  EXPECT_EQ(run_collsim(std::string(kPredict) + " --gdr maybe").status, 2);  // usage error
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
  for (const char* fault : {"--degrade node7/nic0:0.5", "--straggler node0/nic0:2",
                            "--fail node0/gpu0", "--fail node1/nics", "--degrade node0/nic0:1.5"}) {
    const CommandResult r = run_collsim(std::string(kPredict) + " " + fault);
    EXPECT_EQ(r.status, 1) << fault;
    EXPECT_EQ(r.err.rfind("collsim: --", 0), 0u) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  }
}

}  // namespace
}  // namespace collsim::test
