// The IR at scale (docs/design.md "Scale"): a 1 GiB ring AllReduce on 8192 ranks x 16 channels is
// about 4.3e9 ops (2 slices per step), built in a few MiB because ops are computed on demand.
#include <gtest/gtest.h>
#include <malloc.h>

#include <random>

#include "algorithms/generators/registry.hpp"

namespace collsim {
namespace {

std::size_t heap_in_use() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

TEST(Scale, OneGiBRingAllReduceOn8192RanksIsCheap) {
  const std::size_t before = heap_in_use();
  Request r;
  r.algorithm = "ring";
  r.count = (std::uint64_t{1} << 30) / 4;
  r.comm = Communicator::grid(1024, 8);
  r.channels = 16;
  Schedule s = generate(r);
  // Per stream: a 64 MiB channel region is one loop (8192 x 2 MiB > 64 MiB) of 2(p-1)+1 steps,
  // each in 2 slices: 16383 x 2 = 32766 ops; 8192 x 16 streams.
  EXPECT_EQ(s.op_count(17, 5), 32766u);
  EXPECT_EQ(s.total_ops(), 32766ull * 8192 * 16);
  EXPECT_LT(heap_in_use() - before, std::size_t{16} << 20);

  const ValidationReport rep = validate(s);
  EXPECT_FALSE(rep.exhaustive);
  EXPECT_GT(rep.ops_checked, 100'000u);
  EXPECT_LT(heap_in_use() - before, std::size_t{64} << 20);

  // Random access agrees with the sequential cursor on sampled streams.
  std::mt19937_64 rng(7);
  for (int k = 0; k < 3; ++k) {
    const int rank = static_cast<int>(rng() % 8192);
    const int channel = static_cast<int>(rng() % 16);
    for (OpCursor c = s.cursor(rank, channel); !c.done(); c.next()) {
      ASSERT_EQ(c.op(), s.op(rank, channel, c.index()))
          << rank << " " << channel << " " << c.index();
    }
  }
}

// Tree-shaped and logarithmic algorithms are on demand too.
TEST(Scale, LargeTreeAndRhdSchedulesAreOnDemand) {
  const std::size_t before = heap_in_use();
  for (const char* algo : {"dbtree", "bintree", "rhd", "ring2d"}) {
    Request r;
    r.algorithm = algo;
    r.count = (std::uint64_t{1} << 30) / 4;
    r.comm = Communicator::grid(1024, 8);
    r.channels = 16;
    Schedule s = generate(r);
    EXPECT_GT(s.total_ops(), 10'000'000u) << algo;
    validate(s);
    const Op op = s.op(4095, s.channel_count() - 1, s.op_count(4095, s.channel_count() - 1) / 2);
    EXPECT_GT(op.bytes, 0u) << algo;
  }
  EXPECT_LT(heap_in_use() - before, std::size_t{64} << 20);
}

}  // namespace
}  // namespace collsim
