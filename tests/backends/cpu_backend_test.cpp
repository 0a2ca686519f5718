#include "backends/cpu_backend.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "algorithms/generators/registry.hpp"
#include "algorithms/ir/schedule_builder.hpp"
#include "backends/registry.hpp"
#include "backends/verifier.hpp"
#include "topology/error.hpp"

namespace collsim {
namespace {

ScheduleBuilder builder(int ranks) {
  ScheduleInfo info;
  info.ranks = ranks;
  info.fifo = geometry(Protocol::kSimple);
  ScheduleBuilder b(info);
  for (int r = 0; r < ranks; ++r) {
    b.set_buffer(r, BufferKind::kInput, 64);
    b.set_buffer(r, BufferKind::kOutput, 64);
  }
  return b;
}

std::string run_error(const Schedule& s) {
  CpuBackend cpu;
  HostBuffers buf = HostBuffers::for_schedule(s);
  try {
    cpu.run(s, buf, {.threads = 2, .stall_timeout = std::chrono::milliseconds(60'000)});
  } catch (const BackendError& e) {
    return e.what();
  }
  return "";
}

// A schedule that cannot finish (the validator would refuse it) ends with an error, not a hang.
TEST(CpuBackend, StuckRunNamesTheRanksAndOps) {
  auto b = builder(2);
  b.add(0, 0, ops::recv(1, ops::out(0), 8));
  b.add(0, 0, ops::send(1, ops::in(0), 8));
  b.add(1, 0, ops::recv(0, ops::out(0), 8));
  b.add(1, 0, ops::send(0, ops::in(0), 8));
  EXPECT_EQ(run_error(std::move(b).build()),
            "cpu backend: the schedule cannot finish; stuck: rank 0 channel 0 op 0 (recv from rank "
            "1, 8 B) waits for data; rank 1 channel 0 op 0 (recv from rank 0, 8 B) waits for data");
}

// The FIFO between two ranks holds exactly 8 pieces: a sender runs 8 ahead, not 9.
TEST(CpuBackend, FifoHoldsEightSlots) {
  for (int sends : {8, 9}) {
    auto b = builder(2);
    for (int r = 0; r < 2; ++r) {
      for (int k = 0; k < sends; ++k) b.add(r, 0, ops::send(1 - r, ops::in(0), 8));
      for (int k = 0; k < sends; ++k) b.add(r, 0, ops::recv(1 - r, ops::out(0), 8));
    }
    const std::string err = run_error(std::move(b).build());
    if (sends == 8) {
      EXPECT_EQ(err, "");
    } else {
      EXPECT_EQ(err,
                "cpu backend: the schedule cannot finish; stuck: rank 0 channel 0 op 8 (send to "
                "rank 1, 8 B) waits for a free slot; rank 1 channel 0 op 8 (send to rank 0, 8 B) "
                "waits for a free slot");
    }
  }
}

// Cross-channel dependencies are honoured: channel 1 copies what channel 0 received.
TEST(CpuBackend, DependenciesOrderChannels) {
  ScheduleInfo info;
  info.ranks = 2;
  info.channels = 2;
  info.fifo = geometry(Protocol::kLL);
  ScheduleBuilder b(info);
  for (int r = 0; r < 2; ++r) {
    b.set_buffer(r, BufferKind::kInput, 8);
    b.set_buffer(r, BufferKind::kOutput, 16);
  }
  b.add(0, 0, ops::send(1, ops::in(0), 8));
  b.add(1, 0, ops::recv(0, ops::out(0), 8));
  b.add(1, 1, ops::copy(ops::out(0), ops::out(8), 8));
  b.depend(1, {1, 0, 0, 0});
  const Schedule s = std::move(b).build();
  validate(s);
  HostBuffers buf = HostBuffers::for_schedule(s);
  for (std::size_t i = 0; i < 8; ++i) buf.input[0][i] = std::byte(i + 1);
  CpuBackend().run(s, buf);
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(buf.output[1][8 + i], std::byte(i + 1));
}

// Every data type with every reduce op, on the reducing algorithms.
TEST(CpuBackend, EveryDataTypeAndReduceOp) {
  CpuBackend cpu;
  struct Case {
    const char* algorithm;
    Collective collective;
    Communicator comm;
  };
  const Case cases[] = {{"ring", Collective::kAllReduce, Communicator::flat(5)},
                        {"ring", Collective::kReduce, Communicator::flat(6)},
                        {"bintree", Collective::kAllReduce, Communicator::flat(7)},
                        {"dbtree", Collective::kAllReduce, Communicator::grid(3, 2)},
                        {"ring2d", Collective::kReduceScatter, Communicator::grid(2, 3)},
                        {"rhd", Collective::kAllReduce, Communicator::flat(6)},
                        {"binomial", Collective::kReduce, Communicator::flat(5)}};
  for (const Case& c : cases) {
    for (DataType t : all_data_types()) {
      for (ReduceOp op : all_reduce_ops()) {
        Request r;
        r.algorithm = c.algorithm;
        r.collective = c.collective;
        r.comm = c.comm;
        r.dtype = t;
        r.redop = op;
        r.count = 1001;
        r.channels = 2;
        r.root = 1;
        r.protocol = Protocol::kLL;
        r.chunk_bytes = 512;
        const VerifyResult v = verify(cpu, plan(r), 3);
        EXPECT_TRUE(v.ok) << v.message;
      }
    }
  }
}

// Topology-aware generators on multi-node layouts, uneven nodes and a subset of a cluster.
TEST(CpuBackend, TopologyAwareGeneratorsOnMultiNodeLayouts) {
  CpuBackend cpu;
  const Communicator layouts[] = {Communicator::grid(4, 4), Communicator::grid(3, 8),
                                  Communicator({0, 0, 0, 5, 9, 9}, {0, 1, 3, 40, 72, 73}),
                                  Communicator({2, 2, 6, 6, 7, 7}, {16, 19, 48, 50, 57, 60})};
  for (const Communicator& comm : layouts) {
    for (const char* algo : {"dbtree", "ring2d"}) {
      for (Collective c :
           {Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter}) {
        if (std::string(algo) == "dbtree" && c != Collective::kAllReduce) continue;
        if (std::string(algo) == "ring2d" && !comm.uniform()) continue;
        Request r;
        r.algorithm = algo;
        r.collective = c;
        r.comm = comm;
        r.count = 4099;
        r.channels = 2;
        r.chunk_bytes = 4096;
        const VerifyResult v = verify(cpu, plan(r), 5);
        EXPECT_TRUE(v.ok) << v.message;
      }
    }
  }
}

// NCCL's uneven division among channels (Request::split, nccl_channels.hpp): the channel that
// takes four times another's part, and the last one's short remainder, still compute the right
// result with every algorithm NCCL divides.
TEST(CpuBackend, NcclsUnevenChannelSplits) {
  CpuBackend cpu;
  struct Case {
    const char* algorithm;
    Collective collective;
    Communicator comm;
  };
  const Case cases[] = {{"ring", Collective::kAllReduce, Communicator::grid(2, 3)},
                        {"ring", Collective::kAllGather, Communicator::flat(5)},
                        {"ring", Collective::kReduceScatter, Communicator::flat(4)},
                        {"ring", Collective::kBroadcast, Communicator::flat(4)},
                        {"ring", Collective::kReduce, Communicator::flat(4)},
                        {"dbtree", Collective::kAllReduce, Communicator::grid(3, 2)},
                        {"pat", Collective::kAllGather, Communicator::grid(4, 1)},
                        {"pat", Collective::kReduceScatter, Communicator::grid(4, 1)},
                        {"nvls", Collective::kAllReduce, Communicator::flat(4)},
                        {"nvls_tree", Collective::kAllReduce, Communicator::grid(2, 4)}};
  for (const Case& c : cases) {
    Request r;
    r.algorithm = c.algorithm;
    r.collective = c.collective;
    r.comm = c.comm;
    r.count = 1001;
    r.channels = 4;
    r.split = {401, 250, 100, 2};
    r.root = 1;
    const std::string a = c.algorithm;
    r.protocol = a == "pat" || a.starts_with("nvls") ? Protocol::kSimple : Protocol::kLL;
    r.chunk_bytes = 256;
    const VerifyResult v = verify(cpu, plan(r), 3);
    EXPECT_TRUE(v.ok) << c.algorithm << " " << to_string(c.collective) << ": " << v.message;
  }
}

// A split whose parts do not add up to the request is refused before anything is generated.
TEST(CpuBackend, InconsistentSplitsAreRefused) {
  Request r;
  r.count = 100;
  r.channels = 3;
  r.comm = Communicator::flat(4);
  r.split = {10, 20, 30, 1};
  try {
    (void)plan(r);
    FAIL() << "planned a split of 60 elements for a request of 100";
  } catch (const RequestError& e) {
    EXPECT_STREQ(e.what(),
                 "channel split 10 + 1 x 20 + 30 elements does not give 3 channels 100 elements, "
                 "each a non-empty part");
  }
}

TEST(CpuBackend, ReportsTimesAndCounts) {
  Request r;
  r.count = 1 << 16;
  r.comm = Communicator::flat(4);
  const Schedule s = plan(r);
  HostBuffers buf = make_inputs(s, 1);
  const RunResult res = CpuBackend().run(s, buf);
  EXPECT_EQ(res.ops, s.total_ops());
  EXPECT_EQ(res.bytes_sent, 4u * 6 * (1 << 16));  // 2(p-1) segments of count/p f32 per rank
  ASSERT_EQ(res.rank_time.size(), 4u);
  EXPECT_GT(res.wall, Time());
  HostBuffers dry = HostBuffers::for_schedule(s);
  EXPECT_EQ(make_backend("dry-run")->run(s, dry).ops, s.total_ops());
  EXPECT_THROW(make_backend("gpu"), RequestError);
}

TEST(CpuBackend, RejectsWrongBuffers) {
  Request r;
  r.count = 16;
  r.comm = Communicator::flat(2);
  HostBuffers buf;
  EXPECT_THROW(CpuBackend().run(plan(r), buf), RequestError);
}

}  // namespace
}  // namespace collsim

namespace collsim {
namespace {

// The verifier catches a wrong element, in data movement and in reductions.
TEST(Verifier, DetectsAWrongElement) {
  for (Collective c : {Collective::kAllGather, Collective::kAllReduce}) {
    Request r;
    r.collective = c;
    r.count = 100;
    r.comm = Communicator::flat(3);
    const Schedule s = plan(r);
    HostBuffers buf = make_inputs(s, 1);
    CpuBackend().run(s, buf);
    EXPECT_EQ(compare_outputs(s, buf, buf), "");
    buf.output[2][40] ^= std::byte{0x40};
    EXPECT_NE(compare_outputs(s, buf, buf).find("rank 2 output[10]: got"), std::string::npos)
        << compare_outputs(s, buf, buf);
  }
}

}  // namespace
}  // namespace collsim
