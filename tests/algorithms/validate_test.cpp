// validate(): every user-facing message pinned (docs/style.md: "Pin every user-facing message").
#include "algorithms/ir/validate.hpp"

#include <gtest/gtest.h>

#include "algorithms/ir/schedule_builder.hpp"
#include "topology/error.hpp"

namespace collsim {
namespace {

ScheduleBuilder builder(int ranks, int channels = 1) {
  ScheduleInfo info;
  info.ranks = ranks;
  info.channels = channels;
  info.fifo = geometry(Protocol::kSimple);
  ScheduleBuilder b(info);
  for (int r = 0; r < ranks; ++r) {
    b.set_buffer(r, BufferKind::kInput, 64);
    b.set_buffer(r, BufferKind::kOutput, 64);
  }
  return b;
}

std::string error_of(ScheduleBuilder b) {
  try {
    validate(std::move(b).build());
  } catch (const ScheduleError& e) {
    return e.what();
  }
  return "";
}

TEST(Validate, AcceptsAMatchedExchange) {
  auto b = builder(2);
  b.add(0, 0, ops::send(1, ops::in(0), 8));
  b.add(0, 0, ops::recv(1, ops::out(0), 8));
  b.add(1, 0, ops::send(0, ops::in(0), 8));
  b.add(1, 0, ops::recv(0, ops::out(0), 8));
  const ValidationReport rep = validate(std::move(b).build());
  EXPECT_TRUE(rep.exhaustive);
  EXPECT_EQ(rep.ops_checked, 4u);
}

TEST(Validate, MissingSendIsADeadlock) {
  auto b = builder(2);
  b.add(0, 0, ops::send(1, ops::in(0), 8));
  b.add(1, 0, ops::recv(0, ops::out(0), 8));
  b.add(1, 0, ops::recv(0, ops::out(8), 8));
  EXPECT_EQ(error_of(std::move(b)),
            "schedule deadlocks: rank 1 channel 0 op 1 (recv from rank 0, 8 B) waits for a send "
            "that rank 0 channel 0 never posts");
}

TEST(Validate, MissingRecvIsUnmatched) {
  auto b = builder(2);
  b.add(0, 0, ops::send(1, ops::in(0), 8));
  b.add(0, 0, ops::send(1, ops::in(8), 8));
  b.add(1, 0, ops::recv(0, ops::out(0), 8));
  EXPECT_EQ(error_of(std::move(b)),
            "unmatched send: rank 0 channel 0 op 1 (send to rank 1, 8 B) has no matching recv on "
            "rank 1 channel 0");
}

TEST(Validate, SizesMustMatch) {
  auto b = builder(2);
  b.add(0, 0, ops::send(1, ops::in(0), 8));
  b.add(1, 0, ops::recv(0, ops::out(0), 4));
  EXPECT_EQ(error_of(std::move(b)),
            "mismatched sizes: rank 0 channel 0 op 0 (send to rank 1, 8 B) matches rank 1 "
            "channel 0 op 0 (recv from rank 0, 4 B)");
}

// Matching is per channel: a send on channel 1 does not feed a recv on channel 0.
TEST(Validate, MatchingIsPerChannel) {
  auto b = builder(2, 2);
  b.add(0, 1, ops::send(1, ops::in(0), 8));
  b.add(1, 0, ops::recv(0, ops::out(0), 8));
  EXPECT_EQ(error_of(std::move(b)),
            "schedule deadlocks: rank 1 channel 0 op 0 (recv from rank 0, 8 B) waits for a send "
            "that rank 0 channel 0 never posts");
}

TEST(Validate, CycleOfRecvsNamesTheOps) {
  auto b = builder(2);
  b.add(0, 0, ops::recv(1, ops::out(0), 8));
  b.add(0, 0, ops::send(1, ops::in(0), 8));
  b.add(1, 0, ops::recv(0, ops::out(0), 8));
  b.add(1, 0, ops::send(0, ops::in(0), 8));
  EXPECT_EQ(error_of(std::move(b)),
            "schedule deadlocks: rank 0 channel 0 op 0 (recv from rank 1, 8 B) waits for data "
            "from rank 1 channel 0 op 0 (recv from rank 0, 8 B), which waits for data from rank 0 "
            "channel 0 op 0");
}

TEST(Validate, DependencyCycle) {
  auto b = builder(1, 2);
  b.add(0, 0, ops::copy(ops::in(0), ops::out(0), 8));
  b.add(0, 1, ops::copy(ops::in(8), ops::out(8), 8));
  b.depend(0, {0, 0, 1, 0});
  b.depend(0, {1, 0, 0, 0});
  EXPECT_EQ(error_of(std::move(b)),
            "schedule deadlocks: rank 0 channel 0 op 0 (copy, 8 B) waits (dependency) for rank 0 "
            "channel 1 op 0 (copy, 8 B), which waits (dependency) for rank 0 channel 0 op 0");
}

// Dependencies are checked as runs (a run's last one has its largest ops); the error names the
// first of the list that points past a stream's end, not the run's last.
TEST(Validate, DependencyOnAMissingOpIsNamed) {
  auto b = builder(1, 2);
  for (int i = 0; i < 4; ++i) b.add(0, 1, ops::copy(ops::in(8 * i), ops::out(8 * i), 8));
  b.add(0, 0, ops::copy(ops::in(32), ops::out(32), 8));
  b.add(0, 0, ops::copy(ops::in(40), ops::out(40), 8));
  for (std::uint64_t i = 0; i < 4; ++i) b.depend(0, {1, i, 0, i});  // one run of 4
  EXPECT_EQ(error_of(std::move(b)),
            "bad dependency: rank 0 channel 1 op 2 after channel 0 op 2 names a missing op");
}

// The FIFO holds 8 slots: 8 sends ahead of the matching recvs fit, a 9th blocks both ranks.
TEST(Validate, BoundedFifoDeadlock) {
  for (int sends : {8, 9}) {
    auto b = builder(2);
    for (int r = 0; r < 2; ++r) {
      for (int k = 0; k < sends; ++k) b.add(r, 0, ops::send(1 - r, ops::in(0), 0));
      for (int k = 0; k < sends; ++k) b.add(r, 0, ops::recv(1 - r, ops::out(0), 0));
    }
    if (sends == 8) {
      EXPECT_EQ(error_of(std::move(b)), "");
    } else {
      EXPECT_EQ(error_of(std::move(b)),
                "schedule deadlocks: rank 0 channel 0 op 8 (send to rank 1, 0 B) waits for a free "
                "slot at rank 1 channel 0 op 8 (send to rank 0, 0 B), which waits for a free slot "
                "at rank 0 channel 0 op 8");
    }
  }
}

// One op of 9 slots' payload streams through the 8-slot FIFO: no deadlock on its own.
TEST(Validate, LargeOpsStreamThroughTheFifo) {
  auto b = builder(2);
  const std::uint64_t big = 9 * geometry(Protocol::kSimple).slot_payload;
  b.set_buffer(0, BufferKind::kInput, big);
  b.set_buffer(1, BufferKind::kOutput, big);
  b.add(0, 0, ops::send(1, ops::in(0), big));
  b.add(1, 0, ops::recv(0, ops::out(0), big));
  EXPECT_EQ(error_of(std::move(b)), "");
}

TEST(Validate, BuffersInBounds) {
  auto b = builder(2);
  b.add(0, 0, ops::send(1, ops::in(60), 8));
  b.add(1, 0, ops::recv(0, ops::out(0), 8));
  EXPECT_EQ(error_of(std::move(b)),
            "buffer out of bounds: rank 0 channel 0 op 0 (send to rank 1, 8 B) reads input bytes "
            "[60, 68) but the input buffer holds 64 B");
}

TEST(Validate, PeersMustBeOtherRanks) {
  auto b = builder(2);
  b.add(0, 0, ops::send(0, ops::in(0), 8));
  EXPECT_EQ(error_of(std::move(b)),
            "bad peer: rank 0 channel 0 op 0 (send to rank 0, 8 B) sends to itself; use a copy");
  auto c = builder(2);
  c.add(0, 0, ops::send(5, ops::in(0), 8));
  EXPECT_EQ(error_of(std::move(c)),
            "bad peer: rank 0 channel 0 op 0 (send to rank 5, 8 B) sends to rank 5, but ranks "
            "are 0..1");
}

TEST(Validate, UnorderedWritesAcrossChannels) {
  auto b = builder(1, 2);
  b.add(0, 0, ops::copy(ops::in(0), ops::out(0), 16));
  b.add(0, 1, ops::copy(ops::in(0), ops::out(8), 16));
  EXPECT_EQ(error_of(std::move(b)),
            "unordered writes: rank 0 channel 0 op 0 (copy, 16 B) and rank 0 channel 1 op 0 "
            "(copy, 16 B) both write output bytes [8, 16) and no dependency orders them");
  auto c = builder(1, 2);
  c.add(0, 0, ops::copy(ops::in(0), ops::out(0), 16));
  c.add(0, 1, ops::copy(ops::in(0), ops::out(8), 16));
  c.depend(0, {1, 0, 0, 0});
  EXPECT_EQ(error_of(std::move(c)), "");
}

TEST(Validate, PostopOnlyOnReductions) {
  auto b = builder(1);
  Op op = ops::copy(ops::in(0), ops::out(0), 8);
  op.postop = true;
  b.add(0, 0, op);
  EXPECT_EQ(error_of(std::move(b)),
            "bad postop: rank 0 channel 0 op 0 (copy, 8 B) does not reduce");
}

}  // namespace
}  // namespace collsim
