// The MPI backend, run as a real MPI job: `mpirun -np 4 mpi_backend_test` (CTest test
// mpi_backend_contract, label mpi). Every process runs the same tests in the same order; each
// checks its own rank and the verdicts are combined over MPI so that every process agrees. Only
// process 0 prints gtest's report; the others print their failures prefixed with their rank.
//
// What it shows: the backend contract (contract_test.cpp, built into this binary too: every
// algorithm x collective at 4 ranks computes the CPU backend's bytes); the FIFO bound lets a
// sender run 8 pieces ahead and stops the 9th with a message; op timings and the nccl-tests
// measurement loop work across processes.
#include "backends/mpi/mpi_backend.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <iostream>

#include "algorithms/generators/registry.hpp"
#include "algorithms/ir/schedule_builder.hpp"
#include "backends/bench.hpp"
#include "backends/mpi/mpi_world.hpp"
#include "backends/verifier.hpp"
#include "topology/error.hpp"

namespace collsim {
namespace {

// One backend for the whole program: MPI cannot be restarted once finalised.
MpiBackend& backend() {
  static MpiBackend b;
  return b;
}

int world_size() { return backend().processes().size(); }
int me() { return backend().processes().index(); }

// Every test here needs the 4-process job: started any other way, each is skipped, saying so,
// rather than starting MPI alone in this process.
class MpiJob : public testing::Test {
 protected:
  void SetUp() override {
    if (!launched_by_mpi()) GTEST_SKIP() << "needs an MPI launcher: mpirun -np 4 mpi_backend_test";
  }
};
using MpiJobLast = MpiJob;  // a suite of its own, which must run last (see its test)

TEST_F(MpiJob, JobHasFourProcesses) { ASSERT_EQ(world_size(), 4); }

// A sender may post 8 pieces (NCCL_STEPS) before its receiver consumes any: ranks 0 and 1 each
// send 8 pieces to the other before receiving (9 would deadlock; the validator rejects that).
TEST_F(MpiJob, FifoLetsASenderRunEightPiecesAhead) {
  ScheduleInfo info;
  info.ranks = 4;
  info.fifo = geometry(Protocol::kLL);  // 32 KiB pieces
  const std::uint64_t piece = info.fifo.slot_payload;
  ScheduleBuilder b(info);
  for (int r = 0; r < 4; ++r) {
    b.set_buffer(r, BufferKind::kInput, 8 * piece);
    b.set_buffer(r, BufferKind::kOutput, 8 * piece);
  }
  for (int r = 0; r < 2; ++r) {
    for (int k = 0; k < 8; ++k) b.add(r, 0, ops::send(1 - r, ops::in(k * piece), piece));
    for (int k = 0; k < 8; ++k) b.add(r, 0, ops::recv(1 - r, ops::out(k * piece), piece));
  }
  const Schedule s = std::move(b).build();
  validate(s);
  HostBuffers buf = HostBuffers::for_ranks(s, {me()});
  for (std::size_t i = 0; i < buf.input[me()].size(); ++i) {
    buf.input[me()][i] = std::byte(static_cast<unsigned char>(i * 7 + me()));
  }
  backend().run(s, buf, {.stall_timeout = std::chrono::milliseconds(20'000)});
  if (me() < 2) {
    for (std::size_t i = 0; i < buf.output[me()].size(); i += 4099) {
      ASSERT_EQ(buf.output[me()][i], std::byte(static_cast<unsigned char>(i * 7 + (1 - me()))));
    }
  }
}

TEST_F(MpiJob, RecordsEveryOpAndGathersThem) {
  Request r;
  r.count = 5000;
  r.channels = 2;
  r.comm = Communicator::flat(4);
  const Schedule s = plan(r);
  HostBuffers buf = HostBuffers::for_ranks(s, {me()});
  fill_input(s, 1, me(), buf.input[me()]);
  const RunResult res = backend().run(s, buf, {.record_ops = true});
  std::uint64_t mine = 0;
  for (int c = 0; c < s.channel_count(); ++c) mine += s.op_count(me(), c);
  ASSERT_EQ(res.op_timings.size(), mine);
  for (const OpTiming& t : res.op_timings) {
    EXPECT_EQ(t.rank, me());
    EXPECT_LE(t.start, t.end);
    EXPECT_EQ(t.op, s.op(t.rank, t.channel, t.index));
  }
  const std::vector<OpTiming> all = backend().processes().gather(res.op_timings);
  if (me() == 0) {
    EXPECT_EQ(all.size(), s.total_ops());
  } else {
    EXPECT_EQ(all.size(), mine);
  }
}

TEST_F(MpiJob, MeasuresLikeNcclTests) {
  Request r;
  r.algorithm = "ring";
  r.collective = Collective::kAllGather;
  r.count = 1 << 14;
  r.comm = Communicator::flat(4);
  const BenchSample m = measure(backend(), plan(r), {.warmup = 1, .iters = 3});
  EXPECT_EQ(m.wrong, 0u) << m.wrong_detail;
  EXPECT_GT(m.time, Time());
  // Every process reports the same (slowest-process) time.
  EXPECT_EQ(backend().processes().max(m.time.seconds()), m.time.seconds());
}

TEST_F(MpiJob, ScheduleOfAnotherSizeIsAnError) {
  Request r;
  r.count = 16;
  r.comm = Communicator::flat(3);
  const Schedule s = plan(r);
  try {
    backend().local_ranks(s);
    ADD_FAILURE() << "no error";
  } catch (const BackendError& e) {
    EXPECT_STREQ(e.what(),
                 "mpi backend: the schedule has 3 ranks but the job has 4 processes (start it with "
                 "mpirun -np 3, or ask for --ranks 4)");
  }
}

// One piece more than the FIFO holds and the two senders wait for each other forever: the run is
// abandoned, naming the op, exactly where the CPU backend stops (cpu_backend_test.cpp). This test
// must stay the last to use backend(): a failed run leaves its messages in flight and the backend
// refuses further runs. (The contract's tests, registered after these, open a backend of their
// own on a communicator of their own, which those messages never reach.)
TEST_F(MpiJobLast, NinthPieceAheadStallsAndSaysWhy) {
  ScheduleInfo info;
  info.ranks = 4;
  info.fifo = geometry(Protocol::kLL);
  const std::uint64_t piece = info.fifo.slot_payload;
  ScheduleBuilder b(info);
  for (int r = 0; r < 4; ++r) {
    b.set_buffer(r, BufferKind::kInput, 9 * piece);
    b.set_buffer(r, BufferKind::kOutput, 9 * piece);
  }
  for (int r = 0; r < 2; ++r) {
    for (int k = 0; k < 9; ++k) b.add(r, 0, ops::send(1 - r, ops::in(k * piece), piece));
    for (int k = 0; k < 9; ++k) b.add(r, 0, ops::recv(1 - r, ops::out(k * piece), piece));
  }
  const Schedule s = std::move(b).build();
  HostBuffers buf = HostBuffers::for_ranks(s, {me()});
  std::string error;
  try {
    backend().run(s, buf, {.stall_timeout = std::chrono::milliseconds(2'000)});
  } catch (const BackendError& e) {
    error = e.what();
  }
  if (me() < 2) {
    EXPECT_EQ(error,
              fmt::format("mpi backend: rank {} made no progress for 2000 ms; channel 0 op 8 "
                          "(send to rank {}, 32768 B) waits for a free slot",
                          me(), 1 - me()));
  } else {
    EXPECT_EQ(error, "");  // ranks 2 and 3 have nothing to do
  }
}

// Failures of processes other than 0, prefixed with their rank (gtest's printer runs on 0 only).
class RankFailurePrinter : public testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const testing::TestPartResult& r) override {
    if (r.failed()) {
      std::cerr << "[rank " << rank_ << "] " << (r.file_name() ? r.file_name() : "?") << ":"
                << r.line_number() << ": " << r.summary() << "\n";
    }
  }

 private:
  int rank_;
};

}  // namespace
}  // namespace collsim

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (!collsim::launched_by_mpi()) return RUN_ALL_TESTS();  // every test skips, saying why
  const int rank = collsim::me();
  if (rank != 0) {
    testing::TestEventListeners& l = testing::UnitTest::GetInstance()->listeners();
    delete l.Release(l.default_result_printer());
    l.Append(new collsim::RankFailurePrinter(rank));
  }
  const int rc = RUN_ALL_TESTS();
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}
