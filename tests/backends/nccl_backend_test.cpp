// The NCCL backends on real GPUs (CTest label `gpu`). NCCL runs one rank per GPU, so on a
// one-GPU machine the schedules are 1-rank ones (NCCL's calls still run end to end) and the
// multi-rank tests are reported as skipped, saying how many GPUs they need.
//
// What it shows: NCCL's own collectives (`nccl-native`) compute what the verifier expects for
// every collective, data type and reduce op; multi-rank schedules measure like nccl-tests. That
// the schedules of every algorithm run through ncclSend / ncclRecv to the CPU backend's bytes is
// the backend contract's to show (contract_test.cpp, built into this binary too).
#include "backends/nccl/nccl_backend.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>

#include "algorithms/generators/registry.hpp"
#include "backends/bench.hpp"
#include "backends/verifier.hpp"
#include "topology/error.hpp"

namespace collsim {
namespace {

std::unique_ptr<NcclBackend> open_nccl(NcclBackend::Mode mode, std::string* why) {
  try {
    return std::make_unique<NcclBackend>(mode);
  } catch (const BackendError& e) {
    *why = e.what();
    return nullptr;
  }
}

Request request(Collective c, int ranks, DataType t, ReduceOp op, const std::string& algo) {
  Request r;
  r.algorithm = algo;
  r.collective = c;
  r.dtype = t;
  r.redop = op;
  r.channels = 2;
  r.comm = Communicator::flat(ranks);
  r.root = has_root(c) ? ranks - 1 : 0;
  r.count = is_blocked(c) ? 4099 : 100003;
  return r;
}

std::uint64_t wrong_after_run(Backend& b, const Schedule& s) {
  HostBuffers buf = make_inputs(s, 5);
  b.run(s, buf);
  std::uint64_t wrong = 0;
  for (int r = 0; r < s.rank_count(); ++r) wrong += count_wrong(s, 5, r, buf.output[r]).wrong;
  return wrong;
}

TEST(NcclNative, EveryCollectiveDataTypeAndReduceOp) {
  std::string why;
  const auto nccl = open_nccl(NcclBackend::Mode::kNative, &why);
  if (!nccl) GTEST_SKIP() << "needs a GPU: " << why;
  const int ranks = nccl->preferred_ranks();
  for (Collective c : all_collectives()) {
    for (DataType t : all_data_types()) {
      for (ReduceOp op : all_reduce_ops()) {
        if (!is_reduction(c) && op != ReduceOp::kSum) continue;
        // NCCL's avg is for floating types and integers alike; prod on bf16 too (2.10+).
        const Schedule s = plan(request(c, ranks, t, op, "ring"));
        EXPECT_EQ(wrong_after_run(*nccl, s), 0u)
            << to_string(c) << " " << to_string(t) << " " << to_string(op);
      }
    }
  }
}

TEST(NcclSchedule, MultiRankRingAndTreeNeedTwoGpus) {
  std::string why;
  const auto nccl = open_nccl(NcclBackend::Mode::kSchedule, &why);
  if (!nccl) GTEST_SKIP() << "needs a GPU: " << why;
  if (nccl->preferred_ranks() < 2) {
    GTEST_SKIP() << "needs 2 GPUs (NCCL runs one rank per GPU), found " << nccl->preferred_ranks();
  }
  for (const char* algo : {"ring", "dbtree", "direct"}) {
    const Schedule s = plan(request(Collective::kAllReduce, nccl->preferred_ranks(), DataType::kF32,
                                    ReduceOp::kSum, algo));
    const BenchSample m = measure(*nccl, s, {.warmup = 1, .iters = 3});
    EXPECT_EQ(m.wrong, 0u) << algo << ": " << m.wrong_detail;
  }
}

TEST(NcclSchedule, RanksOtherThanTheGpuCountAreRefused) {
  std::string why;
  const auto nccl = open_nccl(NcclBackend::Mode::kSchedule, &why);
  if (!nccl) GTEST_SKIP() << "needs a GPU: " << why;
  const int gpus = nccl->preferred_ranks();
  const Schedule s =
      plan(request(Collective::kAllReduce, gpus + 1, DataType::kF32, ReduceOp::kSum, "ring"));
  try {
    nccl->local_ranks(s);
    ADD_FAILURE() << "no error";
  } catch (const BackendError& e) {
    EXPECT_EQ(std::string(e.what()),
              fmt::format("nccl backend: the schedule has {} ranks but NCCL runs {} here (one per "
                          "visible GPU); ask for --ranks {}, or use the cuda backend, which "
                          "places several ranks on a GPU",
                          gpus + 1, gpus, gpus));
  }
}

}  // namespace
}  // namespace collsim
