// `collsim sweep` and `collsim compare` end to end: goldens of the table, CSV and JSON forms on
// dgx-h100; the table read back by the nccl-tests reader; the plot.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "calibrate/nccl_tests_reader.hpp"
#include "cli/nccl_tests_table.hpp"
#include "tests/cli/run_collsim.hpp"

namespace collsim::test {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

TEST(SweepCommand, TableGoldenWithNcclSelection) {
  const CommandResult r = run_collsim("sweep dgx-h100 --op allreduce -b 8 -e 256M --select nccl");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");  // no progress line on a pipe
  EXPECT_EQ(r.out, golden("sweep_dgx-h100_allreduce_nccl.txt", r.out));
}

TEST(SweepCommand, CsvGolden) {
  const CommandResult r = run_collsim(
      "sweep dgx-h100 --op allgather -b 1K -e 256M --algo ring --proto simple --format csv");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, golden("sweep_dgx-h100_allgather_ring.csv", r.out));
}

TEST(SweepCommand, JsonGoldenWithBestSelection) {
  const CommandResult r =
      run_collsim("sweep dgx-h100 --op allreduce -b 1K -e 1M -f 4 --select best --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, golden("sweep_dgx-h100_allreduce_best.json", r.out));
}

// The default output is an nccl-tests table: the reader that takes real logs takes it, with the
// checks it applies to them (algbw = size / time, busbw factor, "# Avg bus bandwidth").
TEST(SweepCommand, TableReadsAsAnNcclTestsLog) {
  const CommandResult r = run_collsim("sweep dgx-h100 --op allreduce -b 8 -e 256M --select nccl");
  ASSERT_EQ(r.status, 0) << r.err;
  const MeasurementFile m = parse_measurements(r.out, "sweep.txt");
  ASSERT_EQ(m.rows.size(), 26u);
  EXPECT_TRUE(m.warnings.empty()) << m.warnings.front();
  EXPECT_EQ(m.format, MeasurementFormat::kNcclTests);
  EXPECT_EQ(m.rows.front().bytes, 8u);
  EXPECT_EQ(m.rows.back().bytes, 268435456u);
  EXPECT_EQ(m.rows.back().ranks, 8);
  EXPECT_EQ(m.rows.front().algo_override.value_or(""), "ring");
  EXPECT_EQ(m.rows.front().proto_override.value_or(""), "ll");
  EXPECT_EQ(m.rows.back().proto_override.value_or(""), "simple");
}

// Column headers byte for byte as nccl-tests prints them.
TEST(SweepCommand, ColumnHeaderIsNcclTestsOwn) {
  std::ifstream f(std::string(COLLSIM_SOURCE_DIR) +
                  "/tests/data/nccl-tests/h100x4_1node_allreduce_waynehacking8.txt");
  std::stringstream real;
  real << f.rdbuf();
  const auto want = lines_of(real.str());
  const CommandResult r = run_collsim("sweep h100-nvlink-4 --op allreduce -b 8 -e 64");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto got = lines_of(r.out);
  auto find = [](const std::vector<std::string>& v, const std::string& start) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (v[i].rfind(start, 0) == 0) return i;
    }
    return v.size();
  };
  const std::size_t w = find(want, "#       size"), g = find(got, "#       size");
  ASSERT_LT(w, want.size());
  ASSERT_LT(g, got.size());
  for (int k = -1; k <= 1; ++k) EXPECT_EQ(got[g + k], want[w + k]);
  EXPECT_EQ(got[find(got, "# Avg bus")].back(), ' ');  // nccl-tests' trailing blank
}

TEST(SweepCommand, TimeColumnPrecision) {
  EXPECT_EQ(nccl_tests_time(22.72), "  22.72");
  EXPECT_EQ(nccl_tests_time(1181.432), "1181.43");
  EXPECT_EQ(nccl_tests_time(17735.54), "17735.5");
  EXPECT_EQ(nccl_tests_time(110912.2), " 110912");
  EXPECT_EQ(nccl_tests_time(9999.999), "10000.0");
}

TEST(CompareCommand, TableGolden) {
  const CommandResult r = run_collsim("compare dgx-h100 --op allreduce -b 8 -e 32M -f 4");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, golden("compare_dgx-h100_allreduce.txt", r.out));
  EXPECT_NE(r.out.find("crossovers:\n  "), std::string::npos) << r.out;
}

TEST(CompareCommand, CsvGolden) {
  const CommandResult r =
      run_collsim("compare dgx-h100 --op allgather -b 1K -e 1M -f 32 --format csv");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, golden("compare_dgx-h100_allgather.csv", r.out));
}

TEST(CompareCommand, JsonGolden) {
  const CommandResult r = run_collsim(
      "compare dgx-h100 --op allreduce -b 8 -e 8M -f 32 --algo ring,tree --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, golden("compare_dgx-h100_allreduce_ring-tree.json", r.out));
}

TEST(CompareCommand, PlotsSvgAndPng) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "gnuplot is not installed (scripts/install-deps.sh installs it)";
  }
  for (const std::string ext : {"svg", "png"}) {
    const std::string path = std::string(COLLSIM_BINARY_DIR) + "/cli_test_plot." + ext;
    std::filesystem::remove(path);
    const CommandResult r = run_collsim(
        "compare dgx-h100 --op allreduce -b 8 -e 64K -f 8 "
        "--algo ring,tree --plot " +
        path);
    ASSERT_EQ(r.status, 0) << r.err;
    ASSERT_TRUE(std::filesystem::exists(path));
    EXPECT_GT(std::filesystem::file_size(path), 1000u);
    std::ifstream f(path);
    std::string head(8, '\0');
    f.read(head.data(), 8);
    if (ext == "png") {
      EXPECT_EQ(head.substr(1, 3), "PNG");
    } else {
      std::stringstream s;
      s << head << f.rdbuf();
      EXPECT_NE(s.str().find("<svg"), std::string::npos);
      EXPECT_NE(s.str().find("dbtree/ll"), std::string::npos);
    }
    std::filesystem::remove(path);
  }
}

}  // namespace
}  // namespace collsim::test
