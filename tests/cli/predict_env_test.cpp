// --env on the predicting commands (docs/cli.md "Model options"): NCCL's environment for the
// prediction, acted on as NCCL acts on it, the variables collsim does not act on said once, and a
// value NCCL would not take one precise line, exit 1.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/run_collsim.hpp"

namespace collsim::test {
namespace {

nlohmann::json predicted(const std::string& args) {
  const CommandResult r = run_collsim("predict " + args + " --format json");
  EXPECT_EQ(r.status, 0) << r.err;
  return r.status == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

TEST(PredictEnv, NcclsVariablesChangeWhatItRuns) {
  const std::string ar = "dgx-h100 --op allreduce --bytes 256M";
  const auto plain = predicted(ar);
  EXPECT_EQ(plain["algorithm"], "nvls");
  EXPECT_EQ(plain["channels"], 16);
  // NVLS off: NCCL's next pick, the ring.
  EXPECT_EQ(predicted(ar + " --env NCCL_NVLS_ENABLE=0")["algorithm"], "ring");
  // NVLS's channels, and NCCL_MIN_CTAS raising them.
  EXPECT_EQ(predicted(ar + " --env NCCL_NVLS_NCHANNELS=32")["channels"], 32);
  EXPECT_EQ(predicted(ar + " --env NCCL_NVLS_NCHANNELS=8 --env NCCL_MIN_CTAS=12")["channels"], 12);
  // The ring's channels within NCCL_MAX_NCHANNELS.
  const auto eight = predicted("dgx-h100 --op allgather --bytes 256M --env NCCL_MAX_NCHANNELS=8");
  EXPECT_EQ(eight["algorithm"], "ring");
  EXPECT_EQ(eight["channels"], 8);
  // CollNet off on SHARP switches takes NVLS across the nodes with it.
  const std::string sharp = "h100-16node-sharp --nodes 4 --op allreduce --bytes 64M";
  EXPECT_EQ(predicted(sharp)["algorithm"], "nvls");
  EXPECT_EQ(predicted(sharp + " --env NCCL_COLLNET_ENABLE=0")["algorithm"], "nvls_tree");
}

TEST(PredictEnv, WhatItDoesNotActOnIsSaidAndBadValuesAreErrors) {
  const CommandResult r = run_collsim(
      "predict dgx-h100 --op allgather --bytes 1M --env NCCL_BUFFSIZE=8388608 "
      "--env NCCL_IB_HCA=mlx5_0 --env NCCL_DEBUG=INFO --env NCCL_IB_QPS_PER_CONNECTION=1");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err,
            "collsim: warning: --env NCCL_BUFFSIZE=8388608: collsim does not model it: predicted "
            "as NCCL runs without it\n"
            "collsim: warning: --env NCCL_IB_HCA=mlx5_0: the cluster's config says what it "
            "selects (its NICs, GPUDirect RDMA, PXN, routing, PCIe peer-to-peer, NVLink domain): "
            "ignored\n");
  const std::pair<std::string, std::string> bad[] = {
      {"NCCL_ALGO=Ring", "give it as --algo, which takes NCCL's lists (ring,tree or ^nvls)"},
      {"NCCL_NVLS_NCHANNELS=0", "expected a positive channel count"},
      {"NCCL_NVLS_CHUNKSIZE=big", "expected a size in bytes, as 131072"},
      {"NCCL_COLLNET_ENABLE=yes", "expected 0 or 1"},
      {"NCCL_MIN_CTAS", "expected VARIABLE=VALUE, as NCCL_ALGO=Ring"}};
  for (const auto& [env, message] : bad) {
    const CommandResult e = run_collsim("predict dgx-h100 --op allreduce --bytes 1M --env " + env);
    EXPECT_EQ(e.status, 1) << env;
    EXPECT_EQ(e.err, "collsim: --env " + env + ": " + message + "\n");
  }
}

TEST(PredictEnv, EveryPredictingCommandTakesIt) {
  for (const std::string cmd :
       {"sweep dgx-h100 --op allreduce -b 1M -e 1M", "compare dgx-h100 --op allreduce -b 1M -e 1M",
        "scale dgx-h100 --op allreduce --bytes 1M --nodes 1",
        "plan dgx-h100 --op allreduce --bytes 1M"}) {
    const CommandResult r = run_collsim(cmd + " --env NCCL_NVLS_ENABLE=0");
    EXPECT_EQ(r.status, 0) << cmd << ": " << r.err;
  }
}

}  // namespace
}  // namespace collsim::test
