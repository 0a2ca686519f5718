// Golden dumps of small schedules (`collsim plan` text). Regenerate deliberately with
//   COLLSIM_UPDATE_GOLDEN=1 ./algorithms_test --gtest_filter='Golden.*'
// and review the diff; a test never rewrites them silently.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "algorithms/generators/registry.hpp"
#include "algorithms/ir/format.hpp"

namespace collsim {
namespace {

void expect_golden(const Schedule& s, const std::string& name) {
  const std::string path = std::string(COLLSIM_SOURCE_DIR) + "/tests/algorithms/golden/" + name;
  const std::string text = format_schedule(s);
  const char* update = std::getenv("COLLSIM_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(path) << text;  // then compared like any other run
  }
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "missing golden file " << path
                         << " (create it with COLLSIM_UPDATE_GOLDEN=1)";
  std::stringstream want;
  want << in.rdbuf();
  EXPECT_EQ(text, want.str()) << "schedule dump changed; see " << path;
}

// 16 floats over 4 ranks: 4-element segments, each step in 2 slices of 2 elements (8 B).
TEST(Golden, RingAllReduceFourRanks) {
  Request r;
  r.algorithm = "ring";
  r.count = 16;
  r.comm = Communicator::flat(4);
  expect_golden(plan(r), "ring_allreduce_4.txt");
}

// 2 nodes x 2 GPUs: per channel, tree 0 rooted at node 0 and tree 1 (mirror) at node 1, each
// with a reduce and a broadcast IR channel; a 2-rank chain inside each node.
TEST(Golden, DoubleBinaryTreeTwoByTwo) {
  Request r;
  r.algorithm = "dbtree";
  r.count = 16;
  r.comm = Communicator::grid(2, 2);
  expect_golden(plan(r), "dbtree_2x2.txt");
}

TEST(Golden, TruncatedDump) {
  Request r;
  r.algorithm = "ring";
  r.count = 16;
  r.comm = Communicator::flat(2);
  const std::string text = format_schedule(plan(r), 2);
  EXPECT_NE(text.find("  channel 0: 6 ops\n"), std::string::npos) << text;
  EXPECT_NE(text.find("     ... 4 more ops\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace collsim
