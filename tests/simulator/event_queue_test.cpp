// The event queue pops in (time, sequence number) order whatever order the events were pushed
// in, as long as none is scheduled before the event last popped (what a simulation does).
#include "simulator/event_queue.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <tuple>
#include <vector>

namespace collsim::detail {
namespace {

// Events at a few distinct instants (ties are common in the engine: copies of a piece, several
// streams woken at once), pushed in bursts between pops, each no earlier than the last popped.
// The pops must come out as the pushed events sorted by (time, sequence number), and after each
// pop the queue knows whether another event is due at the same instant.
TEST(EventQueue, PopsInTimeThenScheduleOrder) {
  std::mt19937_64 rng(7);
  EventQueue q;
  std::vector<std::tuple<std::uint64_t, std::uint64_t, std::uint32_t>> pushed;  // time, seq, target
  std::vector<std::tuple<std::uint64_t, std::uint64_t, std::uint32_t>> popped;
  std::multiset<std::uint64_t> pending;  // times pushed and not yet popped
  std::uint64_t now = 0;
  for (int round = 0; round < 2000; ++round) {
    const int burst = static_cast<int>(rng() % 6);
    for (int k = 0; k < burst; ++k) {
      // Now, a little later, or much later: keys that differ in low and in high bits.
      const std::uint64_t delay = rng() % 3 == 0   ? 0
                                  : rng() % 4 == 0 ? rng() % (1u << 30)
                                                   : rng() % 64;
      const std::uint32_t target = static_cast<std::uint32_t>(rng() % kMaxEventTarget);
      const EventKind kind = rng() % 2 == 0 ? EventKind::kWake : EventKind::kFlowDone;
      const std::uint64_t seq =
          q.push(Time::from_ps(static_cast<std::int64_t>(now + delay)), kind, target);
      pushed.emplace_back(now + delay, seq, target);
      pending.insert(now + delay);
    }
    const int pops = static_cast<int>(rng() % 5);
    for (int k = 0; k < pops && !q.empty(); ++k) {
      const Event e = q.pop();
      ASSERT_GE(static_cast<std::uint64_t>(e.time().ps()), now);
      now = static_cast<std::uint64_t>(e.time().ps());
      popped.emplace_back(now, e.seq(), e.target());
      pending.erase(pending.find(now));
      // Whether another event is due at this instant: what the engine asks before it re-rates.
      ASSERT_EQ(q.more_at_last_time(), pending.count(now) > 0) << "at " << now;
    }
  }
  while (!q.empty()) {
    const Event e = q.pop();
    popped.emplace_back(static_cast<std::uint64_t>(e.time().ps()), e.seq(), e.target());
  }
  EXPECT_EQ(q.size(), 0u);
  ASSERT_EQ(popped.size(), pushed.size());
  // The pops are in order, and they are exactly the pushed events.
  EXPECT_TRUE(std::is_sorted(popped.begin(), popped.end()));
  std::sort(pushed.begin(), pushed.end());
  EXPECT_EQ(popped, pushed);
}

// An event's word carries its kind and target beside the sequence number.
TEST(EventQueue, KeepsKindAndTarget) {
  EventQueue q;
  const std::uint64_t a = q.push(Time::from_ps(5), EventKind::kFlowDone, kMaxEventTarget - 1);
  const std::uint64_t b = q.push(Time::from_ps(5), EventKind::kWake, 3);
  const std::uint64_t c = q.push(Time::from_ps(2), EventKind::kWake, 9);
  EXPECT_EQ(q.size(), 3u);
  Event e = q.pop();
  EXPECT_EQ(e.seq(), c);
  EXPECT_EQ(e.target(), 9u);
  e = q.pop();
  EXPECT_EQ(e.seq(), a);  // same instant: scheduled first, popped first
  EXPECT_EQ(e.kind(), EventKind::kFlowDone);
  EXPECT_EQ(e.target(), kMaxEventTarget - 1);
  e = q.pop();
  EXPECT_EQ(e.seq(), b);
  EXPECT_EQ(e.kind(), EventKind::kWake);
  EXPECT_TRUE(q.empty());
}

}  // namespace
}  // namespace collsim::detail
