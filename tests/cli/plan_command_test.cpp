// `collsim list` and `collsim plan` end to end.
#include <gtest/gtest.h>

#include "tests/cli/run_collsim.hpp"

namespace collsim::test {
namespace {

TEST(ListCommand, PrintsTheMatrix) {
  const CommandResult r = run_collsim("list");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, golden("list.txt", r.out));
}

TEST(ListCommand, OneCollective) {
  const CommandResult r = run_collsim("list --op all_to_all");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("direct"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("allreduce"), std::string::npos) << r.out;
}

TEST(PlanCommand, PrintsTheSchedule) {
  const CommandResult r = run_collsim(
      "plan h100-nvlink-4 --op allreduce --bytes 64 --algo ring --proto simple --channels 1 "
      "--max-ops 4");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, golden("plan_ring_h100-nvlink-4.txt", r.out));
}

// NVLS: the NVSwitch is an actor of the schedule; it reduces what the GPUs send it and
// multicasts the result, one down lane per GPU.
TEST(PlanCommand, NvlsHasTheSwitchReduceAndMulticast) {
  const CommandResult r =
      run_collsim("plan dgx-h100 --op allreduce --bytes 1G --algo nvls --max-ops 8");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("schedule: allreduce by nvls, protocol simple"), std::string::npos);
  EXPECT_NE(r.out.find("switch 8 (of rank 0): input 0 B, output 0 B, scratch 1073741824 B"),
            std::string::npos);
  EXPECT_NE(r.out.find("recv-reduce            from 7        dst scratch+0"), std::string::npos)
      << r.out.substr(0, 2000);
  EXPECT_NE(r.out.find("send                   to 8          src input+0"), std::string::npos);
  EXPECT_NE(r.out.find("recv                   from 8        dst output+0"), std::string::npos);
  // The schedule predict times: NVLS on NCCL's 16 NVLS channels (comm->nvlsChannels), not the
  // 24 of the communicator's rings, and its 128 KiB chunk at 1 GiB.
  EXPECT_NE(r.out.find("ranks 8, channels 16 (144 IR channels"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("chunk 131072 B"), std::string::npos) << r.out;
}

// NVLS needs a reducing NVSwitch; across nodes it needs switches that reduce between them
// (SHARP).
TEST(PredictCommand, NvlsNeedsAReducingNvSwitchAndAcrossNodesSharp) {
  const CommandResult multi =
      run_collsim("plan h100-2node-ib --op allreduce --bytes 1G --algo nvls --proto simple");
  EXPECT_EQ(multi.status, 1);
  EXPECT_EQ(multi.err,
            "collsim: algorithm \"nvls\" spans nodes only where their switches reduce between them "
            "(InfiniBand SHARP, with NCCL's CollNet enabled); h100-2node-ib says network.sharp: "
            "false (NCCL runs nvls_tree there)\n");
  for (const char* op : {"allreduce", "allgather", "reducescatter"}) {
    const CommandResult sharp = run_collsim(
        std::string("predict h100-16node-sharp --nodes 2 --bytes 1G --algo nvls --op ") + op);
    ASSERT_EQ(sharp.status, 0) << op << ": " << sharp.err;
    EXPECT_NE(sharp.out.find("algorithm   nvls, protocol simple"), std::string::npos) << sharp.out;
  }
  const CommandResult a100 =
      run_collsim("predict dgx-a100 --op allreduce --bytes 1M --algo nvls --proto simple");
  EXPECT_EQ(a100.status, 1);
  EXPECT_NE(a100.err.find("needs an NVSwitch that reduces"), std::string::npos) << a100.err;
  const CommandResult h100 = run_collsim("predict dgx-h100 --op allreduce --bytes 1G --algo nvls");
  ASSERT_EQ(h100.status, 0) << h100.err;
  EXPECT_NE(h100.out.find("algorithm   nvls, protocol simple"), std::string::npos) << h100.out;
}

// NVLS across nodes cuts chunks of at most 32 KiB where NCCL's model gives its AllReduce less
// than 150 GB/s, from the graphs as given: two NVLS channels of 24 GB/s give 24 GB/s.
TEST(PlanCommand, NvlsAcrossNodesChunkFollowsTheGivenGraph) {
  const std::string plan =
      "plan h100-16node-sharp --nodes 2 --op allreduce --bytes 1G --algo nvls --proto simple";
  const CommandResult estimated = run_collsim(plan);
  ASSERT_EQ(estimated.status, 0) << estimated.err;
  EXPECT_NE(estimated.out.find("chunk 131072 B in 1 slices"), std::string::npos) << estimated.out;
  const CommandResult given = run_collsim(plan + " --nccl-graph nvls=2x24");
  ASSERT_EQ(given.status, 0) << given.err;
  EXPECT_NE(given.out.find("chunk 32768 B in 1 slices"), std::string::npos) << given.out;
}

// 20 GB200 trays are an NVL72 rack and 8 GPUs of another: nodes of 72 and 8 ranks. Algorithms
// that need equal nodes (NVLSTree, ring2d, CollNet) are not offered beside NCCL's pick; where
// NCCL's model picks NVLSTree itself, predict says it cannot simulate it rather than time
// something else.
TEST(PredictCommand, UnequalNodesOfferNoAlgorithmThatNeedsEqualOnes) {
  const CommandResult d = run_collsim("predict gb200-nvl72 --nodes 20 --op allreduce --bytes 64M");
  ASSERT_EQ(d.status, 0) << d.err;
  EXPECT_NE(d.out.find("algorithm   ring, protocol ll128 (auto: NCCL picks Ring/LL128)"),
            std::string::npos)
      << d.out;
  const CommandResult r = run_collsim(
      "predict gb200-nvl72 --nodes 20 --op allreduce --bytes 1M --algo ring2d --proto simple");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err,
            "collsim: algorithm \"ring2d\" needs the same number of ranks on every node; this "
            "communicator's nodes hold 8 to 72\n");
  const CommandResult n = run_collsim("predict gb200-nvl72 --nodes 20 --op allreduce --bytes 1M");
  EXPECT_EQ(n.status, 1);
  EXPECT_EQ(n.err,
            "collsim: --select nccl picked NVLSTree/Simple, but algorithm \"nvls_tree\" needs the "
            "same number of ranks on every node; this communicator's nodes hold 8 to 72\n");
}

TEST(PlanCommand, UserErrorsAreOneLineAndExitOne) {
  struct Case {
    std::string args, message;
  };
  const Case kCases[] = {
      {"plan dgx-h100 --op allreduce --bytes 63 --algo ring",
       "collsim: size 63 B is not a multiple of the f32 element size (4 B)\n"},
      {"plan dgx-h100 --op allreduce --bytes 64 --algo rign",
       "collsim: --algo: unknown algorithm \"rign\": expected one of ring, bintree, dbtree, "
       "ring2d, "
       "rhd, direct, binomial, nvls, nvls_tree, pat, collnet_direct, collnet_chain, tree, "
       "collnetdirect, "
       "collnetchain, nvlstree; did you mean \"ring\"?\n"},
      {"plan dgx-h100 --op alltoall --bytes 64K --algo ring",
       "collsim: algorithm \"ring\" does not implement alltoall; algorithms that do: direct\n"},
      {"plan dgx-h100 --op allreduse --bytes 64 --algo ring",
       "collsim: unknown collective \"allreduse\": expected one of allreduce, allgather, "
       "reducescatter, broadcast, reduce, gather, scatter, alltoall, barrier, sendrecv; did you "
       "mean \"allreduce\"?\n"},
      {"plan dgx-h100 --op allreduce --bytes 1Q --algo ring",
       "collsim: --bytes: expected a size such as \"64MiB\", got \"1Q\"\n"},
  };
  for (const Case& c : kCases) {
    const CommandResult r = run_collsim(c.args);
    EXPECT_EQ(r.status, 1) << c.args;
    EXPECT_EQ(r.err, c.message) << c.args;
  }
}

TEST(PlanCommand, MissingOptionsAreUsageErrors) {
  EXPECT_EQ(run_collsim("plan dgx-h100 --bytes 64").status, 2);
  EXPECT_EQ(run_collsim("plan dgx-h100 --op allreduce").status, 2);
  EXPECT_EQ(run_collsim("plan dgx-h100 --op allreduce --bytes 64 --channels 0").status, 2);
}

}  // namespace
}  // namespace collsim::test
