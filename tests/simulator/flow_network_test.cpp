// The max-min network's flow classes against answers worked by hand: flows of one route share
// its rate as a processor-sharing queue (the shortest done first, the rest speeding up), and
// classes of different routes share a link by max-min. Rates like 1e9/3 are not exact in binary,
// so a finish may round to the neighbouring picosecond: comparisons allow 1 ps.
#include "simulator/flow_network.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <utility>
#include <vector>

namespace collsim::detail {
namespace {

constexpr double kGBps = 1e9;

// Runs the queue to the end: flows listed in `later` start when the clock reaches their time.
// Returns owner -> finish time in ps.
struct Start {
  std::int64_t at_ps;
  RouteInfo route;
  std::uint64_t bytes;
  std::uint32_t owner;
};
std::map<std::uint32_t, std::int64_t> run(const std::vector<double>& capacity,
                                          const std::vector<std::uint32_t>& route_links,
                                          const std::vector<Start>& starts) {
  EventQueue q;
  FlowNetwork net(capacity, route_links, q);
  for (std::uint32_t i = 0; i < starts.size(); ++i) {
    q.push(Time::from_ps(starts[i].at_ps), EventKind::kWake, i);
  }
  std::map<std::uint32_t, std::int64_t> done;
  while (!q.empty()) {
    const Event e = q.pop();
    if (e.kind() == EventKind::kWake) {
      const Start& s = starts[e.target()];
      net.start(s.route, s.bytes, e.time(), s.owner);
      continue;
    }
    std::uint32_t owner = 0;
    if (net.finish(e.target(), e.seq(), e.time(), owner)) done[owner] = e.time().ps();
  }
  EXPECT_EQ(net.active_flows(), 0u);
  return done;
}

RouteInfo route(std::uint32_t first, std::uint32_t count,
                double cap = std::numeric_limits<double>::infinity()) {
  RouteInfo r;
  r.first_link = first;
  r.link_count = count;
  r.cap = cap;
  return r;
}

// Three flows of 1000, 2000 and 3000 B start together on one 1 GB/s link: each gets a third
// until the first is done at 3 us, then a half (the second is done 2 us later), then all of it.
TEST(FlowNetwork, FlowsOfOneRouteShareItAsAProcessorSharingQueue) {
  const auto done =
      run({kGBps}, {0},
          {{0, route(0, 1), 1000, 7}, {0, route(0, 1), 3000, 9}, {0, route(0, 1), 2000, 8}});
  ASSERT_EQ(done.size(), 3u);
  EXPECT_NEAR(done.at(7), 3'000'000, 1);
  EXPECT_NEAR(done.at(8), 5'000'000, 1);
  EXPECT_NEAR(done.at(9), 6'000'000, 1);
}

// A flow that joins a busy class starts its count at the class's clock: 3000 B alone for 1 us
// (1000 B served), then a 1000 B flow joins and both get 0.5 GB/s; the newcomer is done at
// 3 us, the first has 1000 B left then and finishes at 4 us.
TEST(FlowNetwork, AFlowJoiningABusyClassIsServedFromItsStart) {
  const auto done =
      run({kGBps}, {0}, {{0, route(0, 1), 3000, 1}, {1'000'000, route(0, 1), 1000, 2}});
  EXPECT_NEAR(done.at(2), 3'000'000, 1);
  EXPECT_NEAR(done.at(1), 4'000'000, 1);
}

// Two identical flows due at the same instant both end then, the first started first.
TEST(FlowNetwork, FlowsDueTogetherEndTogether) {
  const auto done = run({2 * kGBps}, {0}, {{0, route(0, 1), 1000, 1}, {0, route(0, 1), 1000, 2}});
  EXPECT_NEAR(done.at(1), 1'000'000, 1);
  EXPECT_NEAR(done.at(2), 1'000'000, 1);
}

// Classes of different routes share by max-min, each weighing its flows: route A crosses link 0
// only, route B links 0 and 1. Link 1 (0.5 GB/s) holds B's two flows to 0.25 GB/s each, 0.5 GB/s
// of link 0 together, so A's one flow gets the other 0.5. B's flows (500 B each) are done at
// 2 us; A (2000 B) has 1000 B left then and takes 1 us more at the full link.
TEST(FlowNetwork, ClassesShareALinkByMaxMinWeightedByTheirFlows) {
  const std::vector<std::uint32_t> links = {0, 0, 1};  // A: [0]; B: [0, 1]
  const auto done =
      run({kGBps, 0.5 * kGBps}, links,
          {{0, route(0, 1), 2000, 1}, {0, route(1, 2), 500, 2}, {0, route(1, 2), 500, 3}});
  EXPECT_NEAR(done.at(2), 2'000'000, 1);
  EXPECT_NEAR(done.at(3), 2'000'000, 1);
  EXPECT_NEAR(done.at(1), 3'000'000, 1);
}

// A channel cap holds every flow of a class: two flows capped at 0.2 GB/s on a 1 GB/s link
// take 1000 B / 0.2 GB/s = 5 us, whatever the link has left.
TEST(FlowNetwork, TheChannelCapHoldsEachFlow) {
  const auto done =
      run({kGBps}, {0},
          {{0, route(0, 1, 0.2 * kGBps), 1000, 1}, {0, route(0, 1, 0.2 * kGBps), 1000, 2}});
  EXPECT_NEAR(done.at(1), 5'000'000, 1);
  EXPECT_NEAR(done.at(2), 5'000'000, 1);
}

// A class alone on its links (the common case, re-rated without the touched links' bookkeeping)
// is held by its tightest link wherever on the route it lies, and gets its rate back exactly
// when a class that shared a link leaves. Route A crosses links 0, 1, 2 (2, 0.5 and 1 GB/s): its
// two flows of 500 B get 0.25 GB/s each from link 1 and are done at 2 us. Route B (link 2 only,
// 1500 B) shares link 2 with A until then: max-min gives it the 0.5 GB/s A leaves (1000 B done
// at 2 us), then alone all of link 2: its last 500 B take 0.5 us more.
TEST(FlowNetwork, AClassAloneIsHeldByItsTightestLink) {
  const std::vector<std::uint32_t> links = {0, 1, 2, 2};  // A: [0, 1, 2]; B: [2]
  const auto done =
      run({2 * kGBps, 0.5 * kGBps, kGBps}, links,
          {{0, route(0, 3), 500, 1}, {0, route(0, 3), 500, 2}, {0, route(3, 1), 1500, 3}});
  EXPECT_NEAR(done.at(1), 2'000'000, 1);
  EXPECT_NEAR(done.at(2), 2'000'000, 1);
  EXPECT_NEAR(done.at(3), 2'500'000, 1);
  // Alone from the start, A is held by link 1 all the same.
  const auto alone = run({2 * kGBps, 0.5 * kGBps, kGBps}, {0, 1, 2}, {{0, route(0, 3), 500, 1}});
  EXPECT_NEAR(alone.at(1), 1'000'000, 1);
}

// A class exists while it has flows: its id is reused by the next route that needs one, so ids
// stay below the number of flows in flight (an event names its class in 24 bits), however many
// routes a run uses one after another (alltoall on thousands of GPUs uses millions).
TEST(FlowNetwork, AnEmptiedClassGivesItsIdToTheNextRoute) {
  const std::vector<std::uint32_t> links = {0, 1, 2};
  EventQueue q;
  FlowNetwork net({kGBps, kGBps, kGBps}, links, q);
  for (std::uint32_t r = 0; r < 3; ++r) {
    net.start(route(r, 1), 1000, Time::from_ps(0), r);
    const Event e = q.pop();
    ASSERT_EQ(e.kind(), EventKind::kFlowDone);
    EXPECT_EQ(e.target(), 0u) << "route " << r;
    std::uint32_t owner = 99;
    ASSERT_TRUE(net.finish(e.target(), e.seq(), e.time(), owner));
    EXPECT_EQ(owner, r);
    EXPECT_TRUE(q.empty());
  }
}

}  // namespace
}  // namespace collsim::detail
