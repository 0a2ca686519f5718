// Same input, same output, bit for bit: each command run twice, and with 1 and 4 threads
// (COLLSIM_THREADS), prints byte-identical tables, CSV, JSON, traces and calibration overlays.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "tests/cli/run_collsim.hpp"

namespace collsim {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs `args` (which may write `file`) with 1 and 4 threads, twice each; returns what each run
// printed, or wrote to `file` if given.
std::vector<std::string> outputs(const std::string& args, const std::string& file = "") {
  std::vector<std::string> out;
  for (const char* threads : {"1", "4", "1", "4"}) {
    setenv("COLLSIM_THREADS", threads, 1);
    const auto r = test::run_collsim(args);
    EXPECT_EQ(r.status, 0) << args << "\n" << r.err;
    out.push_back(file.empty() ? r.out : slurp(file));
  }
  unsetenv("COLLSIM_THREADS");
  return out;
}

void expect_identical(const std::vector<std::string>& o, const std::string& what) {
  ASSERT_FALSE(o.front().empty()) << what;
  for (std::size_t i = 1; i < o.size(); ++i) EXPECT_EQ(o[i], o.front()) << what << " run " << i;
}

const std::string kData = COLLSIM_SOURCE_DIR "/tests/data/nccl-tests/";

TEST(Determinism, CompareInEveryFormat) {
  for (const char* f : {"table", "csv", "json"}) {
    expect_identical(outputs(std::string("compare dgx-h100 --op allreduce -b 8 -e 64M -f 8 "
                                         "--format ") +
                             f),
                     f);
  }
}

TEST(Determinism, SweepWithNcclSelection) {
  expect_identical(
      outputs("sweep h100-2node-ib --op allreduce -b 1K -e 16M -f 4 --select nccl --format csv"),
      "sweep");
}

TEST(Determinism, Trace) {
  const std::string file = ::testing::TempDir() + "determinism-trace.json";
  expect_identical(outputs("trace dgx-h100 --op allreduce --bytes 1M --algo ring --proto ll128 "
                           "-o " +
                               file,
                           file),
                   "trace");
}

TEST(Determinism, CalibrateAndValidate) {
  const std::string overlay = ::testing::TempDir() + "determinism-cal.yaml";
  expect_identical(
      outputs("calibrate pcie-2gpu --measurements " + kData +
                  "rtx2080ti-x2_1node-pcie-noP2P_allreduce_anthony-hoo-blog.txt -o " + overlay,
              overlay),
      "overlay");
  expect_identical(outputs("validate pcie-2gpu --costs " + overlay + " --measurements " + kData +
                           "rtx2080ti-x2_1node-pcie-noP2P_allgather_anthony-hoo-blog.txt "
                           "--format json"),
                   "validate");
}

}  // namespace
}  // namespace collsim
