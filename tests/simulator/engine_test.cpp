// Engine behaviour that is not about cost: schedules that cannot finish end with an error naming
// the stuck ranks and ops (never a hang), dependencies are honoured, runs are deterministic.
#include <gtest/gtest.h>

#include "algorithms/ir/schedule_builder.hpp"
#include "sim_fixtures.hpp"
#include "simulator/simulate.hpp"
#include "topology/error.hpp"

namespace collsim {
namespace {

ScheduleInfo info(int ranks, int channels) {
  ScheduleInfo i;
  i.ranks = ranks;
  i.channels = channels;
  i.fifo = geometry(Protocol::kSimple);
  return i;
}

std::string stuck_message(const Schedule& s, SimNetwork net) {
  const Topology topo = test::star(s.rank_count(), GBps(100), us(0.3));
  SimOptions o;
  o.network = net;
  o.costs = test::ideal();
  try {
    simulate(s, topo, o);
  } catch (const ScheduleError& e) {
    return e.what();
  }
  return "(no error)";
}

// Rank 1 waits for a send that rank 0 never posts (injected through the IR, not validated).
TEST(Engine, RecvWithoutSendIsAnErrorNamingRankAndOp) {
  ScheduleBuilder b(info(3, 1));
  b.set_buffer(1, BufferKind::kOutput, 64);
  b.set_buffer(2, BufferKind::kInput, 64);
  b.add(1, 0, ops::recv(0, ops::out(0), 64));
  b.add(2, 0, ops::copy(ops::in(0), ops::in(0), 0));
  const Schedule s = std::move(b).build();
  for (SimNetwork net : {SimNetwork::kContentionFree, SimNetwork::kMaxMin}) {
    EXPECT_EQ(stuck_message(s, net),
              "schedule cannot finish: 1 stream(s) on rank(s) 1 are stuck\n"
              "  rank 1 channel 0 op 0 (recv from rank 0, 64 B) waits for piece 0 from rank 0, "
              "which has sent 0");
  }
}

// Each rank sends 9 pieces to the other before receiving: the 9th finds all 8 slots taken.
TEST(Engine, FullFifosInBothDirectionsAreAnError) {
  const std::uint64_t piece = geometry(Protocol::kSimple).slot_payload;
  ScheduleBuilder b(info(2, 1));
  for (int r = 0; r < 2; ++r) {
    b.set_buffer(r, BufferKind::kInput, 9 * piece);
    b.set_buffer(r, BufferKind::kOutput, 9 * piece);
    b.add(r, 0, ops::send(1 - r, ops::in(0), 9 * piece));
    b.add(r, 0, ops::recv(1 - r, ops::out(0), 9 * piece));
  }
  const std::string msg = stuck_message(std::move(b).build(), SimNetwork::kContentionFree);
  EXPECT_NE(msg.find("2 stream(s) on rank(s) 0,1 are stuck"), std::string::npos) << msg;
  EXPECT_NE(msg.find("rank 0 channel 0 op 0 (send to rank 1, 4718592 B) waits for a free slot "
                     "to rank 1 (8 pieces unconsumed)"),
            std::string::npos)
      << msg;
}

// Channel 1 of rank 0 may start only after channel 0's op 0 completes (a 1 MiB local copy at
// 1 GB/s = 1.048576 ms); its own op is a 0-byte copy.
TEST(Engine, DependenciesOrderChannels) {
  ScheduleBuilder b(info(1, 2));
  b.set_buffer(0, BufferKind::kInput, 1 << 20);
  b.set_buffer(0, BufferKind::kOutput, 1 << 20);
  b.add(0, 0, ops::copy(ops::in(0), ops::out(0), 1 << 20));
  b.add(0, 1, ops::copy(ops::in(0), ops::out(0), 0));
  b.depend(0, {1, 0, 0, 0});
  const Schedule s = std::move(b).build();
  const Topology topo = test::star(1, GBps(100), us(0.3));
  SimOptions o;
  o.costs = test::ideal();
  o.costs->copy_bandwidth = GBps(1);
  const Result r = simulate(s, topo, o);
  EXPECT_EQ(r.total.ps(), 1'048'576'000);
  EXPECT_EQ(r.ops, 2u);
}

// Free reductions (reduce_bandwidth: free) cost nothing on every piece, the short last one of an
// uneven size included: the same run with reductions at any rate can only be slower.
TEST(Engine, FreeReductionsCostNothingOnAShortPiece) {
  const Topology topo = test::star(4, GBps(100), us(0.3));
  const Schedule s = plan(test::request(Collective::kAllReduce, "ring", 4, 1000003, 0, 0));
  SimOptions o;
  o.network = SimNetwork::kContentionFree;
  o.costs = test::ideal();
  const Result free = simulate(s, topo, o);
  o.costs = test::ideal(GBps(10));  // slower than the links: on the critical path
  const Result paid = simulate(s, topo, o);
  EXPECT_LT(free.total, paid.total);
  // Each rank sends 2 x 3/4 x 1 MB over its 100 GB/s link, 15 us, and the pipeline hides most
  // hop latency (15.6 us simulated). The bug this pins made the short last piece's free
  // reduction cost an overflowing delay.
  EXPECT_LT(free.total, us(20));
}

// The step overhead holds the sender's channel after each non-empty piece but does not delay
// the piece: one piece arrives as without it; of two back to back the second starts τ + o after
// the first; an empty piece pays none.
TEST(Engine, StepOverheadHoldsTheSenderNotThePiece) {
  const std::uint64_t piece = geometry(Protocol::kSimple).slot_payload;
  auto received = [&](std::uint64_t bytes, Time o, SimNetwork net) {
    ScheduleBuilder b(info(2, 1));
    b.set_buffer(0, BufferKind::kInput, bytes);
    b.set_buffer(1, BufferKind::kOutput, bytes);
    b.add(0, 0, ops::send(1, ops::in(0), bytes));
    b.add(1, 0, ops::recv(0, ops::out(0), bytes));
    SimOptions opt;
    opt.network = net;
    opt.costs = test::ideal();
    opt.costs->protocol(Protocol::kSimple).step_overhead = o;
    return simulate(std::move(b).build(), test::star(2, GBps(100), us(0.3)), opt).rank_finish[1];
  };
  const Time tau = transfer_time(Bytes(piece), GBps(100));
  for (SimNetwork net : {SimNetwork::kContentionFree, SimNetwork::kMaxMin}) {
    SCOPED_TRACE(static_cast<int>(net));
    EXPECT_EQ(received(piece, us(5), net), received(piece, Time(), net));
    EXPECT_EQ(received(0, us(5), net), received(0, Time(), net));
    // Two pieces: 2τ + o + the route's 0.6 us, against 2τ + 0.6 us without it.
    EXPECT_EQ(received(2 * piece, Time(), net), tau * 2 + us(0.6));
    EXPECT_EQ(received(2 * piece, us(5), net), tau * 2 + us(5) + us(0.6));
  }
}

// A slot's credit comes back at the links' latency plus LL's per-hop excess (one flag's
// crossing), not at the data protocol's step latency: nine Simple pieces through the FIFO's eight
// slots, the ninth waiting for the first one's credit. With Simple's excess at 10 us and LL's at
// 1 us, the first piece arrives at τ + 0.6 + 10 us, its credit is back 0.6 + 1 us later, and the
// ninth piece arrives 0.6 + 10 us after its τ: 2τ + 22.8 us (2τ + 31.8 were the credit charged
// Simple's excess).
TEST(Engine, ACreditComesBackAtOneFlagsLatency) {
  const std::uint64_t piece = geometry(Protocol::kSimple).slot_payload;
  const Bandwidth link = GBps(10000);  // τ far below the latencies: the credit binds
  ScheduleBuilder b(info(2, 1));
  b.set_buffer(0, BufferKind::kInput, 9 * piece);
  b.set_buffer(1, BufferKind::kOutput, 9 * piece);
  b.add(0, 0, ops::send(1, ops::in(0), 9 * piece));
  b.add(1, 0, ops::recv(0, ops::out(0), 9 * piece));
  const Schedule s = std::move(b).build();
  const Time tau = transfer_time(Bytes(piece), link);
  for (SimNetwork net : {SimNetwork::kContentionFree, SimNetwork::kMaxMin}) {
    SCOPED_TRACE(static_cast<int>(net));
    SimOptions opt;
    opt.network = net;
    opt.costs = test::ideal();
    opt.costs->protocol(Protocol::kSimple).hop_latency.fill(us(10));
    opt.costs->protocol(Protocol::kLL).hop_latency.fill(us(1));
    const Result r = simulate(s, test::star(2, link, us(0.3)), opt);
    EXPECT_EQ(r.rank_finish[1], tau * 2 + us(22.8));
  }
}

TEST(Engine, DeterministicAndStreamsOpsNotStores) {
  const Topology topo = test::star(8, GBps(100), us(0.3));
  Request q = test::request(Collective::kAllReduce, "ring", 8, 64 << 20, 0, 0);
  q.channels = 4;
  const Schedule s = plan(q);
  for (SimNetwork net : {SimNetwork::kContentionFree, SimNetwork::kMaxMin}) {
    SimOptions o;
    o.network = net;
    const Result a = simulate(s, topo, o);
    const Result b = simulate(s, topo, o);
    EXPECT_EQ(a.total, b.total);
    EXPECT_EQ(a.rank_finish, b.rank_finish);
    EXPECT_EQ(a.events, b.events);
    ASSERT_EQ(a.links.size(), b.links.size());
    for (std::size_t i = 0; i < a.links.size(); ++i) {
      EXPECT_EQ(a.links[i].bytes, b.links[i].bytes);
      EXPECT_EQ(a.links[i].busy_fraction, b.links[i].busy_fraction);
    }
    // One period simulated (the star's ranks are all alike) stands for all of them, and a
    // channel for its copies (64 MiB cuts into 4 equal channels; those that run the ring in the
    // same order are copies).
    EXPECT_EQ(a.nccl_channels, 4);
    EXPECT_LT(a.simulated_channels, 4);
    EXPECT_EQ(a.ops * static_cast<std::uint64_t>(s.rank_count() / a.simulated_ranks) *
                  static_cast<std::uint64_t>(a.nccl_channels / a.simulated_channels),
              s.total_ops());
    // Pending events stay around the number of streams, whatever the op count.
    EXPECT_LE(a.peak_pending_events, 4u * 8u * 4u);
  }
}

TEST(Engine, PlacementMustFitTheCluster) {
  const Topology topo = test::star(2, GBps(100), us(0.3));
  const Schedule s = plan(test::request(Collective::kAllReduce, "ring", 4, 1024, 0, 0));
  EXPECT_THROW(simulate(s, topo), RequestError);
}

}  // namespace
}  // namespace collsim
