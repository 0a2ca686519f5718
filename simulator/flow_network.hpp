// Flow-level network with max-min fair sharing (internal to simulator/).
//
// Each piece in flight is a flow over its route's directed links, also capped by its channel's
// bandwidth. Rates follow max-min fairness by progressive filling (Bertsekas & Gallager, "Data
// Networks" §6.5.2; the linear max-min model of SimGrid's LMM solver, src/kernel/lmm/): raise all
// rates together, freeze the flows of a link when it saturates or of a flow when it hits its cap.
//
// Flows of one route form a class. Flows with the same links and the same cap meet the same
// constraints, so max-min gives them the same rate at every instant: a class has one rate, and
// its flows are a processor-sharing queue. The class keeps a virtual clock, the bytes each of its
// flows has been served since the class last stood empty; a flow that starts with B bytes when
// the clock reads V finishes when it reads V + B. The class has one pending event, for the flow
// whose finish comes first, so a piece that starts or ends costs one re-rating of the classes on
// its links, not one of every flow: NCCL's 16 to 64 channels between the same two GPUs (routes
// the engine shares when their links are the same) are one class, and an event costs the same at
// 2 channels as at 64. The rates are those of the flow-by-flow computation; only the rounding of
// the clocks differs from it.
//
// Incremental update. A flow that starts or ends marks its class and the class's links; when
// the instant is over (no event left at this picosecond) settle() re-rates, once, the classes
// that share one of the marked links (the "affected" set), over the links those classes cross;
// every other class keeps its rate and its share of those links is subtracted first. Flows start
// and end in bursts at one instant (a ring's ranks step together), and a class re-rated once per
// burst rather than once for each neighbour that changed is re-timed once, leaving no superseded
// event behind for each intermediate rate, which lasted no time. This is exact whenever the
// affected flows' bottlenecks lie among those links, which holds for the patterns collsim runs
// (rings and trees whose flows meet at NVSwitch ports, NICs and fabric uplinks; the contention
// tests); in general it is SimGrid's selective update stopped after one hop, so a flow outside the
// set may keep a stale, still feasible rate until something on its own links changes.
//
// A class's next end is an event (kFlowDone, class id); re-timing the class schedules a new one
// and remembers its sequence number, so the superseded event is recognised and dropped when it
// surfaces.
//
//   FlowNetwork net(capacities, route_links, queue);
//   net.start(route, wire_bytes, now, conn, 1);     // marks its class
//   std::uint32_t owner;
//   if (net.finish(e.target(), e.seq(), now, owner)) ...  // the piece of connection `owner` left
//   if (!queue.more_at_last_time()) net.settle(now);      // re-rates; schedules kFlowDone
#pragma once

#include <cstdint>
#include <vector>

#include "simulator/event_queue.hpp"
#include "simulator/network.hpp"

namespace collsim::detail {

class FlowNetwork {
 public:
  static constexpr bool kKnowsFinish = false;

  // `capacity[l]`: wire bytes/s of link l; `route_links`: the engine's flat link array that
  // RouteInfo::first_link indexes (must outlive this object). Routes with the same links must
  // share their first_link (the engine does so) to share a class.
  FlowNetwork(std::vector<double> capacity, const std::vector<std::uint32_t>& route_links,
              EventQueue& queue);

  // `weight`: how many identical flows this one stands for (a folded channel's copies): they
  // share the links as that many flows, and end together.
  Time start(const RouteInfo& route, std::uint64_t wire_bytes, Time now, std::uint32_t owner,
             std::uint32_t weight = 1);
  // Handles a kFlowDone event (its target and sequence number). True if a flow has finished;
  // `owner` is then the connection given to start(). False for a superseded event.
  bool finish(std::uint32_t cls, std::uint64_t event, Time now, std::uint32_t& owner);

  // Whether a start() or finish() since the last settle() awaits its re-rating.
  bool unsettled() const { return !marked_links_.empty() || !marked_.empty(); }
  // Re-rates the classes on the links of the flows that started or ended since the last call,
  // and schedules their next ends. Call it once no more events are due at `now`, the time of
  // every start() and finish() since the last call: the rates in between lasted no time.
  void settle(Time now);

  std::size_t active_flows() const { return active_; }

  // Whether a re-rating at the common cap may skip the filling (cap_feasible()); on by default.
  // The tests turn it off to compare the two, which must agree to the picosecond.
  void set_cap_shortcut(bool on) { cap_shortcut_ = on; }
  // Rounds of progressive filling done by scanning before the heap takes over (fill()); the tests
  // set 0 (the heap throughout) and a large number (scanning throughout) to compare the two.
  void set_linear_rounds(int rounds) { linear_rounds_ = rounds; }

 private:
  struct Member {
    double finish = 0;        // the class's clock when this flow is done
    std::uint64_t order = 0;  // start order: flows due at the same clock end first come first
    std::uint32_t owner = 0;
    std::uint32_t weight = 1;
  };
  struct Class {
    std::uint32_t first_link = 0;
    std::uint32_t link_count = 0;
    double cap = 0;
    std::uint32_t count = 0;  // flows in it, each member counting its weight
    double rate = 0;          // per flow, wire bytes/s
    double pending = 0;       // rate being computed
    double served = 0;        // the clock: bytes served per flow at `last_ps`
    std::int64_t last_ps = 0;
    std::uint64_t event = kNoEvent;  // the pending kFlowDone; older ones are superseded
    std::uint32_t stamp = 0;
    std::uint32_t mark = 0;  // == mark_ while marked_ lists it
    bool frozen = false;
    std::vector<Member> members;  // a min-heap by (finish, order)
  };
  struct LinkState {
    double capacity = 0;
    std::uint64_t flows = 0;  // of every class on it, each counting its weight
    // The most flows it carries with every one at the common cap (cap_feasible()).
    std::uint64_t flows_at_cap = 0;
    double residual = 0;
    double unfrozen = 0;  // flows of the affected classes not yet frozen
    double share = 0;     // residual / unfrozen at the current filling round
    std::uint32_t stamp = 0;
    std::uint32_t mark = 0;              // == mark_ while marked_links_ lists it
    std::vector<std::uint32_t> classes;  // those with flows
  };

  const std::uint32_t* links_of(const Class& c) const { return route_links_.data() + c.first_link; }
  std::uint32_t class_of(const RouteInfo& route);
  void advance(Class& c, Time now) const;
  void retime(std::uint32_t id, Time now);
  void touch(std::uint32_t id);
  void rerate(Time now);
  void fill(std::uint32_t stamp);
  void freeze_at(double level);
  void fill_by_heap(std::uint32_t stamp, std::size_t left);

  bool changed(const Class& c) const { return c.mark == mark_; }
  bool alone(const Class& c) const;
  bool cap_feasible() const;
  void set_common_cap(double cap);

  std::vector<LinkState> links_;
  std::vector<Class> classes_;
  std::vector<std::uint32_t> class_by_route_;  // first_link -> class id + 1 (0: none in use)
  std::vector<std::uint32_t> free_;            // ids of emptied classes
  const std::vector<std::uint32_t>& route_links_;
  EventQueue& queue_;
  std::uint32_t stamp_ = 0;
  // The cap every class so far has had (the engine gives all its routes one), set with the
  // first class (cap_known_); NaN for good once two classes have differed.
  double common_cap_ = 0;
  bool cap_known_ = false;
  bool cap_shortcut_ = true;
  // Rounds of progressive filling by scanning before fill() turns to a heap: a burst of
  // symmetric flows freezes in one or two, and no settle on the project's tables takes more than
  // five (counted on 2026-11-29: the Dell H100 NVLSTree table, 16 of 3.5 M fillings took four,
  // two took five), so the heap is the guard against a settle of thousands of levels, not the rule.
  int linear_rounds_ = 8;
  std::uint64_t started_ = 0;
  std::size_t active_ = 0;
  // What changed since the last settle(): the classes flows started or ended in, and their links.
  std::uint32_t mark_ = 1;
  std::vector<std::uint32_t> marked_;
  std::vector<std::uint32_t> marked_links_;
  // Scratch reused by settle().
  struct Share {
    double value;      // a link's share, or a class's cap
    std::uint32_t id;  // the link, or the class
  };
  std::vector<std::uint32_t> affected_;
  std::vector<std::uint32_t> filled_;  // the affected classes not alone on their links
  std::vector<std::uint32_t> touched_;
  std::vector<std::uint32_t> freeze_;
  std::vector<Share> shares_;
  std::vector<Share> caps_;
};

}  // namespace collsim::detail
