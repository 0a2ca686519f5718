// The CUDA backend on real GPUs (CTest label `gpu`; `make test` leaves these out). Several
// virtual ranks share a GPU, so one GPU runs every rank count. Without a GPU every test is
// reported as skipped, saying why.
//
// What it shows, beyond the backend contract (contract_test.cpp, built into this binary too:
// every algorithm x collective runs as peer copies and reduction kernels on CUDA streams and
// produces the CPU backend's bytes exactly): every data type x reduce op does too; the FIFO bound
// holds (8 pieces ahead run, 9 are reported as stuck); dependencies, op timings and the
// nccl-tests loop work on the GPU.
#include "backends/cuda/cuda_backend.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>

#include "algorithms/generators/registry.hpp"
#include "algorithms/ir/schedule_builder.hpp"
#include "backends/bench.hpp"
#include "backends/cpu_backend.hpp"
#include "backends/verifier.hpp"
#include "topology/error.hpp"

namespace collsim {
namespace {

// The backend, or nullptr and why there is none (the tests then skip, saying so).
std::unique_ptr<CudaBackend> open_gpu(std::string* why) {
  try {
    return std::make_unique<CudaBackend>();
  } catch (const BackendError& e) {
    *why = e.what();
    return nullptr;
  }
}

// Runs `s` on the GPU and on the CPU; returns "" when the outputs are identical and correct.
std::string compare_with_cpu(CudaBackend& gpu, const Schedule& s, std::uint64_t seed) {
  HostBuffers cpu_buf = make_inputs(s, seed);
  CpuBackend().run(s, cpu_buf, {.threads = 2});
  HostBuffers gpu_buf = make_inputs(s, seed);
  gpu.run(s, gpu_buf);
  std::string msg = compare_outputs(s, gpu_buf, gpu_buf);
  for (int r = 0; r < s.rank_count() && msg.empty(); ++r) {
    if (gpu_buf.output[r] != cpu_buf.output[r]) {
      msg = fmt::format("rank {}: output differs from the CPU backend's", r);
    }
  }
  return msg;
}

TEST(CudaBackend, EveryDataTypeAndReduceOpMatchesTheCpuBackend) {
  std::string why;
  const std::unique_ptr<CudaBackend> gpu = open_gpu(&why);
  if (!gpu) GTEST_SKIP() << "needs a GPU: " << why;
  for (DataType t : all_data_types()) {
    for (ReduceOp op : all_reduce_ops()) {
      Request r;
      r.dtype = t;
      r.redop = op;
      r.count = 100003;
      r.channels = 2;
      r.comm = Communicator::flat(3);
      r.protocol = Protocol::kLL;
      EXPECT_EQ(compare_with_cpu(*gpu, plan(r), 3), "") << to_string(t) << " " << to_string(op);
    }
  }
}

Schedule ping_pong(int pieces) {
  ScheduleInfo info;
  info.ranks = 2;
  info.fifo = geometry(Protocol::kSimple);
  ScheduleBuilder b(info);
  for (int r = 0; r < 2; ++r) {
    b.set_buffer(r, BufferKind::kInput, 64);
    b.set_buffer(r, BufferKind::kOutput, 64);
    for (int k = 0; k < pieces; ++k) b.add(r, 0, ops::send(1 - r, ops::in(0), 8));
    for (int k = 0; k < pieces; ++k) b.add(r, 0, ops::recv(1 - r, ops::out(0), 8));
  }
  return std::move(b).build();
}

TEST(CudaBackend, FifoHoldsEightSlots) {
  std::string why;
  const std::unique_ptr<CudaBackend> gpu = open_gpu(&why);
  if (!gpu) GTEST_SKIP() << "needs a GPU: " << why;
  HostBuffers buf = HostBuffers::for_schedule(ping_pong(8));
  EXPECT_NO_THROW(gpu->run(ping_pong(8), buf));
  try {
    gpu->run(ping_pong(9), buf);
    ADD_FAILURE() << "no error";
  } catch (const BackendError& e) {
    EXPECT_STREQ(e.what(),
                 "cuda backend: the schedule cannot finish; stuck: rank 0 channel 0 op 8 (send to "
                 "rank 1, 8 B) waits for a free slot; rank 1 channel 0 op 8 (send to rank 0, 8 B) "
                 "waits for a free slot");
  }
}

TEST(CudaBackend, DependenciesOrderChannels) {
  std::string why;
  const std::unique_ptr<CudaBackend> gpu = open_gpu(&why);
  if (!gpu) GTEST_SKIP() << "needs a GPU: " << why;
  ScheduleInfo info;
  info.ranks = 2;
  info.channels = 2;
  info.fifo = geometry(Protocol::kLL);
  ScheduleBuilder b(info);
  for (int r = 0; r < 2; ++r) {
    b.set_buffer(r, BufferKind::kInput, 1 << 20);
    b.set_buffer(r, BufferKind::kOutput, 2 << 20);
  }
  b.add(0, 0, ops::send(1, ops::in(0), 1 << 20));
  b.add(1, 0, ops::recv(0, ops::out(0), 1 << 20));
  b.add(1, 1, ops::copy(ops::out(0), ops::out(1 << 20), 1 << 20));
  b.depend(1, {1, 0, 0, 0});
  const Schedule s = std::move(b).build();
  validate(s);
  HostBuffers buf = HostBuffers::for_schedule(s);
  for (std::size_t i = 0; i < buf.input[0].size(); ++i) buf.input[0][i] = std::byte(i * 13 + 1);
  gpu->run(s, buf);
  for (std::size_t i = 0; i < (1u << 20); i += 977) {
    ASSERT_EQ(buf.output[1][(1u << 20) + i], std::byte(i * 13 + 1)) << i;
  }
}

TEST(CudaBackend, RecordsOpTimingsOnTheGpu) {
  std::string why;
  const std::unique_ptr<CudaBackend> gpu = open_gpu(&why);
  if (!gpu) GTEST_SKIP() << "needs a GPU: " << why;
  Request r;
  r.count = 1 << 20;
  r.channels = 2;
  r.comm = Communicator::flat(4);
  const Schedule s = plan(r);
  HostBuffers buf = make_inputs(s, 1);
  const RunResult res = gpu->run(s, buf, {.record_ops = true});
  ASSERT_EQ(res.op_timings.size(), s.total_ops());
  for (const OpTiming& t : res.op_timings) {
    EXPECT_LE(t.start, t.end);
    EXPECT_LE(t.end, res.wall);
  }
  EXPECT_GT(res.wall, Time());
}

TEST(CudaBackend, MeasuresAndVerifiesLikeNcclTests) {
  std::string why;
  const std::unique_ptr<CudaBackend> gpu = open_gpu(&why);
  if (!gpu) GTEST_SKIP() << "needs a GPU: " << why;
  Request r;
  r.algorithm = "ring";
  r.count = 1 << 22;
  r.comm = Communicator::flat(8);
  const BenchSample m = measure(*gpu, plan(r), {.warmup = 2, .iters = 5});
  EXPECT_EQ(m.wrong, 0u) << m.wrong_detail;
  EXPECT_GT(m.time, Time());
}

}  // namespace
}  // namespace collsim
