// The simulator's event queue: a 4-ary min-heap ordered by (time, sequence number), so that
// events at the same picosecond run in the order they were scheduled and a run is deterministic
// (ns-3's src/core/model/scheduler.h orders the same way).
//
// The heap is bound by memory traffic once it holds ~10^4..10^5 pending wake-ups (one per
// stream), so an event is 16 bytes: the time and one word holding the sequence number (high
// bits), the kind and the target. The four children of a node are then one 64-byte cache line,
// and the storage is laid out so that every group of siblings starts on a line. Since sequence
// numbers are unique, (time, word) is a total order and the pop order does not depend on the
// heap's shape; pop() uses the bottom-up sift (Wegener), about half the comparisons of the
// classic one. A superseded event is recognised by its sequence number (push() returns it), so
// events need no generation field.
//
//   EventQueue q;
//   std::uint64_t seq = q.push(us(1), EventKind::kWake, stream);
//   while (!q.empty()) { Event e = q.pop(); if (e.seq() == seq) ... }
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
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
  EventQueue() : heap_(kPad) {}

  // Requires target < kMaxEventTarget and t >= 0. Returns the event's sequence number.
  std::uint64_t push(Time t, EventKind kind, std::uint32_t target) {
    const std::uint64_t seq = next_seq_++;
    const Event e{static_cast<std::uint64_t>(t.ps()),
                  seq << 25 | static_cast<std::uint64_t>(kind) << 24 | target};
    heap_.push_back(e);
    sift_up(size() - 1, e);
    return seq;
  }
  bool empty() const { return heap_.size() == kPad; }
  std::size_t size() const { return heap_.size() - kPad; }

  Event pop() {
    const Event top = at(0);
    const Event last = heap_.back();
    heap_.pop_back();
    const std::size_t n = size();
    if (n == 0) return top;
    // Move the hole at the root down to a leaf along the smaller children, then put the last
    // element into it and sift it up (it usually stays near the bottom).
    std::size_t hole = 0;
    while (true) {
      const std::size_t first = kArity * hole + 1;
      if (first >= n) break;
      std::size_t child = first;
      if (first + kArity <= n) {
        const std::size_t a = before(at(first + 1), at(first)) ? first + 1 : first;
        const std::size_t b = before(at(first + 3), at(first + 2)) ? first + 3 : first + 2;
        child = before(at(b), at(a)) ? b : a;
      } else {
        for (std::size_t c = first + 1; c < n; ++c) {
          if (before(at(c), at(child))) child = c;
        }
      }
      at(hole) = at(child);
      hole = child;
    }
    sift_up(hole, last);
    return top;
  }

 private:
  static bool before(const Event& a, const Event& b) {
    return a.time_ps != b.time_ps ? a.time_ps < b.time_ps : a.word < b.word;
  }
  // Element i lives at heap_[i + kPad]: the children of i, 4i+1..4i+4, then start on a 64-byte
  // boundary of the aligned storage.
  Event& at(std::size_t i) { return heap_[i + kPad]; }
  void sift_up(std::size_t i, const Event e) {
    while (i > 0) {
      const std::size_t parent = (i - 1) / kArity;
      if (!before(e, at(parent))) break;
      at(i) = at(parent);
      i = parent;
    }
    at(i) = e;
  }

  template <class T>
  struct LineAligned {
    using value_type = T;
    static constexpr std::align_val_t kAlign{64};
    LineAligned() = default;
    template <class U>
    LineAligned(const LineAligned<U>&) {}
    T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlign)); }
    void deallocate(T* p, std::size_t) { ::operator delete(p, kAlign); }
    template <class U>
    bool operator==(const LineAligned<U>&) const {
      return true;
    }
  };

  static constexpr std::size_t kArity = 4;
  static constexpr std::size_t kPad = 3;
  std::vector<Event, LineAligned<Event>> heap_;
  std::uint64_t next_seq_ = 0;
};

}  // namespace collsim::detail
