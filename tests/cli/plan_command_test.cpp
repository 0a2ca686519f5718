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
       "rhd, direct, binomial, collnet_direct, collnet_chain, nvls, nvls_tree, pat, tree, "
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
