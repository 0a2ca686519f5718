// The contract: every (algorithm, collective) pair `collsim list` shows, over rank counts
// {1, 2, 3, 4, 5, 7, 8, 16, 17, 32}, sizes {1, 7, 1000, 1 MiB + 3 elements} and channel counts
// {1, 3}, plans a schedule that validates and that the CPU backend executes to exactly the
// right result (verifier.hpp states the float tolerance). Sizes are element counts of the whole
// vector; for the blocked collectives (count per rank) each rank's block is ceil(size / ranks).
// Each case cycles through data types, reduce ops and protocols so that the matrix covers them
// all; dtype_matrix_test.cpp covers every dtype x op exhaustively at smaller sizes.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "algorithms/generators/registry.hpp"
#include "backends/cpu_backend.hpp"
#include "backends/verifier.hpp"

namespace collsim {
namespace {

struct Pair {
  std::string algorithm;
  Collective collective;
};

std::vector<Pair> all_pairs() {
  std::vector<Pair> v;
  for (const AlgorithmInfo& a : algorithms()) {
    for (Collective c : a.collectives) v.push_back({a.name, c});
  }
  return v;
}

// Ranks per node for a p-rank test layout: 4 or 2 when they divide p (so 8 = 2 x 4,
// 17 = 17 x 1), which gives the topology-aware algorithms single- and multi-node cases.
Communicator layout(int p) {
  const int g = p % 4 == 0 ? 4 : (p % 2 == 0 ? 2 : 1);
  return Communicator::grid(p / g, g);
}

struct Flavor {
  DataType dtype;
  ReduceOp op;
};
const Flavor kFlavors[] = {{DataType::kF32, ReduceOp::kSum},  {DataType::kI32, ReduceOp::kProd},
                           {DataType::kBf16, ReduceOp::kAvg}, {DataType::kF64, ReduceOp::kMin},
                           {DataType::kU8, ReduceOp::kMax},   {DataType::kF16, ReduceOp::kSum},
                           {DataType::kI64, ReduceOp::kAvg}};

class Contract : public testing::TestWithParam<Pair> {};

TEST_P(Contract, ValidatesAndComputesTheCollective) {
  const Pair& pair = GetParam();
  CpuBackend cpu;
  const int ranks[] = {1, 2, 3, 4, 5, 7, 8, 16, 17, 32};
  int case_index = 0;
  for (int p : ranks) {
    for (int size_index = 0; size_index < 4; ++size_index) {
      for (int channels : {1, 3}) {
        const Flavor f = kFlavors[case_index % 7];
        Request r;
        r.algorithm = pair.algorithm;
        r.collective = pair.collective;
        r.dtype = f.dtype;
        r.redop = f.op;
        r.protocol = all_protocols()[(case_index / 2) % 3];
        r.channels = channels;
        r.comm = layout(p);
        r.root = has_root(r.collective) ? (case_index * 7) % p : 0;
        const std::uint64_t sizes[] = {1, 7, 1000, (1u << 20) / element_size(f.dtype) + 3};
        const std::uint64_t e = sizes[size_index];
        r.count = is_blocked(r.collective) ? (e + p - 1) / p : e;
        ++case_index;
        const std::string what =
            fmt::format("{} {} ranks {} count {} channels {} {} {} {}", pair.algorithm,
                        to_string(pair.collective), p, r.count, channels, to_string(r.dtype),
                        to_string(r.redop), to_string(r.protocol));
        SCOPED_TRACE(what);
        Schedule s = plan(r);
        const VerifyResult v = verify(cpu, s, static_cast<std::uint64_t>(case_index));
        ASSERT_TRUE(v.ok) << v.message;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllPairs, Contract, testing::ValuesIn(all_pairs()),
                         [](const testing::TestParamInfo<Pair>& p) {
                           return p.param.algorithm + "_" +
                                  std::string(to_string(p.param.collective));
                         });

}  // namespace
}  // namespace collsim
