// The max-min network's flow classes against answers worked by hand: flows of one route share
// its rate as a processor-sharing queue (the shortest done first, the rest speeding up), and
// classes of different routes share a link by max-min. Rates like 1e9/3 are not exact in binary,
// so a finish may round to the neighbouring picosecond: comparisons allow 1 ps.
#include "simulator/flow_network.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
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
// `settle_each`: re-rate after every start and end, not once an instant is over;
// `linear_rounds`: FlowNetwork::set_linear_rounds (negative: its default).
std::map<std::uint32_t, std::int64_t> run(const std::vector<double>& capacity,
                                          const std::vector<std::uint32_t>& route_links,
                                          const std::vector<Start>& starts,
                                          bool cap_shortcut = true, bool settle_each = false,
                                          int linear_rounds = -1) {
  EventQueue q;
  FlowNetwork net(capacity, route_links, q);
  net.set_cap_shortcut(cap_shortcut);
  if (linear_rounds >= 0) net.set_linear_rounds(linear_rounds);
  for (std::uint32_t i = 0; i < starts.size(); ++i) {
    q.push(Time::from_ps(starts[i].at_ps), EventKind::kWake, i);
  }
  std::map<std::uint32_t, std::int64_t> done;
  Time now;
  for (;;) {
    if (net.unsettled() && (settle_each || !q.more_at_last_time())) net.settle(now);
    if (q.empty()) break;
    const Event e = q.pop();
    now = e.time();
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

// `n` link capacities drawn from 1 to 40 GB/s.
std::vector<double> random_capacities(std::mt19937_64& rng, int n) {
  std::vector<double> capacity;
  for (int l = 0; l < n; ++l) capacity.push_back((1 + static_cast<double>(rng() % 40)) * 1e9);
  return capacity;
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
    net.settle(Time::from_ps(0));
    const Event e = q.pop();
    ASSERT_EQ(e.kind(), EventKind::kFlowDone);
    EXPECT_EQ(e.target(), 0u) << "route " << r;
    std::uint32_t owner = 99;
    ASSERT_TRUE(net.finish(e.target(), e.seq(), e.time(), owner));
    net.settle(e.time());
    EXPECT_EQ(owner, r);
    EXPECT_TRUE(q.empty());
  }
}

// Classes of different routes whose flows all fit on their links at the common channel cap run
// at the cap (re-rated without the filling, FlowNetwork::cap_feasible), and the moment one flow
// more would not fit, they share by max-min again. Link 0 (1 GB/s) carries routes A [0], B [0,
// 1] and C [0, 2], each flow capped at 0.4 GB/s: A and B alone fit (0.8 GB/s), both 800 B done
// at 2 us. With C too, three flows ask 1.2 GB/s: each gets a third of link 0, and 800 B take
// 2.4 us; once A (400 B) is done at 1.2 us, B and C are back at the cap, their last 400 B
// taking 1 us (2.2 us in all).
TEST(FlowNetwork, FlowsThatFitAtTheCapRunAtItAndShareOnceTheyDoNot) {
  const double cap = 0.4 * kGBps;
  const std::vector<std::uint32_t> links = {0, 0, 1, 0, 2};  // A: [0]; B: [0, 1]; C: [0, 2]
  const std::vector<double> capacity = {kGBps, kGBps, kGBps};
  const auto two =
      run(capacity, links, {{0, route(0, 1, cap), 800, 1}, {0, route(1, 2, cap), 800, 2}});
  EXPECT_NEAR(two.at(1), 2'000'000, 1);
  EXPECT_NEAR(two.at(2), 2'000'000, 1);
  const auto three = run(capacity, links,
                         {{0, route(0, 1, cap), 400, 1},
                          {0, route(1, 2, cap), 800, 2},
                          {0, route(3, 2, cap), 800, 3}});
  EXPECT_NEAR(three.at(1), 1'200'000, 1);
  EXPECT_NEAR(three.at(2), 2'200'000, 1);
  EXPECT_NEAR(three.at(3), 2'200'000, 1);
  // A cap that differs between routes: the filling decides every time.
  const auto mixed = run(capacity, links,
                         {{0, route(0, 1, cap), 400, 1},
                          {0, route(1, 2, cap), 800, 2},
                          {0, route(3, 2, 0.9 * kGBps), 800, 3}});
  EXPECT_NEAR(mixed.at(1), 1'200'000, 1);
  // C keeps a third until A is done, then takes what B's cap leaves: 0.6 GB/s for its last
  // 400 B, 0.667 us more.
  EXPECT_NEAR(mixed.at(2), 2'200'000, 1);
  EXPECT_NEAR(mixed.at(3), 1'866'667, 1);
}

// The shortcut against the filling it stands for, on random networks: links of random
// capacity, routes of one to three of them, one cap for every route (tight enough that some
// links fit their flows at it and others do not), flows of random sizes starting at random
// times. Every flow ends at the same picosecond either way.
TEST(FlowNetwork, TheCapShortcutAgreesWithTheFillingOnRandomNetworks) {
  std::mt19937_64 rng(20261129);
  int compared = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int nlinks = 1 + static_cast<int>(rng() % 6);
    const std::vector<double> capacity = random_capacities(rng, nlinks);
    std::vector<std::uint32_t> links;
    std::vector<RouteInfo> routes;
    const double cap = (1 + static_cast<double>(rng() % 12)) * 1e9;
    for (int r = 0; r < 5; ++r) {
      const auto first = static_cast<std::uint32_t>(links.size());
      const std::uint32_t count = 1 + static_cast<std::uint32_t>(rng() % std::min(3, nlinks));
      std::vector<std::uint32_t> used;
      while (used.size() < count) {
        const auto l = static_cast<std::uint32_t>(rng() % static_cast<std::uint64_t>(nlinks));
        if (std::find(used.begin(), used.end(), l) == used.end()) used.push_back(l);
      }
      links.insert(links.end(), used.begin(), used.end());
      routes.push_back(route(first, count, cap));
    }
    std::vector<Start> starts;
    for (std::uint32_t f = 0; f < 12; ++f) {
      starts.push_back({static_cast<std::int64_t>(rng() % 5'000'000), routes[rng() % routes.size()],
                        1 + rng() % 20'000, f});
    }
    const auto fast = run(capacity, links, starts, true);
    const auto slow = run(capacity, links, starts, false);
    ASSERT_EQ(fast.size(), starts.size());
    EXPECT_EQ(fast, slow) << "trial " << trial;
    compared += static_cast<int>(fast.size());
  }
  EXPECT_EQ(compared, 300 * 12);
}

// Max-min by progressive filling from scratch over every flow in flight, recomputed whenever a
// flow starts or ends, in doubles: the reference the flow network's classes, its re-rating once
// an instant is over, and its heap must agree with. Returns owner -> finish time in ps.
std::map<std::uint32_t, double> reference_max_min(const std::vector<double>& capacity,
                                                  const std::vector<std::uint32_t>& route_links,
                                                  std::vector<Start> starts) {
  struct Flow {
    RouteInfo route;
    double left;
    std::uint32_t owner;
    double rate = 0;
  };
  std::sort(starts.begin(), starts.end(),
            [](const Start& a, const Start& b) { return a.at_ps < b.at_ps; });
  std::vector<Flow> flows;
  std::map<std::uint32_t, double> done;
  double now = 0;  // ps
  std::size_t next = 0;
  while (next < starts.size() || !flows.empty()) {
    while (next < starts.size() && static_cast<double>(starts[next].at_ps) <= now) {
      flows.push_back(
          {starts[next].route, static_cast<double>(starts[next].bytes), starts[next].owner});
      ++next;
    }
    // Progressive filling: the smallest of the links' fair shares and the caps freezes first.
    std::vector<double> residual = capacity;
    std::vector<bool> frozen(flows.size(), false);
    for (std::size_t left = flows.size(); left > 0;) {
      std::vector<int> unfrozen(capacity.size(), 0);
      for (std::size_t f = 0; f < flows.size(); ++f) {
        if (frozen[f]) continue;
        for (std::uint32_t i = 0; i < flows[f].route.link_count; ++i) {
          ++unfrozen[route_links[flows[f].route.first_link + i]];
        }
      }
      double level = std::numeric_limits<double>::infinity();
      for (std::size_t l = 0; l < capacity.size(); ++l) {
        if (unfrozen[l] > 0) level = std::min(level, residual[l] / unfrozen[l]);
      }
      for (std::size_t f = 0; f < flows.size(); ++f) {
        if (!frozen[f]) level = std::min(level, flows[f].route.cap);
      }
      std::vector<std::size_t> freeze;
      for (std::size_t f = 0; f < flows.size(); ++f) {
        if (frozen[f]) continue;
        bool hit = flows[f].route.cap <= level * (1 + 1e-12);
        for (std::uint32_t i = 0; !hit && i < flows[f].route.link_count; ++i) {
          const std::uint32_t l = route_links[flows[f].route.first_link + i];
          hit = residual[l] / unfrozen[l] <= level * (1 + 1e-12);
        }
        if (hit) freeze.push_back(f);
      }
      for (std::size_t f : freeze) {
        frozen[f] = true;
        flows[f].rate = level;
        for (std::uint32_t i = 0; i < flows[f].route.link_count; ++i) {
          residual[route_links[flows[f].route.first_link + i]] -= level;
        }
      }
      left -= freeze.size();
    }
    double step = next < starts.size() ? static_cast<double>(starts[next].at_ps) - now
                                       : std::numeric_limits<double>::infinity();
    for (const Flow& f : flows) step = std::min(step, f.left / f.rate * 1e12);
    now += step;
    std::vector<Flow> still;
    for (Flow& f : flows) {
      f.left -= f.rate * step * 1e-12;
      if (f.left > 1e-6) {
        still.push_back(f);
      } else {
        done[f.owner] = now;
      }
    }
    flows = std::move(still);
  }
  return done;
}

// The flow network against that reference on random stars: every route crosses link 0, so every
// class shares a link with every other and the incremental re-rating is max-min over them all.
// Links and caps of random sizes give many levels; flows start in bursts at a few instants, so
// an instant's re-rating takes several starts and ends together. Three ways of filling (the
// heap from the first round, the default, scanning throughout), and re-rating after every start
// and end, all agree with the reference. Each re-timing of a class rounds its next end up to a
// picosecond, so a flow's end may lag by up to one picosecond for each event before it, at most
// 2 x 16 here, and the engine's end is a whole picosecond where the reference's is not: 33 ps.
TEST(FlowNetwork, AnInstantIsRatedByMaxMinOverEveryFlowInFlight) {
  std::mt19937_64 rng(20261129);
  int compared = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const int nlinks = 2 + static_cast<int>(rng() % 5);
    const std::vector<double> capacity = random_capacities(rng, nlinks);
    std::vector<std::uint32_t> links;
    std::vector<RouteInfo> routes;
    for (int r = 0; r < 12; ++r) {
      const auto first = static_cast<std::uint32_t>(links.size());
      links.push_back(0);
      for (int l = 1; l < nlinks; ++l) {
        if (rng() % 2 == 0) links.push_back(static_cast<std::uint32_t>(l));
      }
      const double cap = rng() % 4 == 0 ? std::numeric_limits<double>::infinity()
                                        : (1 + static_cast<double>(rng() % 60)) * 0.25e9;
      routes.push_back(route(first, static_cast<std::uint32_t>(links.size()) - first, cap));
    }
    std::vector<Start> starts;
    const std::int64_t instants[] = {0, 1'000'000, 2'500'000, 4'000'000};
    for (std::uint32_t f = 0; f < 16; ++f) {
      starts.push_back({instants[rng() % 4], routes[rng() % routes.size()], 1 + rng() % 20'000, f});
    }
    const auto want = reference_max_min(capacity, links, starts);
    ASSERT_EQ(want.size(), starts.size());
    for (const auto& [settle_each, linear_rounds] :
         {std::pair{false, 0}, std::pair{false, -1}, std::pair{false, 1000}, std::pair{true, -1}}) {
      const auto got = run(capacity, links, starts, true, settle_each, linear_rounds);
      ASSERT_EQ(got.size(), starts.size());
      for (const auto& [owner, ps] : got) {
        EXPECT_NEAR(static_cast<double>(ps), want.at(owner), 33)
            << "trial " << trial << " flow " << owner << " settle_each " << settle_each
            << " linear_rounds " << linear_rounds;
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 200 * 16 * 4);
}

// wire_time() takes the double quotient's ceiling where it provably equals the long double
// one's, and the long double path elsewhere: on exact integers, a few ulps on either side of
// them, the engine's rates (including ones not exact in binary), and times past 2^52 ps, every
// result equals the long double reference picosecond for picosecond.
TEST(FlowNetwork, WireTimeIsTheLongDoubleCeiling) {
  const auto reference = [](double bytes, double rate) {
    const long double ps = static_cast<long double>(bytes) * 1e12L / static_cast<long double>(rate);
    if (ps >= static_cast<long double>(std::numeric_limits<std::int64_t>::max() / 2)) {
      return std::numeric_limits<std::int64_t>::max() / 2;
    }
    return ceil_to_int64(ps);
  };
  int checked = 0;
  for (double rate : {25e9, 20.6e9 * 8, 46.875e9, 1e9 / 3, 3.3e11, 1.0e6 / 3, 12.5e9 * 0.9685}) {
    for (double bytes = 1; bytes < 0x1p62; bytes = std::floor(bytes * 1.7) + 1) {
      for (double b : {bytes, std::nextafter(bytes, 0.0), std::nextafter(bytes, 1e300)}) {
        EXPECT_EQ(wire_time(b, rate).ps(), reference(b, rate)) << b << " B at " << rate;
        ++checked;
      }
      // Bytes whose quotient is an integer or within an ulp of one.
      const double whole = std::floor(bytes * 1e12 / rate);
      const double exact = whole * rate / 1e12;
      for (double b : {exact, std::nextafter(exact, 0.0), std::nextafter(exact, 1e300)}) {
        if (b <= 0) continue;
        EXPECT_EQ(wire_time(b, rate).ps(), reference(b, rate)) << b << " B at " << rate;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

}  // namespace
}  // namespace collsim::detail
