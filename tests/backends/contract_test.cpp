// The contract, for every backend of the registry: every (algorithm, collective) pair `collsim
// list` shows, over rank counts {1, 2, 3, 4, 5, 7, 8, 16, 17, 32} (and the backend's preferred
// count), sizes {1, 7, 1000, 1 MiB + 3 elements} and channel counts {1, 3}, plans a schedule
// that validates and that the backend executes to exactly the right result: the CPU backend's
// output passes the verifier (verifier.hpp states the float tolerance), and every other backend
// produces the CPU backend's bytes (same schedule, same reduction order, same rounding). Sizes
// are element counts of the whole vector; for the blocked collectives (count per rank) each
// rank's block is ceil(size / ranks). Each case cycles through data types, reduce ops and
// protocols so that the matrix covers them all; cpu_backend_test.cpp covers every dtype x op
// exhaustively at smaller sizes.
//
// This file is built into one test binary per kind of machine a backend needs (CMake sets
// COLLSIM_CONTRACT_NEEDS to a registry.hpp BackendNeeds): backends_test runs the backends that
// need nothing, and lists those this build lacks as skipped; gpu_backends_test (CTest label
// `gpu`) the GPU backends; mpi_backend_test (CTest starts it with mpirun) the MPI backend. A
// backend that cannot run where its binary runs (not built, no GPU, no MPI launcher) or that
// moves no data is skipped, saying why; so is a rank count it cannot run (MPI and NCCL run one
// rank per process or GPU).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <ostream>
#include <tuple>

#include "algorithms/generators/registry.hpp"
#include "backends/cpu_backend.hpp"
#include "backends/registry.hpp"
#include "backends/verifier.hpp"
#include "topology/error.hpp"

#ifndef COLLSIM_CONTRACT_NEEDS
#define COLLSIM_CONTRACT_NEEDS kNothing
#endif

namespace collsim {
namespace {

constexpr BackendNeeds kThisBinary = BackendNeeds::COLLSIM_CONTRACT_NEEDS;

// The registry's backends this binary runs: those built that need this binary's machine; the
// binary for plain machines also takes every backend not built, to show it skipped.
// The backends that run a schedule's ops and are this binary's to check. Two run none: dry-run
// walks the schedule without data, and nccl-native runs NCCL's own collective for the request
// (nccl_backend_test.cpp's NcclNative tests check its results).
std::vector<std::string> backends_here() {
  std::vector<std::string> v;
  for (const std::string& name : backend_names()) {
    if (name == "dry-run" || name == "nccl-native") continue;
    if (backend_built(name) ? backend_needs(name) == kThisBinary
                            : kThisBinary == BackendNeeds::kNothing) {
      v.push_back(name);
    }
  }
  return v;
}

struct Pair {
  std::string algorithm;
  Collective collective;
};

// How gtest shows a parameter (in CTest's test names too): "ring allreduce".
void PrintTo(const Pair& p, std::ostream* os) {
  *os << p.algorithm << " " << to_string(p.collective);
}

std::vector<Pair> all_pairs() {
  std::vector<Pair> v;
  for (const AlgorithmInfo& a : algorithms()) {
    for (Collective c : a.collectives) v.push_back({a.name, c});
  }
  return v;
}

// A backend opened once for the whole program (MPI cannot start twice, NCCL's communicators
// are slow to make), or why it cannot be.
struct Opened {
  std::unique_ptr<Backend> backend;
  std::string why_not;
};

Opened open_backend(const std::string& name) {
  if (backend_built(name) && backend_needs(name) == BackendNeeds::kMpiLauncher &&
      !launched_by_mpi()) {
    return {nullptr, "needs an MPI launcher: mpirun -np 4 mpi_backend_test"};
  }
  try {
    return {make_backend(name), ""};
  } catch (const BackendError& e) {
    return {nullptr, e.what()};
  }
}

Opened& opened(const std::string& name) {
  static std::map<std::string, Opened> cache;
  auto it = cache.find(name);
  if (it == cache.end()) it = cache.emplace(name, open_backend(name)).first;
  return it->second;
}

// Ranks per node for a p-rank test layout: 4 or 2 when they divide p (so 8 = 2 x 4,
// 17 = 17 x 1), which gives the topology-aware algorithms single- and multi-node cases
// (single-node algorithms get one node of p ranks instead).
Communicator layout(int p) {
  const int g = p % 4 == 0 ? 4 : (p % 2 == 0 ? 2 : 1);
  return Communicator::grid(p / g, g);
}

std::vector<int> rank_counts(const Backend& b) {
  std::vector<int> v = {1, 2, 3, 4, 5, 7, 8, 16, 17, 32};
  if (b.preferred_ranks() > 0 && std::find(v.begin(), v.end(), b.preferred_ranks()) == v.end()) {
    v.push_back(b.preferred_ranks());
  }
  return v;
}

// "" when `b` runs p-rank schedules here, else why not.
std::string refuses(const Backend& b, int p) {
  Request r;
  r.count = 1;
  r.comm = Communicator::flat(p);
  try {
    b.local_ranks(plan(r));
    return "";
  } catch (const BackendError& e) {
    return e.what();
  }
}

struct Flavor {
  DataType dtype;
  ReduceOp op;
};
const Flavor kFlavors[] = {{DataType::kF32, ReduceOp::kSum},  {DataType::kI32, ReduceOp::kProd},
                           {DataType::kBf16, ReduceOp::kAvg}, {DataType::kF64, ReduceOp::kMin},
                           {DataType::kU8, ReduceOp::kMax},   {DataType::kF16, ReduceOp::kSum},
                           {DataType::kI64, ReduceOp::kAvg},  {DataType::kF8E4M3, ReduceOp::kSum},
                           {DataType::kI8, ReduceOp::kProd},  {DataType::kF8E5M2, ReduceOp::kAvg},
                           {DataType::kU32, ReduceOp::kMin},  {DataType::kU64, ReduceOp::kSum}};

// Case `index` of `pair` on p ranks: the flavor, protocol and root cycle with it.
Request request(const Pair& pair, int p, int size_index, int channels, int index) {
  const Flavor f = kFlavors[static_cast<std::size_t>(index) % std::size(kFlavors)];
  Request r;
  r.algorithm = pair.algorithm;
  r.collective = pair.collective;
  r.dtype = f.dtype;
  r.redop = f.op;
  const std::vector<Protocol>& protocols = find_algorithm(pair.algorithm).protocols;
  r.protocol = protocols[static_cast<std::size_t>(index / 2) % protocols.size()];
  r.channels = channels;
  // Every algorithm on the test layout, NVLS across nodes too (with SHARP between them).
  r.comm = layout(p);
  r.root = has_root(r.collective) ? (index * 7) % p : 0;
  const std::uint64_t sizes[] = {1, 7, 1000, (1u << 20) / element_size(f.dtype) + 3};
  const std::uint64_t e = sizes[size_index];
  r.count = is_blocked(r.collective) ? (e + p - 1) / p : e;
  return r;
}

// "" when the CPU backend's output passes the verifier and `b` (if another backend) reproduces
// it byte for byte. A backend of several processes runs its own ranks in each; the verdict is
// agreed over all of them, so that they all go on (or stop) together.
std::string check(Backend& b, const Schedule& s, std::uint64_t seed) {
  HostBuffers cpu = make_inputs(s, seed);
  CpuBackend().run(s, cpu);
  std::string why = compare_outputs(s, cpu, cpu);
  if (why.empty() && b.name() != "cpu") {
    const std::vector<int> mine = b.local_ranks(s);
    HostBuffers buf = HostBuffers::for_ranks(s, mine);
    for (int r : mine) buf.input[r] = cpu.input[r];
    b.run(s, buf);
    for (int r : mine) {
      if (why.empty() && buf.output[r] != cpu.output[r]) {
        why = fmt::format("rank {}: output differs from the CPU backend's", r);
      }
    }
  }
  const std::uint64_t failed = b.processes().sum(why.empty() ? 0 : 1);
  if (why.empty() && failed > 0) why = fmt::format("{} other process(es) failed", failed);
  return why;
}

class Contract : public testing::TestWithParam<std::tuple<std::string, Pair>> {};

TEST_P(Contract, ValidatesAndComputesTheCollective) {
  const auto& [name, pair] = GetParam();
  Opened& o = opened(name);
  if (!o.backend) GTEST_SKIP() << name << ": " << o.why_not;
  Backend& b = *o.backend;
  const Schedule probe = plan(request(pair, 2, 0, 1, 0));
  if (probe.actor_count() > probe.rank_count() && !b.runs_switch_actors()) {
    // A backend without switch actors must refuse the schedule and say why (the cpu backend
    // checks what such a pair computes).
    for (int p : rank_counts(b)) {
      if (!refuses(b, p).empty()) continue;
      const Schedule s = plan(request(pair, p, 0, 1, 0));
      HostBuffers buf = HostBuffers::for_ranks(s, b.local_ranks(s));
      try {
        b.run(s, buf);
        ADD_FAILURE() << name << " ran " << pair.algorithm << ", whose switch computes";
      } catch (const BackendError& e) {
        EXPECT_NE(std::string(e.what()).find("(switch actors)"), std::string::npos) << e.what();
      }
      return;
    }
    GTEST_SKIP() << name << " runs none of the rank counts here";
  }
  int index = 0;
  int ran = 0;
  std::string refused;
  for (int p : rank_counts(b)) {
    const std::string why = refuses(b, p);
    if (!why.empty()) refused = why;
    for (int size_index = 0; size_index < 4; ++size_index) {
      for (int channels : {1, 3}) {
        const int case_index = index++;  // counted for every backend alike, so cases agree
        if (!why.empty()) continue;
        const Request r = request(pair, p, size_index, channels, case_index);
        SCOPED_TRACE(fmt::format("{} {} {} ranks {} count {} channels {} {} {} {}", name,
                                 pair.algorithm, to_string(pair.collective), p, r.count, r.channels,
                                 to_string(r.dtype), to_string(r.redop), to_string(r.protocol)));
        ASSERT_EQ(check(b, plan(r), static_cast<std::uint64_t>(case_index + 1)), "");
        ++ran;
      }
    }
  }
  if (ran == 0) GTEST_SKIP() << name << " runs none of the rank counts here: " << refused;
}

std::string test_name(const testing::TestParamInfo<Contract::ParamType>& p) {
  std::string name = fmt::format("{}_{}_{}", std::get<0>(p.param), std::get<1>(p.param).algorithm,
                                 to_string(std::get<1>(p.param).collective));
  std::replace(name.begin(), name.end(), '-', '_');  // gtest names: letters, digits, '_'
  return name;
}

INSTANTIATE_TEST_SUITE_P(Backends, Contract,
                         testing::Combine(testing::ValuesIn(backends_here()),
                                          testing::ValuesIn(all_pairs())),
                         test_name);

}  // namespace
}  // namespace collsim
