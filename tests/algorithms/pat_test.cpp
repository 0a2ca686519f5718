// NCCL's PAT (algorithms/generators/pat.cpp): Bruck's trees with the far dimensions first, one
// message per dimension at small sizes, pieces of one chunk at large ones, and (p - 1) blocks
// sent per rank, as a ring sends. The CPU backend's contract test checks the results.
#include <gtest/gtest.h>

#include <vector>

#include "algorithms/generators/generator.hpp"
#include "algorithms/generators/registry.hpp"

namespace collsim {
namespace {

Request pat(Collective c, int ranks, std::uint64_t count, int channels = 1) {
  Request r;
  r.collective = c;
  r.algorithm = "pat";
  r.protocol = Protocol::kSimple;
  r.channels = channels;
  r.comm = Communicator::grid(ranks, 1);  // one GPU per node, as NCCL runs PAT
  r.count = count;
  return r;
}

// Rank `rank`'s ops on channel 0 that send (peer, bytes) and that receive (peer, bytes).
struct Traffic {
  std::vector<std::pair<int, std::uint64_t>> sends, recvs;
};

Traffic traffic(const Schedule& s, int rank) {
  Traffic t;
  for (OpCursor c(s.source()->stream(rank, 0)); !c.done(); c.next()) {
    const Op& op = c.op();
    if (sends(op.kind)) t.sends.emplace_back(op.send_peer, op.bytes);
    if (receives(op.kind)) t.recvs.emplace_back(op.recv_peer, op.bytes);
  }
  return t;
}

using Pairs = std::vector<std::pair<int, std::uint64_t>>;

TEST(Pat, AllGatherCrossesTheFarDimensionFirstInOneMessageEach) {
  // 8 ranks, 4 floats a block: rank 2 sends 1, 2, then 4 blocks to ranks 2 - 4, 2 - 2, 2 - 1,
  // and receives as many from 2 + 4, 2 + 2, 2 + 1.
  const Schedule s = plan(pat(Collective::kAllGather, 8, 4));
  const Traffic t = traffic(s, 2);
  EXPECT_EQ(t.sends, (Pairs{{6, 16}, {0, 32}, {1, 64}}));
  EXPECT_EQ(t.recvs, (Pairs{{6, 16}, {4, 32}, {3, 64}}));
}

TEST(Pat, ReduceScatterRunsTheTreesBackwards) {
  const Schedule s = plan(pat(Collective::kReduceScatter, 8, 4));
  const Traffic t = traffic(s, 2);
  EXPECT_EQ(t.sends, (Pairs{{3, 64}, {4, 32}, {6, 16}}));
  EXPECT_EQ(t.recvs, (Pairs{{1, 64}, {0, 32}, {6, 16}}));
  // The last receive completes the rank's own block, into its output, with the post-op.
  Op last;
  for (OpCursor c(s.source()->stream(2, 0)); !c.done(); c.next()) {
    if (receives(c.op().kind)) last = c.op();
  }
  EXPECT_EQ(last.kind, OpKind::kRecvReduceCopy);
  EXPECT_EQ(last.dst.buffer, BufferKind::kOutput);
  EXPECT_TRUE(last.postop);
}

TEST(Pat, SendsWhatARingSendsOnAnyRankCount) {
  // (p - 1) blocks out and in per rank, in at least ceil(log2 p) messages (one per run of slots
  // a dimension moves: one each when p is a power of two).
  for (int p = 2; p <= 33; ++p) {
    for (Collective c : {Collective::kAllGather, Collective::kReduceScatter}) {
      const Schedule s = plan(pat(c, p, 3));
      for (int rank : {0, p / 2, p - 1}) {
        const Traffic t = traffic(s, rank);
        std::uint64_t out = 0, in = 0;
        for (const auto& [peer, b] : t.sends) out += b;
        for (const auto& [peer, b] : t.recvs) in += b;
        EXPECT_EQ(out, static_cast<std::uint64_t>(p - 1) * 12) << p << " " << to_string(c);
        EXPECT_EQ(in, out) << p;
        const int dims = detail::pat_dims(p);
        EXPECT_GE(static_cast<int>(t.sends.size()), dims) << p;
        if ((p & (p - 1)) == 0) {
          EXPECT_EQ(static_cast<int>(t.sends.size()), dims) << p;
        }
      }
    }
  }
}

TEST(Pat, LargeBlocksCrossEachDimensionOneChunkAPiece) {
  // 16 ranks, 8 MiB blocks: NCCL's PAT chunk stays Simple's 512 KiB step (16 x 8 MiB is more
  // than 32 chunks a channel) and a channel's 8 MiB fill more than half a step, so no blocks are
  // aggregated (postFreq 1): every message is one chunk, 16 loops of 15 chunks each way.
  const Schedule s = plan(pat(Collective::kAllGather, 16, 2 << 20));
  EXPECT_EQ(s.info().chunk_bytes, 512u << 10);
  const Traffic t = traffic(s, 0);
  EXPECT_EQ(t.sends.size(), 16u * 15u);
  for (const auto& [peer, b] : t.sends) EXPECT_EQ(b, 512u << 10);
  // Small blocks aggregate up to p / 2 of them; NCCL's rule: the most blocks (a power of two)
  // whose chunks fill at most half a step.
  EXPECT_EQ(detail::pat_aggregation(16, 4096, 512 << 10), 8u);
  EXPECT_EQ(detail::pat_aggregation(16, 128 << 10, 512 << 10), 4u);
  EXPECT_EQ(detail::pat_aggregation(16, 256 << 10, 512 << 10), 2u);
  EXPECT_EQ(detail::pat_aggregation(16, 512 << 10, 512 << 10), 1u);
}

TEST(Pat, ChunkShrinksForSmallMessagesAsNcclDoes) {
  // calcCollChunking: halve 512 KiB while chunk x channels x 32 (AllGather; 16 ReduceScatter)
  // exceeds the size, down to 64 KiB.
  // 8 x 2 MiB on 2 channels: 512 KiB x 2 x 32 = 32 MiB > 16 MiB, 256 KiB x 2 x 32 is not.
  EXPECT_EQ(plan(pat(Collective::kAllGather, 8, 1 << 19, 2)).info().chunk_bytes, 256u << 10);
  EXPECT_EQ(plan(pat(Collective::kReduceScatter, 8, 1 << 19, 2)).info().chunk_bytes, 512u << 10);
  EXPECT_EQ(plan(pat(Collective::kAllGather, 8, 1024, 2)).info().chunk_bytes, 64u << 10);
}

TEST(Pat, RunsWithSimpleOnly) {
  Request r = pat(Collective::kAllGather, 4, 16);
  r.protocol = Protocol::kLL;
  EXPECT_THROW(plan(r), RequestError);
  r.collective = Collective::kAllReduce;
  r.protocol = Protocol::kSimple;
  EXPECT_THROW(plan(r), RequestError);
}

}  // namespace
}  // namespace collsim
