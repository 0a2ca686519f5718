// The simulator's event queue: a 4-ary min-heap ordered by (time, sequence number), so that
// events at the same picosecond run in the order they were scheduled and a run is deterministic
// (ns-3's src/core/model/scheduler.h orders the same way). Events are plain 24-byte values; the
// heap lives in one vector that grows to the peak number of pending events and is reused. Four
// children per node halve the depth of a binary heap and keep siblings in one or two cache
// lines, which is what a queue of ~10^5 pending wake-ups is bound by.
//
//   EventQueue q;
//   q.push(Event{us(1), 0, EventKind::kWake, stream, gen});   // seq is assigned by push
//   while (!q.empty()) { Event e = q.pop(); ... }
#pragma once

#include <cstdint>
#include <vector>

#include "topology/units.hpp"

namespace collsim::detail {

enum class EventKind : std::uint8_t {
  kWake,      // a stream re-examines what it can do; target = stream, gen = its wake generation
  kFlowDone,  // a flow may have finished; target = flow, gen = its version
};

struct Event {
  std::int64_t time_ps = 0;
  std::uint64_t seq_kind = 0;  // sequence number << 8 | kind (one word keeps the heap compact)
  std::uint32_t target = 0;
  std::uint32_t gen = 0;

  EventKind kind() const { return static_cast<EventKind>(seq_kind & 0xff); }
  Time time() const { return Time::from_ps(time_ps); }
};

class EventQueue {
 public:
  void push(Time t, EventKind kind, std::uint32_t target, std::uint32_t gen) {
    heap_.push_back(
        Event{t.ps(), (next_seq_++ << 8) | static_cast<std::uint64_t>(kind), target, gen});
    sift_up(heap_.size() - 1);
  }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  std::size_t capacity() const { return heap_.capacity(); }

  Event pop() {
    Event top = heap_.front();
    heap_.front() = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(0);
    return top;
  }

 private:
  static bool before(const Event& a, const Event& b) {
    return a.time_ps != b.time_ps ? a.time_ps < b.time_ps : a.seq_kind < b.seq_kind;
  }
  void sift_up(std::size_t i) {
    const Event e = heap_[i];
    while (i > 0) {
      const std::size_t parent = (i - 1) / kArity;
      if (!before(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }
  void sift_down(std::size_t i) {
    const std::size_t n = heap_.size();
    const Event e = heap_[i];
    while (true) {
      const std::size_t first = kArity * i + 1;
      if (first >= n) break;
      std::size_t child = first;
      const std::size_t last = first + kArity < n ? first + kArity : n;
      for (std::size_t c = first + 1; c < last; ++c) {
        if (before(heap_[c], heap_[child])) child = c;
      }
      if (!before(heap_[child], e)) break;
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = e;
  }

  static constexpr std::size_t kArity = 4;
  std::vector<Event> heap_;
  std::uint64_t next_seq_ = 0;
};

}  // namespace collsim::detail
