// `--model nccl` and `--select nccl` through the command line: the four estimates NCCL 2.22.3
// logged in NVIDIA/nccl#1453 and the single-node HEAD figures of docs/nccl-model.md §1.10.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/cli/run_collsim.hpp"

namespace collsim::test {
namespace {

const std::string kIssue1453 =
    std::string(COLLSIM_SOURCE_DIR) + "/tests/data/configs/h100-3node-8x200g.yaml";

// #1453: 3 nodes x 8 H100, 8 NICs of 200 Gb/s per node. NCCL's graphs there: ring and tree
// 8 channels x 24 GB/s, the tree fallen back to pattern TREE. NCCL printed
// "<bytes> -> Algo a proto p time t"; required: within 0.01 %.
struct Logged {
  std::uint64_t bytes;
  std::string algo, proto;
  double time_us;
};
const Logged kLog[] = {
    {64, "dbtree", "ll", 25.207382},
    {65536, "dbtree", "ll", 37.798233},
    {131072, "dbtree", "ll128", 51.603912},
    {8589934592ull, "ring", "simple", 86069.968750},
};

TEST(NcclModelCli, PredictReproducesIssue1453) {
  for (const Logged& l : kLog) {
    const CommandResult r =
        run_collsim("predict " + kIssue1453 + " --op allreduce --bytes " + std::to_string(l.bytes) +
                    " --model nccl --nccl-version 2.22 --nccl-graph ring=8x24,tree=8x24 "
                    "--nccl-tree-pattern tree --nccl-cpu intel --format json");
    ASSERT_EQ(r.status, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["algorithm"], l.algo) << l.bytes;
    EXPECT_EQ(j["protocol"], l.proto) << l.bytes;
    EXPECT_NEAR(j["time_us"].get<double>(), l.time_us, 1e-4 * l.time_us) << l.bytes;
  }
}

// The same through a sweep (64 B x 2^k reaches all four sizes), with the graphs collsim
// estimates from the config's links (one channel per NIC at 24 GB/s) and with
// --select nccl, which under --model nccl is the same arg-min.
TEST(NcclModelCli, SweepReproducesIssue1453) {
  for (const std::string select : {"best", "nccl"}) {
    const CommandResult r = run_collsim("sweep " + kIssue1453 +
                                        " --op allreduce -b 64 -e 8G --model nccl "
                                        "--nccl-version 2.22 --nccl-tree-pattern tree --select " +
                                        select + " --format json");
    ASSERT_EQ(r.status, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["rows"].size(), 28u);
    for (const Logged& l : kLog) {
      bool found = false;
      for (const auto& row : j["rows"]) {
        if (row["bytes"].get<std::uint64_t>() != l.bytes) continue;
        found = true;
        EXPECT_EQ(row["algorithm"], l.algo) << l.bytes;
        EXPECT_EQ(row["protocol"], l.proto) << l.bytes;
        EXPECT_NEAR(row["time_us"].get<double>(), l.time_us, 1e-4 * l.time_us) << l.bytes;
      }
      EXPECT_TRUE(found) << l.bytes;
    }
  }
}

double nccl_time(const std::string& op, const std::string& algo, const std::string& proto,
                 const std::string& bytes) {
  const CommandResult r =
      run_collsim("predict dgx-h100 --op " + op + " --bytes " + bytes + " --algo " + algo +
                  " --proto " + proto + " --model nccl --format json");
  EXPECT_EQ(r.status, 0) << r.err;
  return nlohmann::json::parse(r.out)["time_us"].get<double>();
}

// docs/nccl-model.md §1.10, DGX-H100 with NCCL 2.30 constants: latency (us) from a 0-cost size and
// algorithm bandwidth (GB/s) from the slope between 1 GiB and 2 GiB; one decimal as printed there.
TEST(NcclModelCli, SingleNodeHeadFigures) {
  struct Row {
    std::string op, algo, proto;
    double lat, bw;
  };
  const Row kRows[] = {
      {"allreduce", "ring", "ll", 15.0, 80.6},      {"allreduce", "ring", "ll128", 40.6, 189.3},
      {"allreduce", "ring", "simple", 56.0, 205.7}, {"allreduce", "nvls", "simple", 25.0, 272.0},
      {"allgather", "ring", "ll", 10.8, 161.1},     {"allgather", "ring", "simple", 32.2, 411.4},
      {"broadcast", "ring", "ll", 7.2, 141.0},
  };
  for (const Row& r : kRows) {
    const double t1 = nccl_time(r.op, r.algo, r.proto, "1G");
    const double t2 = nccl_time(r.op, r.algo, r.proto, "2G");
    const double bw = 1073741824.0 / (1000 * (t2 - t1));
    EXPECT_NEAR(bw, r.bw, 0.06) << r.op << " " << r.algo << "/" << r.proto;
    EXPECT_NEAR(t1 - 1073741824.0 / (1000 * bw), r.lat, 0.06) << r.op << " " << r.algo;
  }
}

TEST(NcclModelCli, SelectNcclNamesWhatNcclWouldPick) {
  // Under the simulator, NVLS runs as NCCL picks it: no stand-in, no note.
  CommandResult r = run_collsim("predict dgx-h100 --op allreduce --bytes 64M --select nccl");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("algorithm   nvls, protocol simple (auto: NCCL picks NVLS/Simple)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("note        "), std::string::npos) << r.out;
  r = run_collsim(
      "predict dgx-h100 --op allreduce --bytes 64M --select nccl --model nccl "
      "--format json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["algorithm"], "nvls");
  EXPECT_EQ(j["nccl_pick"], "NVLS/Simple");
  // NCCL_ALGO syntax: without NVLS, NCCL's model picks Ring.
  r = run_collsim(
      "predict dgx-h100 --op allreduce --bytes 64M --select nccl --model nccl "
      "--algo ^nvls --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["algorithm"], "ring");
}

TEST(NcclModelCli, PatRunsAsNcclPicksIt) {
  // One GPU per node: NCCL 2.30 picks PAT for a 1 MiB AllGather on 64 nodes, and the simulator
  // runs it (no stand-in, no note).
  const CommandResult r = run_collsim("predict " COLLSIM_SOURCE_DIR
                                      "/bench/flat-switch.yaml --nodes 64 --op allgather "
                                      "--bytes 1M");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("algorithm   pat, protocol simple (auto: NCCL picks PAT/Simple)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("note        "), std::string::npos) << r.out;
  // With 8 GPUs a node NCCL does not run PAT, faster or not.
  const CommandResult one = run_collsim(
      "predict dgx-h100 --op allgather --bytes 1M --algo ring,pat --proto simple");
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_NE(one.out.find("NCCL does not run PAT/Simple on this cluster"), std::string::npos)
      << one.out;
}

}  // namespace
}  // namespace collsim::test
