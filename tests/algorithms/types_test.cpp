#include "algorithms/ir/types.hpp"

#include <gtest/gtest.h>

#include "algorithms/ir/request.hpp"
#include "topology/error.hpp"

namespace collsim {
namespace {

TEST(Types, ParsesEverySpellingOfACollective) {
  EXPECT_EQ(parse_collective("allreduce"), Collective::kAllReduce);
  EXPECT_EQ(parse_collective("all_reduce"), Collective::kAllReduce);
  EXPECT_EQ(parse_collective("All-Reduce"), Collective::kAllReduce);
  EXPECT_EQ(parse_collective("reduce_scatter"), Collective::kReduceScatter);
  EXPECT_EQ(parse_collective("alltoall"), Collective::kAllToAll);
  EXPECT_EQ(parse_collective("send-recv"), Collective::kSendRecv);
  for (Collective c : all_collectives()) EXPECT_EQ(parse_collective(to_string(c)), c);
}

TEST(Types, UnknownNamesListWhatIsAccepted) {
  try {
    parse_collective("allredcue");
    FAIL();
  } catch (const RequestError& e) {
    EXPECT_STREQ(e.what(),
                 "unknown collective \"allredcue\": expected one of allreduce, allgather, "
                 "reducescatter, broadcast, reduce, gather, scatter, alltoall, barrier, sendrecv; "
                 "did you mean \"allreduce\"?");
  }
  EXPECT_THROW(parse_protocol("ll64"), RequestError);
  EXPECT_EQ(parse_protocol("LL128"), Protocol::kLL128);
  EXPECT_EQ(parse_data_type("bf16"), DataType::kBf16);
  EXPECT_EQ(parse_data_type("float"), DataType::kF32);
  EXPECT_EQ(parse_reduce_op("avg"), ReduceOp::kAvg);
}

TEST(Types, ElementSizes) {
  EXPECT_EQ(element_size(DataType::kF16), 2u);
  EXPECT_EQ(element_size(DataType::kBf16), 2u);
  EXPECT_EQ(element_size(DataType::kF32), 4u);
  EXPECT_EQ(element_size(DataType::kF64), 8u);
  EXPECT_EQ(element_size(DataType::kI32), 4u);
  EXPECT_EQ(element_size(DataType::kI64), 8u);
  EXPECT_EQ(element_size(DataType::kU8), 1u);
}

// docs/nccl-model.md §2.3: 8 slots; Simple 4 MiB / 8; LL 512 KiB / 8, half payload; LL128
// 4915200 / 8 = 614400 with 120 of 128 bytes payload = 576000.
TEST(Types, ProtocolGeometryFollowsNccl) {
  EXPECT_EQ(geometry(Protocol::kSimple).slots, 8);
  EXPECT_EQ(geometry(Protocol::kSimple).slot_payload, 524288u);
  EXPECT_EQ(geometry(Protocol::kLL).slot_bytes, 65536u);
  EXPECT_EQ(geometry(Protocol::kLL).slot_payload, 32768u);
  EXPECT_EQ(geometry(Protocol::kLL128).slot_bytes, 614400u);
  EXPECT_EQ(geometry(Protocol::kLL128).slot_payload, 576000u);
  // One pass of a channel's threads (types.hpp): LL 512 threads x one 16-byte line; LL128 20
  // warps x a 2 KiB slice each; Simple forwards whole slices.
  EXPECT_EQ(geometry(Protocol::kLL).pass_bytes, 8192u);
  EXPECT_EQ(geometry(Protocol::kLL128).pass_bytes, 40960u);
  EXPECT_EQ(geometry(Protocol::kSimple).pass_bytes, 0u);
}

// Ring Simple AllReduce: chunkSteps 4 x 512 KiB = 2 MiB in 2 slices; everything else one slot.
TEST(Types, DefaultChunkingFollowsNccl) {
  const Chunking ring =
      default_chunking("ring", Collective::kAllReduce, Protocol::kSimple, DataType::kF32);
  EXPECT_EQ(ring.chunk_bytes, 2u << 20);
  EXPECT_EQ(ring.slices, 2);
  const Chunking bcast =
      default_chunking("ring", Collective::kBroadcast, Protocol::kSimple, DataType::kF32);
  EXPECT_EQ(bcast.chunk_bytes, 512u << 10);
  EXPECT_EQ(bcast.slices, 1);
  EXPECT_EQ(
      default_chunking("bintree", Collective::kAllReduce, Protocol::kLL, DataType::kF32).chunk_bytes,
      32768u);
  // 576000 is a multiple of 8, so LL128 chunks hold whole f64 elements.
  EXPECT_EQ(default_chunking("ring", Collective::kAllReduce, Protocol::kLL128, DataType::kF64)
                .chunk_bytes,
            576000u);
}

// NCCL's Tree with LL128 shrinks its chunk so that each channel has enough chunks in flight for
// the tree's depth (enqueue.cc calcCollChunking); the values are worked by hand from NCCL's rule
// for 4 nodes x 8 GPUs on 16 channels (nsteps = 1 + 2 + 0.8 = 3.8).
TEST(Types, TreeLl128ChunksShrinkForTheTreesPipeline) {
  Request r;
  r.collective = Collective::kAllReduce;
  r.algorithm = "dbtree";
  r.protocol = Protocol::kLL128;
  r.comm = Communicator::grid(4, 8);
  r.channels = 16;
  auto chunk_of = [&](Bytes size) {
    r.count = count_for_bytes(r.collective, size, r.dtype, r.comm.size());
    return chunking(r).chunk_bytes;
  };
  // 1 GiB: 116 chunks per channel already, the full 576000 B.
  EXPECT_EQ(chunk_of(GiB(1)), 576000u);
  // 16 MiB: halved three times to 72000 (14 chunks per channel >= 7.6), then to LL128's
  // 1920-byte grain.
  EXPECT_EQ(chunk_of(MiB(16)), 71040u);
  // 256 KiB: down to 18000 B (the second loop stops once the chunk is 32768 B or less).
  EXPECT_EQ(chunk_of(KiB(256)), 17280u);
  // An explicit --chunk wins; a ring keeps its slot.
  r.chunk_bytes = 8192;
  EXPECT_EQ(chunk_of(MiB(16)), 8192u);
  r.chunk_bytes = 0;
  r.algorithm = "ring";
  EXPECT_EQ(chunk_of(MiB(16)), 576000u);
}

// docs/cli.md: --bytes is nccl-tests' size; per-rank blocks for AllGather, ReduceScatter, AllToAll.
TEST(Types, SizesFollowNcclTests) {
  EXPECT_EQ(count_for_bytes(Collective::kAllReduce, MiB(1), DataType::kF32, 8), 262144u);
  EXPECT_EQ(count_for_bytes(Collective::kAllGather, MiB(1), DataType::kF32, 8), 32768u);
  EXPECT_THROW(count_for_bytes(Collective::kAllReduce, Bytes(6), DataType::kF32, 8), RequestError);
  Request r;
  r.collective = Collective::kReduceScatter;
  r.count = 32768;
  r.comm = Communicator::flat(8);
  EXPECT_EQ(request_bytes(r), MiB(1));
}

}  // namespace
}  // namespace collsim
