// Ctrl-C keeps what is done: a sweep, compare or scale interrupted by SIGINT prints every size (or
// node count) it finished as valid CSV / JSON / table, says on stderr what was cut, and exits 130.
// And the rows stream: those finished are on standard output while the command still runs.
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

// Runs `collsim ARGS`, sends SIGINT after `seconds` (the whole run takes much longer), waits.
Interrupted interrupt(const std::string& args, const std::string& seconds) {
  // One set of files per test: ctest -j runs these tests side by side.
  const std::string dir = ::testing::TempDir() + "interrupt_" +
                          ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const std::string out = dir + ".out", err = dir + ".err", before = dir + ".before",
                    status = dir + ".status";
  const std::string cmd = "sh -c '" COLLSIM_BINARY_DIR "/cli/collsim " + args + " > " + out +
                          " 2> " + err + " & pid=$!; sleep " + seconds + "; cp " + out + " " +
                          before + "; kill -INT $pid; wait $pid; echo $? > " + status + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  return {std::stoi(slurp(status)), slurp(out), slurp(err), slurp(before)};
}

Interrupted interrupt_sweep(const std::string& format) {
  return interrupt("sweep h100-16node-ib --op allreduce -b 8 -e 64G --format " + format, "1");
}

TEST(Interrupt, CsvKeepsEveryFinishedRow) {
  const Interrupted r = interrupt_sweep("csv");
  EXPECT_EQ(r.status, 130);
  EXPECT_EQ(r.err.rfind("collsim: interrupted: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(" sizes done; not done: "), std::string::npos) << r.err;
  std::istringstream lines(r.out);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line.rfind("collective,algorithm,protocol,", 0), 0u) << line;
  int rows = 0;
  while (std::getline(lines, line)) {
    EXPECT_EQ(std::count(line.begin(), line.end(), ','), 10) << line;  // every row complete
    ++rows;
  }
  // As many rows as stderr says sizes were done, fewer than the 34 of 8 B to 64 GiB.
  EXPECT_EQ(r.err.rfind(fmt::format("collsim: interrupted: {} of 34 sizes done", rows), 0), 0u)
      << r.err;
  EXPECT_LT(rows, 34);
}

TEST(Interrupt, JsonStaysValidAndSaysSo) {
  const Interrupted r = interrupt_sweep("json");
  EXPECT_EQ(r.status, 130);
  const auto j = nlohmann::json::parse(r.out);  // throws on a cut document
  EXPECT_TRUE(j["interrupted"].get<bool>());
  EXPECT_LT(j["rows"].size(), 34u);
}

TEST(Interrupt, TableSaysWhatWasCut) {
  const Interrupted r = interrupt_sweep("table");
  EXPECT_EQ(r.status, 130);
  EXPECT_NE(r.out.find("# interrupted: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# Avg bus bandwidth"), std::string::npos) << r.out;
}

TEST(Interrupt, SweepRowsAreOutBeforeTheEnd) {
  const Interrupted r = interrupt_sweep("csv");
  // The small sizes take milliseconds: a second in, they are printed although the run goes on.
  EXPECT_GE(std::count(r.out_before.begin(), r.out_before.end(), '\n'), 5) << r.out_before;
  EXPECT_EQ(r.out.rfind(r.out_before, 0), 0u);  // and what was out stays as it was
}

constexpr const char* kCompare = "compare h100-16node-ib --op allreduce -b 8 -e 64G --format ";

TEST(Interrupt, CompareKeepsItsSizesAndSaysSo) {
  const Interrupted t = interrupt(std::string(kCompare) + "table", "2");
  EXPECT_EQ(t.status, 130);
  EXPECT_NE(t.out_before.find("    8 B "), std::string::npos) << t.out_before;  // streamed
  EXPECT_NE(t.out.find("\nbest: "), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("interrupted: "), std::string::npos) << t.out;
  EXPECT_EQ(t.err.rfind("collsim: interrupted: ", 0), 0u) << t.err;

  const Interrupted j = interrupt(std::string(kCompare) + "json", "2");
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
  const Interrupted c = interrupt(std::string(kScale) + "csv", "2");
  EXPECT_EQ(c.status, 130);
  EXPECT_EQ(c.out_before.rfind("nodes,collective,", 0), 0u) << c.out_before;
  EXPECT_NE(c.out_before.find("\n1,allreduce,ring,ll,"), std::string::npos) << c.out_before;
  EXPECT_NE(c.err.find(" node counts done; not done: "), std::string::npos) << c.err;

  const Interrupted j = interrupt(std::string(kScale) + "json", "2");
  EXPECT_EQ(j.status, 130);
  const auto doc = nlohmann::json::parse(j.out);
  EXPECT_TRUE(doc["interrupted"].get<bool>());
  EXPECT_LT(doc["rows"].size(), 13u);
}

}  // namespace
}  // namespace collsim
