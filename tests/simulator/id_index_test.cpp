// IdIndex answers what std::unordered_map would, through its growths.
#include "simulator/id_index.hpp"

#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

namespace collsim::detail {
namespace {

TEST(IdIndex, FindsWhatWasInsertedThroughItsGrowths) {
  IdIndex index;
  EXPECT_EQ(index.find(0), IdIndex::kNone);
  std::unordered_map<std::uint64_t, std::uint32_t> want;
  std::mt19937_64 rng(3);
  for (std::uint32_t id = 0; id < 5000; ++id) {
    // Packed keys like the engine's (small fields, low bits alike), and arbitrary ones.
    const std::uint64_t key = id % 2 == 0 ? (std::uint64_t{id} << 16) : rng();
    if (want.count(key) != 0) continue;
    index.insert(key, id);
    want[key] = id;
    if (id % 97 == 0) {  // between growths too
      for (const auto& [k, v] : want) ASSERT_EQ(index.find(k), v);
    }
  }
  EXPECT_EQ(index.size(), want.size());
  for (const auto& [k, v] : want) EXPECT_EQ(index.find(k), v);
  for (int i = 0; i < 1000; ++i) {
    const std::uint64_t k = rng();
    if (want.count(k) == 0) {
      EXPECT_EQ(index.find(k), IdIndex::kNone);
    }
  }
}

// assign() moves a key that is there to another id, as the engine moves the head of a pair's
// chain of routes (engine.hpp); the other keys and the size stay as they were, and a key that
// is not there is not added.
TEST(IdIndex, AssignMovesAKeyToAnotherId) {
  IdIndex index;
  std::unordered_map<std::uint64_t, std::uint32_t> want;
  for (std::uint32_t id = 0; id < 3000; ++id) {
    const std::uint64_t key = std::uint64_t{id} << 32 | (id * 7u);
    index.insert(key, id);
    want[key] = id;
  }
  for (auto& [k, v] : want) {
    if (v % 3 == 0) {
      v += 100000;
      EXPECT_TRUE(index.assign(k, v));
    }
  }
  EXPECT_FALSE(index.assign(std::uint64_t{1} << 63, 7));  // absent: nothing changes
  EXPECT_FALSE(IdIndex{}.assign(1, 7));
  EXPECT_EQ(index.size(), want.size());
  for (const auto& [k, v] : want) EXPECT_EQ(index.find(k), v);
}

}  // namespace
}  // namespace collsim::detail
