// `collsim validate` given what a published log left out (--env, --nccl-version) and reading
// what an NCCL_DEBUG=INFO log prints of its channels, end to end through the binary.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "tests/cli/run_collsim.hpp"

namespace collsim {
namespace {

using test::predicted_us;
using test::run_collsim;

const std::string kData = COLLSIM_SOURCE_DIR "/tests/data/nccl-tests/";

TEST(ValidateCli, AnInfoLogsChannelCountsAreWhatRan) {
  // A 1 GiB AllReduce on 8 H100 whose NCCL_DEBUG=INFO output says the communicator had 8
  // channels and no NVLS (NVLS not set up): a ring of 8 channels is simulated, where the same
  // table without that line is NCCL's NVLS pick on its 16 channels.
  const std::string table =
      "# nThread 1 nGpus 1 minBytes 1073741824 maxBytes 1073741824 step: 2(factor) warmup iters: "
      "5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
      "# Collective test starting: all_reduce_perf\n"
      "  1073741824  268435456  float  sum  -1  5000.00  214.75  375.81  0  5000.00  214.75  "
      "375.81  0\n";
  const std::string with_init = ::testing::TempDir() + "init-8-channels.txt";
  const std::string without = ::testing::TempDir() + "no-init-line.txt";
  std::ofstream(with_init) << "n0:1:2 [0] NCCL INFO 8 coll channels, 0 collnet channels, 0 nvls "
                              "channels, 16 p2p channels, 16 p2p channels per peer\n"
                           << table;
  std::ofstream(without) << table;
  const auto logged = run_collsim("validate dgx-h100 --format json --measurements " + with_init);
  const auto modelled = run_collsim("validate dgx-h100 --format json --measurements " + without);
  ASSERT_EQ(logged.status, 0) << logged.err;
  ASSERT_EQ(modelled.status, 0) << modelled.err;
  const auto row = [](const std::string& out) {
    return nlohmann::json::parse(out).at("rows").at(0);
  };
  EXPECT_EQ(row(logged.out).at("algorithm"), "ring");
  EXPECT_EQ(row(logged.out).at("channels"), 8);
  EXPECT_EQ(row(logged.out).at("selection"), "NCCL's choice (0 nvls channels)");
  EXPECT_EQ(row(modelled.out).at("algorithm"), "nvls");
  EXPECT_EQ(row(modelled.out).at("channels"), 16);
  EXPECT_EQ(row(modelled.out).at("selection"), "NCCL's choice");
  // On A100, which has no NVLS, the same line changes nothing but the channels.
  const auto a100 = run_collsim("validate dgx-a100 --format json --measurements " + with_init);
  ASSERT_EQ(a100.status, 0) << a100.err;
  EXPECT_EQ(row(a100.out).at("selection"), "NCCL's choice");
  EXPECT_EQ(row(a100.out).at("channels"), 8);
}

// A log whose device lines name another GPU than the cluster's is still predicted, on the
// cluster's GPUs, and stderr says so: an 8x A100 table against dgx-h100, then against dgx-a100.
TEST(ValidateCli, ALogOfOtherGpusIsSaid) {
  const std::string file = kData + "a100x8_1node_allreduce_oci-bm-gpu4.8_ocitutorials.txt";
  const auto other =
      run_collsim("validate dgx-h100 --default-costs --max-bytes 64 --measurements " + file);
  ASSERT_EQ(other.status, 0) << other.err;
  EXPECT_NE(other.err.find("collsim: warning: " + file +
                           ": its devices are \"NVIDIA A100-SXM4-40GB\" (A100-SXM in collsim's "
                           "catalogue), dgx-h100's GPUs are H100-SXM: its rows are predicted on "
                           "dgx-h100\n"),
            std::string::npos)
      << other.err;
  const auto same =
      run_collsim("validate dgx-a100 --default-costs --max-bytes 64 --measurements " + file);
  ASSERT_EQ(same.status, 0) << same.err;
  EXPECT_EQ(same.err.find("its devices are"), std::string::npos) << same.err;
}

TEST(ValidateCli, RegisteredBuffersAreSaid) {
  // waynehacking8's 4 H100s with nccl-tests -R 2: NCCL's symmetric kernels, which collsim does
  // not model (the same run with -R 0 says nothing).
  const std::string sym = kData + "h100x4_1node_allreduce_small-msg_reg2_graph0_waynehacking8.txt";
  const auto r2 =
      run_collsim("validate dgx-h100 --default-costs --max-bytes 64 --measurements " + sym);
  ASSERT_EQ(r2.status, 0) << r2.err;
  EXPECT_NE(r2.err.find("collsim: warning: " + sym +
                        ": the run registered its buffers as symmetric memory (-R 2), with which "
                        "NCCL (2.27 and later) runs its symmetric kernels where they are faster; "
                        "collsim does not model them: its rows are predicted as NCCL runs "
                        "unregistered buffers\n"),
            std::string::npos)
      << r2.err;
  const auto r0 =
      run_collsim("validate dgx-h100 --default-costs --max-bytes 64 --measurements " + kData +
                  "h100x4_1node_allreduce_small-msg_reg0_graph0_waynehacking8.txt");
  ASSERT_EQ(r0.status, 0) << r0.err;
  EXPECT_EQ(r0.err.find("registered"), std::string::npos) << r0.err;
}

// A run whose two times of one row (out of place, in place) disagree says so on that row and
// once for the file; JSON and CSV carry the in-place time. Dell's 2-node table: its 256 B row
// took 94.40 us out of place and 25.90 us in place, its 16 B row 24.96 and 24.93.
TEST(ValidateCli, ARowTheRunMeasuredTwoWaysApartIsSaid) {
  const std::string file =
      kData + "h100x16_2node_allreduce_dell-xe9680-ib-8x400G-nvls_nccl-tests-issue309.txt";
  const std::string args = "validate h100-2node-ib --default-costs --max-bytes 1K --measurements ";
  const auto table = run_collsim(args + file);
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.out.find("NCCL's choice  (in place 25.90: 264.5% apart)\n"), std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("h100x16_2node_allreduce_dell-xe9680-ib-8x400G-nvls_nccl-tests-"
                           "issue309.txt: 4 of 8 rows measured more than 10% apart out of place "
                           "and in place (lines 14, 19, 20, 21)\n"),
            std::string::npos)
      << table.out;
  // The statistics still count every row, as measured out of place.
  EXPECT_TRUE(std::regex_search(table.out, std::regex("\noverall +8 rows  median"))) << table.out;
  const auto json = run_collsim(args + file + " --format json");
  ASSERT_EQ(json.status, 0) << json.err;
  const nlohmann::json rows = nlohmann::json::parse(json.out).at("rows");
  ASSERT_EQ(rows.size(), 8u);
  EXPECT_EQ(rows.at(1).at("measured_us"), 24.96);
  EXPECT_EQ(rows.at(1).at("inplace_us"), 24.93);
  EXPECT_EQ(rows.at(5).at("inplace_us"), 25.90);
  const auto csv = run_collsim(args + file + " --format csv");
  ASSERT_EQ(csv.status, 0) << csv.err;
  EXPECT_NE(csv.out.find(",measured_us,error_pct,file,line,inplace_us\n"), std::string::npos)
      << csv.out;
  EXPECT_NE(csv.out.find(",94.4,"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find(file + ",19,25.9\n"), std::string::npos) << csv.out;
  // A file without in-place times (collsim's own CSV) has none to say.
  const std::string own = ::testing::TempDir() + "own.csv";
  {
    std::ofstream out(own);
    out << run_collsim("sweep dgx-h100 --op allreduce -b 8 -e 64 --format csv").out;
  }
  const auto mine = run_collsim("validate dgx-h100 --format json --measurements " + own);
  ASSERT_EQ(mine.status, 0) << mine.err;
  EXPECT_TRUE(nlohmann::json::parse(mine.out).at("rows").at(0).at("inplace_us").is_null());
}

TEST(ValidateCli, EnvAndVersionStandInForWhatTheLogDidNotPrint) {
  // The forced-Ring table with its environment ("# env:", mpirun's -x) left out: NCCL's own
  // choice and channels are simulated, unless --env says what the log would have.
  const std::string table =
      kData +
      "h100x16_2node_allreduce_ib-400G_NCCL_ALGO-Ring_MIN_CTAS24-QPS2_nccl-tests-issue309-"
      "gjaion.txt";
  std::ifstream in(table);
  const std::string path = ::testing::TempDir() + "no-env.txt";
  std::ofstream out(path);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# env:", 0) == 0) continue;
    const std::size_t x = line.find(" -x LD_LIBRARY_PATH");
    if (line.rfind("# command:", 0) == 0) line = "# command: mpirun -np 16 -N 8" + line.substr(x);
    const std::size_t program = line.find(" ./build/all_reduce_perf");
    if (x != std::string::npos) line = line.substr(0, line.find(" -x")) + line.substr(program);
    out << line << "\n";
  }
  out.close();
  const std::string args = " --default-costs --format json";
  const auto said = run_collsim("validate h100-2node-ib --measurements " + table + args);
  const auto given = run_collsim("validate h100-2node-ib --measurements " + path + args +
                                 " --env NCCL_ALGO=Ring --env NCCL_MIN_CTAS=24 "
                                 "--env NCCL_IB_QPS_PER_CONNECTION=2");
  const auto unsaid = run_collsim("validate h100-2node-ib --measurements " + path + args);
  ASSERT_EQ(said.status, 0) << said.err;
  ASSERT_EQ(given.status, 0) << given.err;
  ASSERT_EQ(unsaid.status, 0) << unsaid.err;
  EXPECT_EQ(predicted_us(given.out), predicted_us(said.out));
  // Queue pairs are not modelled: said once, with the value the run had.
  const std::string qps =
      "collsim: warning: " + path +
      ": the run set NCCL_IB_QPS_PER_CONNECTION=2, which collsim does not model: its rows are "
      "predicted as NCCL runs without it\n";
  EXPECT_NE(given.err.find(qps), std::string::npos) << given.err;
  EXPECT_EQ(unsaid.err.find("does not model"), std::string::npos) << unsaid.err;
  EXPECT_NE(predicted_us(unsaid.out), predicted_us(said.out));
  EXPECT_NE(said.out.find("\"selection\": \"forced ALGO=Ring\""), std::string::npos);
  EXPECT_EQ(unsaid.out.find("forced ALGO=Ring"), std::string::npos);
  // The log prints no NCCL release ("# nccl: not printed"): collsim's newest is assumed, unless
  // --nccl-version names the one that ran (2.26 divides the vector among channels otherwise).
  const auto older =
      run_collsim("validate h100-2node-ib --measurements " + table + args + " --nccl-version 2.26");
  ASSERT_EQ(older.status, 0) << older.err;
  EXPECT_NE(predicted_us(older.out), predicted_us(said.out));

  const auto clash =
      run_collsim("validate h100-2node-ib --measurements " + table + " --env NCCL_ALGO=Tree");
  EXPECT_EQ(clash.status, 1);
  EXPECT_EQ(clash.err, "collsim: --env NCCL_ALGO=Tree: " + table +
                           " sets NCCL_ALGO=Ring; give it only for variables the file does not "
                           "set\n");
  const auto malformed =
      run_collsim("validate h100-2node-ib --measurements " + path + " --env NCCL_ALGO");
  EXPECT_EQ(malformed.status, 1);
  EXPECT_EQ(malformed.err,
            "collsim: --env NCCL_ALGO: expected VARIABLE=VALUE, as NCCL_ALGO=Ring\n");
  // The variables collsim acts on must hold what NCCL would take.
  const std::vector<std::pair<std::string, std::string>> bad_values = {
      {"NCCL_PROTO=bogus", "unknown protocol \"bogus\": expected one of ll, ll128, simple"},
      {"NCCL_ALGO=", "expected a list such as Ring or ^Tree"},
      {"NCCL_MIN_CTAS=0", "expected a positive channel count"},
      {"NCCL_MAX_NCHANNELS=8x", "expected a positive channel count"},
      {"NCCL_NVLS_ENABLE=yes", "expected 0 or 1"},
      {"NCCL_COLLNET_ENABLE=2", "expected 0 or 1"},
      {"NCCL_NVLS_NCHANNELS=0", "expected a positive channel count"},
      {"NCCL_NVLS_CHUNKSIZE=big", "expected a size in bytes, as 131072"},
      {"NCCL_NVLSTREE_MAX_CHUNKSIZE=-1",
       "expected a size in bytes, as 65536, or -2 (NCCL's default)"}};
  for (const auto& [env, message] : bad_values) {
    const auto bad = run_collsim("validate h100-2node-ib --measurements " + path + " --env " + env);
    EXPECT_EQ(bad.status, 1) << env;
    EXPECT_EQ(bad.err, "collsim: --env " + env + ": " + message + "\n");
  }
  const auto unknown =
      run_collsim("validate h100-2node-ib --measurements " + path + " --nccl-version 2.99");
  EXPECT_EQ(unknown.status, 1);
  EXPECT_EQ(unknown.err.rfind("collsim: --nccl-version: unknown NCCL version \"2.99\"", 0), 0u)
      << unknown.err;
}

}  // namespace
}  // namespace collsim
