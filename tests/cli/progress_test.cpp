// Progress on a terminal, nothing extra in a pipe: a sweep run under a pseudo-terminal (util-linux
// `script`) shows the "collsim sweep: k/n sizes" line with the time going by, validate its
// "k/n rows", predict the events it has simulated; the same sweep with stderr captured to a file
// writes nothing there.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "tests/cli/run_collsim.hpp"

namespace collsim::test {
namespace {

constexpr const char* kSweep = "sweep dgx-h100 --op allreduce -b 8 -e 8G --format csv";

// util-linux `script` gives the command its pseudo-terminal; scripts/install-deps.sh installs it
// (bsdutils), so the tests that need it skip only where the project's set-up was not run.
constexpr const char* kNoScript =
    "util-linux `script` is not installed: no pseudo-terminal to test with";
bool have_script() { return std::system("command -v script > /dev/null 2>&1") == 0; }

std::string run_on_a_terminal(const std::string& args) {
  // No half-second wait before the line (cli/progress.cpp), so the test does not race the clock.
  const std::string cmd = "COLLSIM_PROGRESS_DELAY_MS=0 script -qfec '" COLLSIM_BINARY_DIR
                          "/cli/collsim " +
                          args + " > /dev/null' /dev/null 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  std::string out;
  std::array<char, 4096> buf{};
  while (pipe && std::fgets(buf.data(), static_cast<int>(buf.size()), pipe.get())) {
    out += buf.data();
  }
  return out;
}

TEST(Progress, ALineOnATerminal) {
  if (!have_script()) GTEST_SKIP() << kNoScript;
  const std::string screen = run_on_a_terminal(kSweep);
  EXPECT_NE(screen.find("collsim sweep: "), std::string::npos) << screen;
  EXPECT_NE(screen.find(" sizes"), std::string::npos) << screen;
}

TEST(Progress, ValidateCountsItsRows) {
  if (!have_script()) GTEST_SKIP() << kNoScript;
  const std::string screen =
      run_on_a_terminal("validate dgx-h100 --measurements " COLLSIM_SOURCE_DIR
                        "/tests/data/nccl-tests/h100x8_1node_allgather_xxrjun-cluster01.txt");
  EXPECT_NE(screen.find("collsim validate: "), std::string::npos) << screen;
  EXPECT_NE(screen.find("/10 rows"), std::string::npos) << screen;
}

TEST(Progress, PredictShowsTheEventsItSimulates) {
  if (!have_script()) GTEST_SKIP() << kNoScript;
  // NVLSTree on 16 nodes: millions of events, about a second.
  const std::string screen = run_on_a_terminal("predict h100-16node-ib --op allreduce --bytes 1G");
  EXPECT_NE(screen.find("collsim predict: "), std::string::npos) << screen;
  EXPECT_NE(screen.find(" M events simulated, "), std::string::npos) << screen;
}

TEST(Progress, NothingInAPipe) {
  const CommandResult r = run_collsim(kSweep);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

}  // namespace
}  // namespace collsim::test
