// The measurement loop, per-rank verification, op timings and the backend registry, on the CPU
// backend and on fakes (ninja's shape: the real runner and fakes behind one interface).
#include "backends/bench.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "algorithms/generators/registry.hpp"
#include "backends/cpu_backend.hpp"
#include "backends/registry.hpp"
#include "backends/verifier.hpp"
#include "topology/error.hpp"

namespace collsim {
namespace {

Schedule allreduce(int ranks, std::uint64_t count, DataType t = DataType::kF32) {
  Request r;
  r.count = count;
  r.dtype = t;
  r.channels = 2;
  r.comm = Communicator::flat(ranks);
  return plan(r);
}

// count_wrong (one rank, inputs regenerated) agrees with compare_outputs (all buffers) on every
// collective, and counts each corrupted element once.
TEST(CountWrong, AgreesWithCompareOutputsAndCountsCorruptions) {
  for (const AlgorithmInfo& a : algorithms()) {
    for (Collective c : a.collectives) {
      Request r;
      r.algorithm = a.name;
      r.collective = c;
      r.dtype = DataType::kBf16;
      r.redop = ReduceOp::kAvg;
      r.count = 40000;  // more than one verification block per rank for the blocked ones
      r.root = has_root(c) ? 2 : 0;
      r.comm = Communicator::grid(2, 2);
      r.protocol = a.protocols.back();
      const Schedule s = plan(r);
      HostBuffers buf = make_inputs(s, 4);
      CpuBackend().run(s, buf, {.threads = 2});
      ASSERT_EQ(compare_outputs(s, buf, buf), "") << a.name << " " << to_string(c);
      for (int rank = 0; rank < 4; ++rank) {
        const WrongCount w = count_wrong(s, 4, rank, buf.output[rank]);
        EXPECT_EQ(w.wrong, 0u) << a.name << " " << to_string(c) << " rank " << rank << ": "
                               << w.detail;
      }
      std::vector<std::byte>& out = buf.output[r.root];
      if (out.size() < 40000) continue;
      for (std::size_t i : {std::size_t{0}, std::size_t{39998}, out.size() - 2}) {
        out[i + 1] ^= std::byte{0x40};  // the high byte of a bf16: a large change
      }
      const WrongCount w = count_wrong(s, 4, r.root, out);
      EXPECT_EQ(w.wrong, 3u) << a.name << " " << to_string(c) << ": " << w.detail;
      EXPECT_NE(w.detail.find(fmt::format("rank {} output[0]: got", r.root)), std::string::npos)
          << w.detail;
    }
  }
}

TEST(CountWrong, ShortOutputCountsEveryElement) {
  const Schedule s = allreduce(2, 100);
  const WrongCount w = count_wrong(s, 1, 0, std::vector<std::byte>(12));
  EXPECT_EQ(w.wrong, 100u);
  EXPECT_EQ(w.detail, "rank 0: output of 12 B, expected 400 B");
}

TEST(FillInput, IsWhatMakeInputsMakes) {
  const Schedule s = allreduce(3, 100001, DataType::kF16);
  const HostBuffers all = make_inputs(s, 7);
  for (int r = 0; r < 3; ++r) {
    std::vector<std::byte> one;
    fill_input(s, 7, r, one);
    EXPECT_EQ(one, all.input[r]);
  }
}

TEST(CpuBackend, RecordsEveryOpOnceInStreamOrder) {
  const Schedule s = allreduce(4, 10000);
  HostBuffers buf = make_inputs(s, 1);
  const RunResult res = CpuBackend().run(s, buf, {.threads = 2, .record_ops = true});
  ASSERT_EQ(res.op_timings.size(), s.total_ops());
  std::size_t i = 0;
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < s.channel_count(); ++c) {
      Time prev_end;
      for (std::uint64_t k = 0; k < s.op_count(r, c); ++k, ++i) {
        const OpTiming& t = res.op_timings[i];
        EXPECT_EQ(t.rank, r);
        EXPECT_EQ(t.channel, c);
        EXPECT_EQ(t.index, k);
        EXPECT_EQ(t.op, s.op(r, c, k));
        EXPECT_LE(t.start, t.end);
        EXPECT_LE(prev_end, t.start);  // a channel's ops run one after the other
        EXPECT_LE(t.end, res.wall);
        prev_end = t.end;
      }
    }
  }
  EXPECT_TRUE(CpuBackend().run(s, buf).op_timings.empty());
}

// A backend that runs the CPU backend, then spoils some output bytes; its process group pretends
// another process is always 1 s slower.
class FakeBackend final : public Backend {
 public:
  class SlowGroup final : public ProcessGroup {
   public:
    double max(double v) override { return v + 1.0; }
    std::uint64_t sum(std::uint64_t v) override { return v + 1000; }
    int barriers = 0;
    void barrier() override { ++barriers; }
  };
  std::string_view name() const override { return "fake"; }
  RunResult run(const Schedule& s, HostBuffers& b, const RunOptions& o) override {
    ++runs;
    RunResult r = cpu_.run(s, b, o);
    for (int k = 0; k < spoil; ++k) b.output[1][k * 4 + 3] ^= std::byte{0x40};
    return r;
  }
  ProcessGroup& processes() override { return group; }
  int spoil = 0;
  int runs = 0;
  SlowGroup group;

 private:
  CpuBackend cpu_;
};

TEST(Measure, RunsWarmupsAndIterationsAndTakesTheSlowestProcess) {
  FakeBackend fake;
  fake.spoil = 2;
  const BenchSample m = measure(fake, allreduce(3, 1000), {.warmup = 2, .iters = 4});
  EXPECT_EQ(fake.runs, 6);
  EXPECT_EQ(fake.group.barriers, 4);  // one before each timed run
  EXPECT_GE(m.time, sec(1.0));        // every iteration took the "other process"'s extra second
  EXPECT_LT(m.time, sec(2.0));
  EXPECT_EQ(m.wrong, 1002u);  // 2 spoiled f32 elements here, 1000 from the "other processes"
  EXPECT_NE(m.wrong_detail.find("rank 1 output[0]: got"), std::string::npos) << m.wrong_detail;
}

TEST(Measure, CpuBackendVerifiesAndOptionallyTraces) {
  CpuBackend cpu;
  const Schedule s = allreduce(4, 4096);
  BenchSample m = measure(cpu, s, {.warmup = 1, .iters = 2});
  EXPECT_EQ(m.wrong, 0u) << m.wrong_detail;
  EXPECT_GT(m.time, Time());
  EXPECT_TRUE(m.op_timings.empty());
  m = measure(cpu, s, {.warmup = 0, .iters = 1, .trace = true});
  EXPECT_EQ(m.op_timings.size(), s.total_ops());
  m = measure(cpu, s, {.warmup = 0, .iters = 1, .check = false});
  EXPECT_EQ(m.wrong, 0u);
  EXPECT_THROW(measure(cpu, s, {.iters = 0}), RequestError);
  EXPECT_THROW(measure(cpu, s, {.warmup = -1}), RequestError);
}

TEST(Registry, KnowsEveryBackendAndSaysWhyOneIsMissing) {
  EXPECT_EQ(backend_names(),
            (std::vector<std::string>{"cpu", "mpi", "cuda", "nccl", "nccl-native", "dry-run"}));
  EXPECT_EQ(make_backend("cpu")->name(), "cpu");
  try {
    make_backend("cpux");
    ADD_FAILURE() << "no error";
  } catch (const RequestError& e) {
    EXPECT_STREQ(e.what(),
                 "unknown backend \"cpux\": expected one of cpu, mpi, cuda, nccl, nccl-native, "
                 "dry-run; did you mean \"cpu\"?");
  }
  EXPECT_EQ(backend_needs("cpu"), BackendNeeds::kNothing);
  EXPECT_EQ(backend_needs("mpi"), BackendNeeds::kMpiLauncher);
  EXPECT_EQ(backend_needs("nccl-native"), BackendNeeds::kGpu);
  EXPECT_THROW(backend_needs("cpux"), RequestError);
#ifndef COLLSIM_HAVE_CUDA
  EXPECT_FALSE(backend_built("cuda"));
  try {
    make_backend("cuda");
    ADD_FAILURE() << "no error";
  } catch (const BackendError& e) {
    EXPECT_STREQ(e.what(),
                 "collsim was built without CUDA (COLLSIM_WITH_CUDA=OFF or no toolkit found)");
  }
#else
  EXPECT_TRUE(backend_built("cuda"));
  // Built with CUDA: on a machine without a GPU the backends say so plainly.
  for (const char* name : {"cuda", "nccl", "nccl-native"}) {
    if (!backend_built(name)) continue;
    try {
      EXPECT_EQ(make_backend(name)->name(), name);  // a GPU is present
    } catch (const BackendError& e) {
      EXPECT_TRUE(std::string(e.what()).starts_with("no CUDA device found (cudaGetDeviceCount: "))
          << e.what();
    }
  }
#endif
#ifdef COLLSIM_HAVE_MPI
  EXPECT_TRUE(backend_built("mpi"));
#else
  EXPECT_FALSE(backend_built("mpi"));
  EXPECT_THROW(make_backend("mpi"), BackendError);
#endif
}

}  // namespace
}  // namespace collsim
