// An index from 64-bit keys to 32-bit ids (internal to simulator/): open addressing with linear
// probing in a power-of-two table kept at most half full, the key and its id side by side. The
// engine looks a connection up each time a stream's peer changes, which on NVLSTree is every op
// of a switch or a head (it takes turns between its members, or its switch and tree
// neighbours); std::unordered_map's node per entry and its division by a prime made that lookup
// 8 % of a 64-node NVLSTree run.
//
//   IdIndex index;
//   if (std::uint32_t id = index.find(key); id != IdIndex::kNone) return id;
//   index.insert(key, next_id);
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace collsim::detail {

class IdIndex {
 public:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};

  // The id stored for `key`, or kNone.
  std::uint32_t find(std::uint64_t key) const {
    if (slots_.empty()) return kNone;
    for (std::size_t i = hash(key) & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.id == kNone) return kNone;
      if (s.key == key) return s.id;
    }
  }
  // Requires `key` absent and id != kNone.
  void insert(std::uint64_t key, std::uint32_t id) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    place(key, id);
    ++size_;
  }
  // `key`, when present, now maps to `id` (!= kNone); true if it was there.
  bool assign(std::uint64_t key, std::uint32_t id) {
    if (slots_.empty()) return false;
    for (std::size_t i = hash(key) & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.id == kNone) return false;
      if (s.key == key) {
        s.id = id;
        return true;
      }
    }
  }
  std::size_t size() const { return size_; }

 private:
  struct Slot {
    std::uint64_t key = 0;
    std::uint32_t id = kNone;  // kNone: empty
  };
  // A 64-bit finaliser (MurmurHash3's fmix64): the keys are packed fields whose low bits vary
  // least, and the table's index takes the low bits.
  static std::size_t hash(std::uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return static_cast<std::size_t>(k);
  }
  void place(std::uint64_t key, std::uint32_t id) {
    std::size_t i = hash(key) & mask_;
    while (slots_[i].id != kNone) i = (i + 1) & mask_;
    slots_[i] = Slot{key, id};
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 64 : 2 * old.size(), Slot{});
    mask_ = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.id != kNone) place(s.key, s.id);
    }
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace collsim::detail
