// The simulator's event queue: events come out in (time, sequence number) order, so that events
// at the same picosecond run in the order they were scheduled and a run is deterministic (ns-3's
// src/core/model/scheduler.h orders the same way).
//
// An event is 16 bytes: the time and one word holding the sequence number (high bits), the kind
// and the target. Sequence numbers are unique, so (time, word) is a total order: the pop order
// is fixed by the events alone, whatever structure holds them. A superseded event is recognised
// by its sequence number (push() returns it), so events need no generation field.
//
// The structure is a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, "Faster algorithms for the
// shortest path problem", J. ACM 37(2), 1990), which a discrete-event simulation may use because
// its keys are monotone: nothing is scheduled before the event being handled (times never go
// back, and an event at the same picosecond gets a larger sequence number). Keys are the 128
// bits (time, word); bucket b holds the keys whose highest bit differing from the last key popped
// is bit b - 1 (bucket 0: the last key itself). A pop empties the lowest non-empty bucket into
// the buckets below it around that bucket's minimum, which is then alone in bucket 0. Each event
// moves down a few times at most, through contiguous vectors: no sift with a branch per level
// that the processor cannot predict, which was most of a 4-ary heap's cost once it held
// ~10^4 pending events (one wake-up per stream).
//
//   EventQueue q;
//   std::uint64_t seq = q.push(us(1), EventKind::kWake, stream);
//   while (!q.empty()) { Event e = q.pop(); if (e.seq() == seq) ... }
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "topology/units.hpp"

namespace collsim::detail {

enum class EventKind : std::uint8_t {
  kWake,      // a stream re-examines what it can do; target = stream
  kFlowDone,  // a flow may have finished; target = flow
};

// Targets (streams, flows) below this bound fit an event.
inline constexpr std::uint32_t kMaxEventTarget = 1u << 24;
// No event has this sequence number.
inline constexpr std::uint64_t kNoEvent = ~std::uint64_t{0};

struct Event {
  std::uint64_t time_ps = 0;  // times are never negative
  std::uint64_t word = 0;     // seq << 25 | kind << 24 | target

  EventKind kind() const { return static_cast<EventKind>((word >> 24) & 1); }
  std::uint32_t target() const { return static_cast<std::uint32_t>(word & (kMaxEventTarget - 1)); }
  std::uint64_t seq() const { return word >> 25; }
  Time time() const { return Time::from_ps(static_cast<std::int64_t>(time_ps)); }
};

class EventQueue {
 public:
  // Requires target < kMaxEventTarget and t >= 0, and t no earlier than the last event popped.
  // Returns the event's sequence number.
  std::uint64_t push(Time t, EventKind kind, std::uint32_t target) {
    const std::uint64_t seq = next_seq_++;
    place(Event{static_cast<std::uint64_t>(t.ps()),
                seq << 25 | static_cast<std::uint64_t>(kind) << 24 | target});
    ++size_;
    return seq;
  }
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  // Whether an event is pending at the time of the last one popped. A key that differs from the
  // last key popped only in its word (the same picosecond) lies in buckets 1 to 64, a key of a
  // later time in 65 and above, and bucket 0, which held the last key, is empty after its pop.
  bool more_at_last_time() const {
    return (occupied_[0] & ~std::uint64_t{1}) != 0 || (occupied_[1] & 1) != 0;
  }

  // Requires !empty().
  Event pop() {
    if (buckets_[0].empty()) refill();
    const Event e = buckets_[0].back();
    buckets_[0].pop_back();
    if (buckets_[0].empty()) occupied_[0] &= ~std::uint64_t{1};
    --size_;
    return e;
  }

 private:
  static constexpr int kBuckets = 129;  // bucket 0, then one per bit of the 128-bit key
  static constexpr int kWords = (kBuckets + 63) / 64;

  static bool before(const Event& a, const Event& b) {
    return a.time_ps != b.time_ps ? a.time_ps < b.time_ps : a.word < b.word;
  }
  // The bucket of `e` relative to the last key popped: one past the highest differing bit.
  int bucket_of(const Event& e) const {
    if (e.time_ps != last_.time_ps) return 64 + std::bit_width(e.time_ps ^ last_.time_ps);
    return std::bit_width(e.word ^ last_.word);
  }
  void place(const Event& e) {
    const int b = bucket_of(e);
    buckets_[b].push_back(e);
    occupied_[b / 64] |= std::uint64_t{1} << (b % 64);
  }
  // The lowest non-empty bucket's minimum becomes the last key; the bucket's events move below
  // it (each shares more leading bits with the new last key than it did with the old one).
  void refill() {
    int b = 0;
    for (int w = 0; w < kWords; ++w) {
      if (occupied_[w] != 0) {
        b = w * 64 + std::countr_zero(occupied_[w]);
        break;
      }
    }
    std::vector<Event>& from = buckets_[b];
    last_ = *std::min_element(from.begin(), from.end(), before);
    occupied_[b / 64] &= ~(std::uint64_t{1} << (b % 64));
    for (const Event& e : from) place(e);
    from.clear();
  }

  std::array<std::vector<Event>, kBuckets> buckets_;
  std::array<std::uint64_t, kWords> occupied_{};
  Event last_;  // the last key popped (the least key at first)
  std::size_t size_ = 0;
  std::uint64_t next_seq_ = 0;
};

}  // namespace collsim::detail
