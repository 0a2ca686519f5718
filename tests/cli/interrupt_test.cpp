// Ctrl-C keeps what is done: a sweep, compare or scale interrupted by SIGINT prints every size (or
// node count) it finished as valid CSV / JSON / table, and validate every row, says on stderr what
// was cut, and exits 130. And the rows stream: those finished are on standard output while the
// command still runs.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace collsim {
namespace {

struct Interrupted {
  int status = -1;
  std::string out, err;
  std::string out_before;  // standard output as it was just before the signal
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs `collsim ARGS`; once `ready` holds (a shell condition on $o, the standard output so far:
// the command has streamed what the test needs), sends SIGINT and waits. Waiting on what was
// printed rather than on a clock keeps the test right on a fast machine (which would finish before
// a fixed delay) and on a slow one (which would print nothing before it). If `ready` never holds
// within 120 s, or the command ends first, the signal still goes and the expectations fail; a
// command that outlives the signal by 60 s is killed (status 137), so the test never hangs.
Interrupted interrupt(const std::string& args, const std::string& ready) {
  // One set of files per test: ctest -j runs these tests side by side.
  const std::string dir = ::testing::TempDir() + "interrupt_" +
                          ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const std::string out = dir + ".out", err = dir + ".err", before = dir + ".before",
                    status = dir + ".status";
  // $o is emptied first, so that `ready` never sees the previous run's output. A command started
  // with & by a non-interactive shell ignores SIGINT until collsim installs its handler (around
  // the rows it streams), so `ready` must wait for output printed under that handler.
  const std::string cmd = "sh -c 'o=" + out + "; : > $o; " COLLSIM_BINARY_DIR "/cli/collsim " +
                          args + " > $o 2> " + err + " & pid=$!; i=0; until " + ready +
                          "; do i=$((i+1)); [ $i -gt 2400 ] && break; "
                          "kill -0 $pid 2>/dev/null || break; sleep 0.05; done; cp $o " +
                          before + "; kill -INT $pid; (sleep 60; kill -KILL $pid) >/dev/null 2>&1 & "
                          "wait $pid; echo $? > " + status + "; kill $! 2>/dev/null'";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  return {std::stoi(slurp(status)), slurp(out), slurp(err), slurp(before)};
}

// True once $o holds at least `n` lines.
std::string lines_out(int n) { return fmt::format("[ $(wc -l < $o) -ge {} ]", n); }

// True once $o holds `n` lines matching the extended regular expression `pattern` (no quotes).
std::string printed(const std::string& pattern, int n = 1) {
  return fmt::format("[ $(grep -Ec \"{}\" $o) -ge {} ]", pattern, n);
}

// The rows of an interrupted CSV below its header, each expected whole (`commas` commas).
int complete_csv_rows(const std::string& out, long commas) {
  std::istringstream lines(out);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line.rfind("collective,algorithm,protocol,", 0), 0u) << line;
  int rows = 0;
  while (std::getline(lines, line)) {
    EXPECT_EQ(std::count(line.begin(), line.end(), ','), commas) << line;
    ++rows;
  }
  return rows;
}

Interrupted interrupt_sweep(const std::string& format, const std::string& ready) {
  return interrupt("sweep h100-16node-ib --op allreduce -b 8 -e 64G --format " + format, ready);
}

TEST(Interrupt, CsvKeepsEveryFinishedRow) {
  const Interrupted r = interrupt_sweep("csv", lines_out(3));
  EXPECT_EQ(r.status, 130);
  EXPECT_EQ(r.err.rfind("collsim: interrupted: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(" sizes done; not done: "), std::string::npos) << r.err;
  const int rows = complete_csv_rows(r.out, 10);
  // As many rows as stderr says sizes were done, fewer than the 34 of 8 B to 64 GiB.
  EXPECT_EQ(r.err.rfind(fmt::format("collsim: interrupted: {} of 34 sizes done", rows), 0), 0u)
      << r.err;
  EXPECT_GE(rows, 2);
  EXPECT_LT(rows, 34);
}

TEST(Interrupt, JsonStaysValidAndSaysSo) {
  const Interrupted r = interrupt_sweep("json", printed("time_us"));
  EXPECT_EQ(r.status, 130);
  const auto j = nlohmann::json::parse(r.out);  // throws on a cut document
  EXPECT_TRUE(j["interrupted"].get<bool>());
  EXPECT_GE(j["rows"].size(), 1u);
  EXPECT_LT(j["rows"].size(), 34u);
}

TEST(Interrupt, TableSaysWhatWasCut) {
  const Interrupted r = interrupt_sweep("table", printed("^ +8 "));
  EXPECT_EQ(r.status, 130);
  EXPECT_NE(r.out.find("# interrupted: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# Avg bus bandwidth"), std::string::npos) << r.out;
}

TEST(Interrupt, SweepRowsAreOutBeforeTheEnd) {
  const Interrupted r = interrupt_sweep("csv", lines_out(6));
  // The small sizes take milliseconds: they are printed while the large ones still run.
  EXPECT_EQ(r.status, 130);
  EXPECT_GE(std::count(r.out_before.begin(), r.out_before.end(), '\n'), 6) << r.out_before;
  EXPECT_EQ(r.out.rfind(r.out_before, 0), 0u);  // and what was out stays as it was
}

constexpr const char* kCompare = "compare h100-16node-ib --op allreduce -b 8 -e 64G --format ";

TEST(Interrupt, CompareKeepsItsSizesAndSaysSo) {
  const Interrupted t = interrupt(std::string(kCompare) + "table", printed("^ +8 B "));
  EXPECT_EQ(t.status, 130);
  EXPECT_NE(t.out_before.find("    8 B "), std::string::npos) << t.out_before;  // streamed
  EXPECT_NE(t.out.find("\nbest: "), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("interrupted: "), std::string::npos) << t.out;
  EXPECT_EQ(t.err.rfind("collsim: interrupted: ", 0), 0u) << t.err;

  const Interrupted j = interrupt(std::string(kCompare) + "json", printed("time_us"));
  EXPECT_EQ(j.status, 130);
  const auto doc = nlohmann::json::parse(j.out);
  EXPECT_TRUE(doc["interrupted"].get<bool>());
  EXPECT_FALSE(doc["rows"].empty());
  EXPECT_TRUE(doc.contains("ranges"));
}

constexpr const char* kScale =
    "scale summit --op allreduce --bytes 8 --algo ring --proto ll --nodes 1,2,4,8,16,32,64,128,"
    "256,512,1024,2048,4096 --format ";

TEST(Interrupt, ScaleKeepsItsNodeCountsAndSaysSo) {
  const Interrupted c = interrupt(std::string(kScale) + "csv", printed("^2,allreduce,ring,ll,"));
  EXPECT_EQ(c.status, 130);
  EXPECT_EQ(c.out_before.rfind("nodes,collective,", 0), 0u) << c.out_before;
  EXPECT_NE(c.out_before.find("\n1,allreduce,ring,ll,"), std::string::npos) << c.out_before;
  EXPECT_NE(c.err.find(" node counts done; not done: "), std::string::npos) << c.err;

  const Interrupted j = interrupt(std::string(kScale) + "json", printed("time_us", 2));
  EXPECT_EQ(j.status, 130);
  const auto doc = nlohmann::json::parse(j.out);
  EXPECT_TRUE(doc["interrupted"].get<bool>());
  EXPECT_LT(doc["rows"].size(), 13u);
}

// 33 rows of a 128-GPU cluster: its LL rows take well under a second each, its large tree rows
// several seconds.
const std::string kValidate =
    "validate " COLLSIM_SOURCE_DIR
    "/tests/data/configs/held-out/oci-gb200-roce.yaml "
    "--default-costs --measurements " COLLSIM_SOURCE_DIR
    "/tests/data/nccl-tests/"
    "gb200x128_32node-2rack_allreduce_oci-bm-gpu-gb200-v3.4-mnnvl-roce_oci-hpc-oke.txt --format ";

TEST(Interrupt, ValidateKeepsItsRowsAndTheirStatistics) {
  const Interrupted c = interrupt(kValidate + "csv", lines_out(3));
  EXPECT_EQ(c.status, 130);
  const int rows = complete_csv_rows(c.out, 15);
  // The run's NCCL_BUFFSIZE, which collsim does not model, is said first, before any row.
  const std::string said = c.err.substr(0, c.err.find('\n') + 1);
  EXPECT_NE(said.find("the run set NCCL_BUFFSIZE=16777216"), std::string::npos) << c.err;
  EXPECT_EQ(c.err.rfind(fmt::format("collsim: interrupted: {} of 33 rows done", rows), said.size()),
            said.size())
      << c.err;
  EXPECT_GE(rows, 2);
  EXPECT_LT(rows, 33);
  EXPECT_EQ(c.out.rfind(c.out_before, 0), 0u);  // the rows were out before the signal

  const Interrupted j = interrupt(kValidate + "json", printed("error_pct", 2));
  EXPECT_EQ(j.status, 130);
  const auto doc = nlohmann::json::parse(j.out);
  EXPECT_TRUE(doc["interrupted"].get<bool>());
  EXPECT_LT(doc["rows"].size(), 33u);
  EXPECT_EQ(doc["files"][0]["rows"].get<std::size_t>(), doc["rows"].size());  // over those rows

  const Interrupted t = interrupt(kValidate + "table", printed("dbtree/", 2));
  EXPECT_EQ(t.status, 130);
  EXPECT_NE(t.out.find("\noverall "), std::string::npos) << t.out;
}

}  // namespace
}  // namespace collsim
