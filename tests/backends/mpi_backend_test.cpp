// The MPI backend, run as a real MPI job: `mpirun -np 4 mpi_backend_test` (CTest test
// mpi_backend_contract, label mpi). Every process runs the same tests in the same order; each
// checks its own rank and the verdicts are combined over MPI so that every process agrees. Only
// process 0 prints gtest's report; the others print their failures prefixed with their rank.
//
// What it shows: the ring, dbtree, ring2d and direct schedules of every collective they
// implement run over MPI_Issend / MPI_Irecv and produce exactly the right result, byte for byte
// what the CPU backend produces; the FIFO bound lets a sender run 8 pieces ahead; op timings and
// the nccl-tests measurement loop work across processes.
#include "backends/mpi/mpi_backend.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <iostream>

#include "algorithms/generators/registry.hpp"
#include "algorithms/ir/schedule_builder.hpp"
#include "backends/bench.hpp"
#include "backends/cpu_backend.hpp"
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

// Runs `s` over MPI and returns the wrong elements over all ranks (every process gets the sum).
std::uint64_t run_and_count(const Schedule& s, std::uint64_t seed, std::string* detail) {
  const std::vector<int> mine = backend().local_ranks(s);
  HostBuffers buf = HostBuffers::for_ranks(s, mine);
  for (int r : mine) fill_input(s, seed, r, buf.input[r]);
  backend().run(s, buf);
  WrongCount w = count_wrong(s, seed, me(), buf.output[me()]);
  *detail = w.detail;
  return backend().processes().sum(w.wrong);
}

TEST(MpiBackend, JobHasFourProcesses) { ASSERT_EQ(world_size(), 4); }

struct Flavor {
  DataType dtype;
  ReduceOp op;
  Protocol proto;
};

// ring, dbtree, ring2d and direct: every collective each implements, 4 ranks (2 nodes x 2 for
// the hierarchical ones), sizes that do not divide evenly, 1 and 2 channels.
TEST(MpiBackend, RunsAndVerifiesRingDbtreeRing2dDirect) {
  const Flavor flavors[] = {{DataType::kF32, ReduceOp::kSum, Protocol::kSimple},
                            {DataType::kBf16, ReduceOp::kAvg, Protocol::kLL},
                            {DataType::kI32, ReduceOp::kProd, Protocol::kLL128},
                            {DataType::kF64, ReduceOp::kMax, Protocol::kSimple}};
  int cases = 0;
  for (const char* algo : {"ring", "dbtree", "ring2d", "direct"}) {
    for (Collective c : find_algorithm(algo).collectives) {
      for (std::uint64_t elements : {1ull, 1000ull, (1ull << 18) + 3}) {
        for (int channels : {1, 2}) {
          const Flavor f = flavors[cases % 4];
          Request r;
          r.algorithm = algo;
          r.collective = c;
          r.dtype = f.dtype;
          r.redop = f.op;
          r.protocol = f.proto;
          r.channels = channels;
          r.comm = Communicator::grid(2, 2);
          r.root = has_root(c) ? cases % 4 : 0;
          r.count = is_blocked(c) ? (elements + 3) / 4 : elements;
          ++cases;
          const std::string what =
              fmt::format("{} {} count {} channels {} {} {} {}", algo, to_string(c), r.count,
                          channels, to_string(r.dtype), to_string(r.redop), to_string(r.protocol));
          SCOPED_TRACE(what);
          std::string detail;
          EXPECT_EQ(run_and_count(plan(r), static_cast<std::uint64_t>(cases), &detail), 0u)
              << detail;
        }
      }
    }
  }
  EXPECT_GT(cases, 40);
}

// Same schedule, same bytes: floating-point sums come out bit-identical to the CPU backend's,
// because both apply the schedule's reductions in the schedule's order.
TEST(MpiBackend, MatchesTheCpuBackendBitForBit) {
  for (const char* algo : {"ring", "dbtree"}) {
    Request r;
    r.algorithm = algo;
    r.dtype = DataType::kF16;
    r.count = 70001;
    r.channels = 2;
    r.comm = Communicator::flat(4);
    r.protocol = Protocol::kLL;
    const Schedule s = plan(r);
    HostBuffers all = make_inputs(s, 9);
    CpuBackend().run(s, all, {.threads = 2});
    HostBuffers mine = HostBuffers::for_ranks(s, {me()});
    mine.input[me()] = all.input[me()];
    backend().run(s, mine);
    const std::uint64_t differ =
        backend().processes().sum(mine.output[me()] == all.output[me()] ? 0 : 1);
    EXPECT_EQ(differ, 0u) << algo;
  }
}

// A sender may post 8 pieces (NCCL_STEPS) before its receiver consumes any: ranks 0 and 1 each
// send 8 pieces to the other before receiving (9 would deadlock; the validator rejects that).
TEST(MpiBackend, FifoLetsASenderRunEightPiecesAhead) {
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

TEST(MpiBackend, RecordsEveryOpAndGathersThem) {
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

TEST(MpiBackend, MeasuresLikeNcclTests) {
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

TEST(MpiBackend, ScheduleOfAnotherSizeIsAnError) {
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
// must stay last: a failed run leaves its messages in flight and the backend refuses further runs.
TEST(MpiBackendLast, NinthPieceAheadStallsAndSaysWhy) {
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
