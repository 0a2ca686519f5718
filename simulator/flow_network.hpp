// Flow-level network with max-min fair sharing (internal to simulator/).
//
// Each piece in flight is a flow over its route's directed links, also capped by its channel's
// bandwidth. Rates follow max-min fairness by progressive filling (Bertsekas & Gallager, "Data
// Networks" §6.5.2; the linear max-min model of SimGrid's LMM solver, src/kernel/lmm/): raise all
// rates together, freeze the flows of a link when it saturates or of a flow when it hits its cap.
//
// Incremental update. When a flow starts or ends, only the flows that share one of its links are
// re-rated (the "affected" set), over the links those flows cross; every other flow keeps its
// rate and its share of those links is subtracted first. This is exact whenever the affected
// flows' bottlenecks lie among those links, which holds for the patterns collsim runs (rings and
// trees whose flows meet at NVSwitch ports, NICs and fabric uplinks; the contention tests); in
// general it is SimGrid's selective update stopped after one hop, so a flow outside the set may
// keep a stale, still feasible rate until something on its own links changes. A ring over an
// NVSwitch touches a handful of flows per event, not the whole network.
//
// A flow's end is an event (kFlowDone, flow id); re-rating a flow schedules a new one and
// remembers its sequence number, so the superseded event is recognised and dropped when it
// surfaces.
//
//   FlowNetwork net(capacities, route_links, queue);
//   net.start(route, wire_bytes, now, conn);        // schedules kFlowDone
//   std::uint32_t owner;
//   if (net.finish(e.target(), e.seq(), now, owner)) ...  // the piece of connection `owner` left
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
  // RouteInfo::first_link indexes (must outlive this object).
  FlowNetwork(std::vector<double> capacity, const std::vector<std::uint32_t>& route_links,
              EventQueue& queue);

  Time start(const RouteInfo& route, std::uint64_t wire_bytes, Time now, std::uint32_t owner);
  // Handles a kFlowDone event (its target and sequence number). True if the flow has finished;
  // `owner` is then the connection given to start().
  // False for a superseded event.
  bool finish(std::uint32_t flow, std::uint64_t event, Time now, std::uint32_t& owner);

  std::size_t active_flows() const { return active_; }

 private:
  struct Flow {
    std::uint32_t first_link = 0;
    std::uint32_t link_count = 0;
    double cap = 0;
    double remaining = 0;  // wire bytes left at `last`
    double rate = 0;
    double pending = 0;  // rate being computed
    std::int64_t last_ps = 0;
    std::uint64_t event = kNoEvent;  // the pending kFlowDone; older ones are superseded
    std::uint32_t owner = 0;
    std::uint32_t stamp = 0;
    bool frozen = false;
    bool active = false;
  };
  struct LinkState {
    double capacity = 0;
    double residual = 0;
    std::uint32_t unfrozen = 0;
    std::uint32_t stamp = 0;
    std::vector<std::uint32_t> flows;
  };

  const std::uint32_t* links_of(const Flow& f) const { return route_links_.data() + f.first_link; }
  void rerate(std::uint32_t changed, Time now);

  std::vector<LinkState> links_;
  std::vector<Flow> flows_;
  std::vector<std::uint32_t> free_;
  const std::vector<std::uint32_t>& route_links_;
  EventQueue& queue_;
  std::uint32_t stamp_ = 0;
  std::size_t active_ = 0;
  // Scratch reused by rerate().
  std::vector<std::uint32_t> affected_;
  std::vector<std::uint32_t> touched_;
  std::vector<std::uint32_t> freeze_;
};

}  // namespace collsim::detail
