// Generator properties that do not need data: random access equals the sequential form,
// channel counts, topology-aware structure.
#include <gtest/gtest.h>

#include <set>

#include "algorithms/generators/registry.hpp"
#include "algorithms/generators/ring_phase.hpp"
#include "algorithms/ir/schedule_builder.hpp"

namespace collsim {
namespace {

// The layouts every generator is checked on: three nodes of two ranks, and one node of four
// (where NVLS runs a schedule of its own).
const std::vector<Communicator>& layouts() {
  static const std::vector<Communicator> v = {Communicator::grid(3, 2), Communicator::flat(4)};
  return v;
}

// For every (algorithm, collective): op(i) equals the cursor's i-th op and the materialized copy.
TEST(Generators, RandomAccessMatchesMaterializedForm) {
  for (const AlgorithmInfo& a : algorithms()) {
    for (Collective c : a.collectives) {
      for (int p : {1, 5, 6}) {
        Request r;
        r.algorithm = a.name;
        r.collective = c;
        r.count = 1000;
        r.channels = 3;
        r.chunk_bytes = 256;
        r.comm = p == 6 ? Communicator::grid(3, 2) : Communicator::flat(p);
        r.root = p - 1;
        const Schedule s = plan(r);
        const Schedule m = materialize(s);
        for (int k = 0; k < s.actor_count(); ++k) {
          EXPECT_EQ(s.dependencies(k), m.dependencies(k));
          for (int ch = 0; ch < s.channel_count(); ++ch) {
            ASSERT_EQ(s.op_count(k, ch), m.op_count(k, ch)) << a.name << " " << to_string(c);
            for (std::uint64_t i = 0; i < s.op_count(k, ch); ++i) {
              ASSERT_EQ(s.op(k, ch, i), m.op(k, ch, i))
                  << a.name << " " << to_string(c) << " rank " << k << " ch " << ch << " op " << i;
            }
          }
        }
      }
    }
  }
}

// OpSource::same_shape, which channel folding asks, answers from a source's structure where it
// overrides it (GroupSource: its groups' templates): always what walking both streams op by op
// answers, and with the same send peers. Every algorithm and collective, every pair of channels of
// every actor, with channels of equal and of unequal share (count 1000 over 3 or 4 channels).
TEST(Generators, SameShapeAgreesWithTheWalk) {
  int alike = 0, unlike = 0;
  for (const AlgorithmInfo& a : algorithms()) {
    for (Collective c : a.collectives) {
      for (const Communicator& comm : layouts()) {
        for (int channels : {3, 4}) {
          Request r;
          r.algorithm = a.name;
          r.collective = c;
          r.count = 1000;
          r.channels = channels;
          r.chunk_bytes = 256;
          r.comm = comm;
          r.root = 1;
          const Schedule s = plan(r);
          const OpSource& src = *s.source();
          for (int k = 0; k < s.actor_count(); ++k) {
            for (int x = 0; x < s.channel_count(); ++x) {
              for (int y = 0; y < s.channel_count(); ++y) {
                std::vector<std::int32_t> fast{-7}, walk{-7};
                const bool f = src.same_shape(k, x, y, fast);
                const bool w = src.OpSource::same_shape(k, x, y, walk);
                ASSERT_EQ(f, w) << a.name << " " << to_string(c) << " actor " << k << " channels "
                                << x << ", " << y;
                if (f) {
                  EXPECT_EQ(std::set(fast.begin(), fast.end()), std::set(walk.begin(), walk.end()));
                }
                (w ? alike : unlike) += 1;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(alike, 0);
  EXPECT_GT(unlike, 0);
}

// RingPhase::same_shape judges a ring member's phase against another's from their fields, not by
// walking n steps (at 1,024 ranks and 64 channels that walk was a fifth of a simulation): an
// AllReduce's segments match at the same ring position or where all have one length, blocked
// phases where every block has one length. Every pair of positions on an 8-member ring, against
// the ops walked one by one (kind and bytes; both phases have the same peers): where it says
// alike they are, and for AllReduce it says so wherever they are.
TEST(Generators, RingPhaseSameShapeMatchesTheOpsWalked) {
  const auto walk_alike = [](const detail::RingPhase& x, const detail::RingPhase& y) {
    if (x.count() != y.count()) return false;
    for (std::uint64_t i = 0; i < x.count(); ++i) {
      const Op a = x.op(i), b = y.op(i);
      if (a.kind != b.kind || a.bytes != b.bytes) return false;
    }
    return true;
  };
  const int blocks[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  int alike = 0, unlike = 0;
  // `check(x, y, alike)` for the base phase at every pair of ring positions.
  const auto every_pair = [&](const detail::RingPhase& base, const auto& check) {
    for (int p = 0; p < 8; ++p) {
      for (int q = 0; q < 8; ++q) {
        detail::RingPhase x = base, y = base;
        x.pos = p;
        y.pos = q;
        const bool w = walk_alike(x, y);
        check(x, y, w);
        (w ? alike : unlike) += 1;
      }
    }
  };
  detail::RingPhase ring;
  ring.n = 8;
  ring.prev = 1;
  ring.next = 2;
  ring.elem = 4;
  // AllReduce: one full loop and a rest of 500 (segments of 63, the last 59), of 504 (all 63),
  // of 0 (full loops only).
  for (const std::uint64_t length : {8u * 100 + 500, 8u * 100 + 504, 16u * 100}) {
    detail::RingPhase base = ring;
    base.kind = detail::RingKind::kAllReduce;
    base.chunk = 100;
    base.region_length = length;
    every_pair(base, [&](const auto& x, const auto& y, bool w) {
      EXPECT_EQ(x.same_shape(y), w) << length << " at " << x.pos << " and " << y.pos;
    });
  }
  // AllGather over blocks split from 1000 elements (equal) and 1003 (the first three longer).
  for (const std::uint64_t total : {1000u, 1003u}) {
    detail::RingPhase base = ring;
    base.kind = detail::RingKind::kAllGather;
    base.chunk = 64;
    base.blocks = blocks;
    base.in.mode = base.out.mode = detail::SegmentMap::Mode::kSplit;
    base.in.total = base.out.total = total;
    base.in.parts = base.out.parts = 8;
    every_pair(base, [&](const auto& x, const auto& y, bool w) {
      if (x.same_shape(y)) {
        EXPECT_TRUE(w) << total << " at " << x.pos << " and " << y.pos;
      }
      if (total == 1000) {
        EXPECT_TRUE(x.same_shape(y)) << "at " << x.pos << " and " << y.pos;
      }
    });
  }
  EXPECT_GT(alike, 0);
  EXPECT_GT(unlike, 0);
}

// compress cuts a sorted list greedily into arithmetic runs, and expand gives the list back.
TEST(Generators, DependencyRunsCompressAndExpand) {
  // One run (op step 2, after step 4); one that breaks it (op step 1) and stands alone; another
  // channel's two (op step 9), and its last alone.
  const std::vector<Dependency> deps = {{1, 0, 0, 3}, {1, 2, 0, 7}, {1, 4, 0, 11}, {1, 5, 0, 11},
                                        {3, 0, 2, 0}, {3, 9, 2, 0}, {3, 10, 2, 0}};
  const std::vector<DependencyRun> runs = compress(deps);
  const std::vector<DependencyRun> want = {{{1, 0, 0, 3}, 3, 2, 4},
                                           {{1, 5, 0, 11}, 1, 0, 0},
                                           {{3, 0, 2, 0}, 2, 9, 0},
                                           {{3, 10, 2, 0}, 1, 0, 0}};
  EXPECT_EQ(runs, want);
  std::vector<Dependency> back;
  for (const DependencyRun& run : runs) expand(run, back);
  EXPECT_EQ(back, deps);
  EXPECT_TRUE(compress({}).empty());
}

// More nodes than a connection has FIFO slots (8): a stream that sends one block per node before
// receiving any would wait on a peer that waits on it (collnet_direct's AllGather broadcast did,
// from 9 nodes). plan() validates every schedule, deadlock included.
TEST(Generators, MoreNodesThanFifoSlotsPlanWithoutDeadlock) {
  for (const AlgorithmInfo& a : algorithms()) {
    for (Collective c : a.collectives) {
      Request r;
      r.algorithm = a.name;
      r.collective = c;
      r.protocol = a.protocols.back();
      r.count = 4096;
      r.channels = 2;
      r.chunk_bytes = 256;
      r.comm = Communicator::grid(16, 2);
      r.root = 1;
      EXPECT_NO_THROW(plan(r)) << a.name << " " << to_string(c);
    }
  }
}

// A source's dependency runs are canonical (channel folding compares them for equality in
// place of the lists): the compression of its list, for every algorithm, collective and actor,
// on pieces that divide the channels evenly and unevenly.
TEST(Generators, DependencyRunsAreTheCanonicalCompression) {
  std::uint64_t deps = 0, runs = 0;
  for (const AlgorithmInfo& a : algorithms()) {
    for (Collective c : a.collectives) {
      for (const Communicator& comm : layouts()) {
        for (std::uint64_t count : {1000u, 4096u}) {
          Request r;
          r.algorithm = a.name;
          r.collective = c;
          r.count = count;
          r.channels = 3;
          r.chunk_bytes = 256;
          r.comm = comm;
          r.root = 1;
          const Schedule s = plan(r);
          for (int k = 0; k < s.actor_count(); ++k) {
            const std::vector<Dependency> list = s.dependencies(k);
            const std::vector<DependencyRun> got = s.dependency_runs(k);
            ASSERT_EQ(got, compress(list)) << a.name << " " << to_string(c) << " actor " << k;
            deps += list.size();
            runs += got.size();
          }
        }
      }
    }
  }
  EXPECT_GT(deps, runs);  // some source's runs stand for more than one dependency
}

// A source asked for some channels' runs (what the engine asks for the channels it simulates)
// answers exactly the runs of those channels in its whole list: NVLSTree builds only them.
TEST(Generators, DependencyRunsOfAChannelRangeAreThoseOfTheWholeList) {
  int checked = 0;
  for (const AlgorithmInfo& a : algorithms()) {
    for (Collective c : a.collectives) {
      for (const Communicator& comm : layouts()) {
        Request r;
        r.algorithm = a.name;
        r.collective = c;
        r.count = 4099;  // blocks of unequal length, so some have a piece more than others
        r.channels = 3;
        r.chunk_bytes = 256;
        r.comm = comm;
        r.root = 1;
        const Schedule s = plan(r);
        const int n = s.channel_count();
        for (int k = 0; k < s.actor_count(); ++k) {
          const std::vector<DependencyRun> whole = compress(s.dependencies(k));
          for (auto [first, end] : {std::pair{0, n}, std::pair{0, n / 3}, std::pair{n / 3, n},
                                    std::pair{1, n - 1}, std::pair{n / 2, n / 2 + 1}}) {
            std::vector<DependencyRun> want;
            for (const DependencyRun& run : whole) {
              if (run.first.channel >= first && run.first.channel < end) want.push_back(run);
            }
            std::vector<DependencyRun> got = {DependencyRun{}};  // appended to, not replaced
            s.append_dependency_runs(k, first, end, got);
            got.erase(got.begin());
            ASSERT_EQ(got, want) << a.name << " " << to_string(c) << " actor " << k << " channels ["
                                 << first << ", " << end << ")";
            checked += want.empty() ? 0 : 1;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 0);
}

// Ring channels use different ring orders (odd channels reversed, rotations per node).
TEST(Generators, RingChannelsUseDifferentOrders) {
  Request r;
  r.count = 1 << 16;
  r.channels = 2;
  r.comm = Communicator::grid(2, 4);
  const Schedule s = plan(r);
  EXPECT_EQ(s.op(0, 0, 0).send_peer, 1);
  // Channel 1: each node rotated to start at local 1, then reversed: 4 7 6 5 0 3 2 1.
  EXPECT_EQ(s.op(0, 1, 0).send_peer, 3);
  EXPECT_EQ(s.op(4, 1, 0).send_peer, 7);
}

// dbtree: every rank's links across the two trees; heads of inner nodes have up to 3 children,
// and a node interior in tree 0 is a leaf in tree 1 (8 nodes, mirror).
TEST(Generators, DoubleTreeSplitsInteriorNodes) {
  Request r;
  r.algorithm = "dbtree";
  r.count = 4096;
  r.comm = Communicator::grid(8, 4);
  const Schedule s = plan(r);
  ASSERT_EQ(s.channel_count(), 4);  // tree 0 reduce, tree 0 bcast, tree 1 reduce, tree 1 bcast
  auto reduce_children = [&](int rank, int ir) {
    std::set<int> kids;
    for (OpCursor c = s.cursor(rank, ir); !c.done(); c.next()) {
      if (receives(c.op().kind)) kids.insert(c.op().recv_peer);
    }
    return kids;
  };
  // Node 4's head (rank 16) in tree 0: children rank 17 (chain), heads of nodes 2 and 6.
  EXPECT_EQ(reduce_children(16, 0), (std::set<int>{8, 17, 24}));
  // In tree 1 node 4 is a leaf: only its chain child.
  EXPECT_EQ(reduce_children(16, 2), (std::set<int>{17}));
  // The last rank of a node's chain is a leaf in both trees.
  EXPECT_TRUE(reduce_children(31, 0).empty());
}

// A communicator with uneven nodes and a subset of a cluster's GPUs.
TEST(Generators, DoubleTreeOnUnevenNodes) {
  Request r;
  r.algorithm = "dbtree";
  r.count = 999;
  r.channels = 2;
  r.comm = Communicator({0, 0, 0, 5, 9, 9}, {0, 1, 3, 40, 72, 73});
  const Schedule s = plan(r);
  EXPECT_EQ(s.rank_count(), 6);
  EXPECT_EQ(s.channel_count(), 8);
}

// One node: dbtree degenerates to a chain 0 -> 1 -> 2 -> 3 (both trees).
TEST(Generators, DoubleTreeOnOneNodeIsAChain) {
  Request r;
  r.algorithm = "dbtree";
  r.count = 64;
  r.comm = Communicator::flat(4);
  const Schedule s = plan(r);
  for (int ir : {0, 2}) {
    EXPECT_EQ(s.op(3, ir, 0).kind, OpKind::kSend);
    EXPECT_EQ(s.op(3, ir, 0).send_peer, 2);
    EXPECT_EQ(s.op(1, ir, 0).kind, OpKind::kRecvReduceSend);
    EXPECT_EQ(s.op(1, ir, 0).send_peer, 0);
  }
}

// NVLS AllReduce on one node deals a channel's part to the heads as NCCL does (all_reduce.h,
// RunWorkColl NVLS): a chunk per head in each full step, the remainder in 16 KiB-aligned chunks to
// the first heads. A GPU's up lane (IR channel 0) sends each head's share as one piece per chunk.
TEST(Generators, NvlsAllReduceDealsTheRemainderToTheFirstHeadsIn16KiB) {
  auto up_sends = [](int ranks, std::uint64_t bytes) {
    Request r;
    r.algorithm = "nvls";
    r.protocol = Protocol::kSimple;
    r.comm = Communicator::flat(ranks);
    r.count = bytes / 4;
    r.channels = 1;
    r.chunk_bytes = 16384;
    const Schedule s = plan(r);
    std::vector<std::uint64_t> sends;
    for (OpCursor c = s.cursor(0, 0); !c.done(); c.next()) sends.push_back(c.op().bytes);
    return sends;
  };
  using V = std::vector<std::uint64_t>;
  // 8 heads x 16 KiB: one full step, a chunk each (as an even split would give).
  EXPECT_EQ(up_sends(8, 131072), V(8, 16384));
  // 64 KiB on 8 heads: 8 KiB each, aligned up to 16 KiB: the first four heads, the rest none.
  EXPECT_EQ(up_sends(8, 65536), V(4, 16384));
  // 47.6 KiB on 72 heads: three sends, not 72 of 677 bytes.
  EXPECT_EQ(up_sends(72, 48752), (V{16384, 16384, 15984}));
  // Two full steps of 8 x 16 KiB, then 40 KiB: 16, 16 and 8 KiB more to heads 0-2, whose
  // shares (48, 48, 40 KiB) go up in chunks after the first heads', the other five 32 KiB each.
  V shares = {16384, 16384, 16384, 16384, 16384, 16384, 16384, 16384, 8192};
  shares.insert(shares.end(), 10, 16384);
  EXPECT_EQ(up_sends(8, 2 * 131072 + 40960), shares);
}

// NCCL's NVLS graph has at most NCCL_MAX_NVLS_ARITY = 32 channels, one head each: on 72 GPUs the
// chunk rule counts 32 heads (calcCollChunking: 64 x channels x heads x chunk), so 320 MiB on one
// channel keeps NCCL_NVLS_CHUNKSIZE's 128 KiB (64 x 72 heads x 128 KiB would be 576 MiB, halving
// it), and only the 32 heads take blocks.
TEST(Generators, NvlsHasAtMost32Heads) {
  EXPECT_EQ(nvls_heads(8), 8);
  EXPECT_EQ(nvls_heads(72), 32);
  Request r;
  r.algorithm = "nvls";
  r.protocol = Protocol::kSimple;
  r.comm = Communicator::flat(72);
  r.count = (std::uint64_t{320} << 20) / 4;
  r.channels = 1;
  const Schedule s = plan(r);
  EXPECT_EQ(s.op(0, 0, 0).bytes, 131072u);
  // 320 MiB over 32 heads in 128 KiB chunks: 80 chunks each, 2560 sends from every GPU.
  EXPECT_EQ(s.op_count(0, 0), 2560u);
}

// ring2d on 2 nodes x 4: the inter-node phase talks only to the same local rank.
TEST(Generators, Ring2dCrossesNodesOnlyBetweenEqualLocalRanks) {
  Request r;
  r.algorithm = "ring2d";
  r.count = 4096;
  r.comm = Communicator::grid(2, 4);
  const Schedule s = plan(r);
  for (int rank = 0; rank < 8; ++rank) {
    for (OpCursor c = s.cursor(rank, 0); !c.done(); c.next()) {
      for (int peer : {c.op().send_peer, c.op().recv_peer}) {
        if (peer < 0 || r.comm.node_of(peer) == r.comm.node_of(rank)) continue;
        EXPECT_EQ(r.comm.local_rank(peer), r.comm.local_rank(rank));
      }
    }
  }
}

}  // namespace
}  // namespace collsim
