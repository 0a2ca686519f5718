// Ctrl-C keeps what is done: a sweep interrupted by SIGINT prints every size it finished as
// valid CSV / JSON / nccl-tests table, says on stderr which sizes were cut, and exits 130.
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
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Starts the sweep, sends SIGINT after a second (the whole sweep takes several), waits.
Interrupted interrupt_sweep(const std::string& format) {
  const std::string dir = ::testing::TempDir();
  const std::string out = dir + "interrupt-" + format + ".out", err = dir + "interrupt.err",
                    status = dir + "interrupt.status";
  const std::string cmd = "sh -c '" COLLSIM_BINARY_DIR
                          "/cli/collsim sweep h100-16node-ib --op allreduce -b 8 -e 64G --format " +
                          format + " > " + out + " 2> " + err +
                          " & pid=$!; sleep 1; kill -INT $pid; wait $pid; echo $? > " + status +
                          "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  return {std::stoi(slurp(status)), slurp(out), slurp(err)};
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

}  // namespace
}  // namespace collsim
