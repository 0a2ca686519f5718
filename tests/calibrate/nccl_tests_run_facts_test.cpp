// What a log says about its run beyond the table, and what --nccl-version and --env say for a
// log that does not: the release, the environment (NCCL's own "set by environment" echo
// included) and an NCCL_DEBUG=INFO log's channel counts, on small hand-written logs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "calibrate/nccl_tests_reader.hpp"

namespace collsim {
namespace {

// --nccl-version and --env say what a bare log would have printed: they fill in what the file
// leaves out, act as the file's own would (NCCL_ALGO forces the rows, NCCL_NVLS_ENABLE=0 takes
// NVLS out), and a file that says otherwise is right, the option wrong.
TEST(NcclTestsReader, VersionAndEnvironmentFromOptions) {
  const std::string table =
      "# Collective test starting: all_reduce_perf\n"
      "  1048576  262144  float  sum  -1  10.00  104.86  196.61  0  10.00  104.86  196.61  0\n";
  const MeasurementFile bare = parse_measurements(
      table, "bare.txt",
      {.nccl_version = "2.17.1", .env = {{"NCCL_ALGO", "Ring"}, {"NCCL_NVLS_ENABLE", "0"}}});
  EXPECT_EQ(bare.nccl_version, "2.17.1");
  EXPECT_EQ(bare.env.at("NCCL_ALGO"), "Ring");
  EXPECT_EQ(bare.rows.at(0).algo_override, "Ring");
  const MeasurementFile proto =
      parse_measurements(table, "bare.txt", {.env = {{"NCCL_PROTO", "Simple"}}});
  EXPECT_EQ(proto.rows.at(0).proto_override, "Simple");
  EXPECT_EQ(proto.rows.at(0).algo_override, std::nullopt);
  EXPECT_EQ(proto.nccl_version, "");

  // What the file says stands; agreeing with it is no error ("2.26" names no patch).
  const std::string said = "NCCL version 2.26.2+cuda12.8\n# env: NCCL_ALGO=Tree\n" + table;
  const MeasurementFile agree = parse_measurements(
      said, "said.txt", {.nccl_version = "2.26", .env = {{"NCCL_ALGO", "Tree"}}});
  EXPECT_EQ(agree.nccl_version, "2.26.2");
  EXPECT_EQ(agree.rows.at(0).algo_override, "Tree");
  const auto error = [&](const std::string& text, const std::string& path, const ReadOptions& o) {
    try {
      parse_measurements(text, path, o);
    } catch (const RequestError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error(said, "said.txt", {.nccl_version = "2.26.3"}),
            "--nccl-version 2.26.3: said.txt says NCCL 2.26.2; give it only for files that "
            "do not say");
  EXPECT_EQ(error(said, "said.txt", {.env = {{"NCCL_ALGO", "Ring"}}}),
            "--env NCCL_ALGO=Ring: said.txt sets NCCL_ALGO=Tree; give it only for variables the "
            "file does not set");
  // collsim's CSV says in its columns what ran.
  const std::string csv =
      "collective,algorithm,protocol,channels,ranks,bytes,count,dtype,time_us,algbw_GBps,"
      "busbw_GBps\nallreduce,ring,simple,16,8,33554432,8388608,f32,182.87,183.49,321.10\n";
  EXPECT_EQ(error(csv, "bench.csv", {.env = {{"NCCL_ALGO", "Ring"}}}),
            "bench.csv: --env is for nccl-tests output; this is collsim's CSV, whose columns say "
            "what ran");
  EXPECT_EQ(error(csv, "bench.csv", {.nccl_version = "2.26"}),
            "bench.csv: --nccl-version is for nccl-tests output; this is collsim's CSV, whose "
            "columns say what ran");
}

// An NCCL_DEBUG=INFO log echoes the variables NCCL read ("NCCL_ALGO set by environment to Ring";
// integer parameters end in '.'): the environment the run had, even where the launch line does
// not show it, and NCCL's word where a curator's "# env:" says otherwise.
TEST(NcclTestsReader, EnvironmentEchoedByNccl) {
  const std::string log =
      "# env: NCCL_PROTO=LL128\n"
      "[1,0]<stderr>:node-0:25:44 [0] NCCL INFO NCCL_ALGO set by environment to Ring\n"
      "node-0:25:44 [0] NCCL INFO NCCL_MIN_NCHANNELS set by environment to 32.\n"
      "node-0:25:44 [0] NCCL INFO NCCL_PROTO set by environment to Simple\n"
      "node-1:26:45 [1] NCCL INFO NCCL_ALGO set by environment to Ring\n"
      "node-0:25:44 [0] NCCL INFO Channel 00/02 :    0   1\n"
      "# Collective test starting: all_reduce_perf\n"
      "  1048576  262144  float  sum  -1  10.00  104.86  196.61  0  10.00  104.86  196.61  0\n";
  const MeasurementFile m = parse_measurements(log, "info.txt");
  EXPECT_EQ(m.env.at("NCCL_ALGO"), "Ring");
  EXPECT_EQ(m.env.at("NCCL_MIN_NCHANNELS"), "32");
  EXPECT_EQ(m.env.at("NCCL_PROTO"), "Simple");
  EXPECT_EQ(m.rows.at(0).algo_override, "Ring");
  EXPECT_EQ(m.rows.at(0).proto_override, "Simple");
  EXPECT_EQ(m.warnings, std::vector<std::string>{"info.txt:4: NCCL says NCCL_PROTO was set to "
                                                 "Simple, where the file's environment says "
                                                 "LL128; taking NCCL's word"});
}

// NCCL's init summary ("24 coll channels, 24 collnet channels, 16 nvls channels, ...") is the
// communicator's channel counts; every rank prints it, and counts that differ (communicators of
// other sizes in one log) are not used.
TEST(NcclTestsReader, ChannelCountsEchoedByNccl) {
  const std::string table =
      "# Collective test starting: all_reduce_perf\n"
      "  1048576  262144  float  sum  -1  10.00  104.86  196.61  0  10.00  104.86  196.61  0\n";
  const std::string v230 =
      "n0:1:2 [0] NCCL INFO 24 coll channels, 24 collnet channels, 16 nvls channels, 32 p2p "
      "channels, 32 p2p channels per peer\n";
  const MeasurementFile m = parse_measurements(v230 + v230 + table, "init.txt");
  EXPECT_EQ(m.coll_channels, 24);
  EXPECT_EQ(m.nvls_channels, 16);
  EXPECT_EQ(m.rows.at(0).algo_override, std::nullopt);
  // 2.9's line has no NVLS; "0 nvls channels" is read (the row model takes NVLS out where the
  // cluster has it, tests/cli/calibrate_cli_test.cpp), the rows are left as they were.
  const MeasurementFile old = parse_measurements(
      "n0:1:2 [0] NCCL INFO 8 coll channels, 16 p2p channels, 2 p2p channels per peer\n" + table,
      "old.txt");
  EXPECT_EQ(old.coll_channels, 8);
  EXPECT_EQ(old.nvls_channels, std::nullopt);
  const MeasurementFile none = parse_measurements(
      "n0:1:2 [0] NCCL INFO 16 coll channels, 0 collnet channels, 0 nvls channels, 16 p2p "
      "channels, 16 p2p channels per peer\n" +
          table,
      "none.txt");
  EXPECT_EQ(none.nvls_channels, 0);
  EXPECT_EQ(none.rows.at(0).algo_override, std::nullopt);
  const MeasurementFile two = parse_measurements(
      v230 +
          "n0:1:2 [0] NCCL INFO 12 coll channels, 12 collnet channels, 16 nvls channels, 32 "
          "p2p channels, 32 p2p channels per peer\n" +
          table,
      "two.txt");
  EXPECT_EQ(two.coll_channels, std::nullopt);
  EXPECT_EQ(two.warnings, std::vector<std::string>{
                              "two.txt:2: NCCL reports 12 coll channels where line 1 reports 24: "
                              "several communicators; the channel counts are NCCL's model's, as "
                              "for a log that reports none"});
}

}  // namespace
}  // namespace collsim
