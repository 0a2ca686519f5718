#include "simulator/flow_network.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace collsim::detail {

namespace {

// Relative tolerance when deciding which constraints are tight at the current fill level: two
// shares equal up to rounding freeze together, so symmetric flows get identical rates.
constexpr double kTight = 1e-12;

// Heap order of a class's flows: the one due first at the top, first come first on a tie.
struct DueLater {
  template <class M>
  bool operator()(const M& a, const M& b) const {
    return a.finish != b.finish ? a.finish > b.finish : a.order > b.order;
  }
};

}  // namespace

FlowNetwork::FlowNetwork(std::vector<double> capacity,
                         const std::vector<std::uint32_t>& route_links, EventQueue& queue)
    : route_links_(route_links), queue_(queue) {
  links_.resize(capacity.size());
  for (std::size_t l = 0; l < capacity.size(); ++l) links_[l].capacity = capacity[l];
}

std::uint32_t FlowNetwork::class_of(const RouteInfo& route) {
  if (class_by_route_.size() <= route.first_link) class_by_route_.resize(route_links_.size(), 0);
  std::uint32_t& slot = class_by_route_[route.first_link];
  if (slot == 0) {
    // Ids of emptied classes are reused, so that ids stay below the streams' count (each class
    // in use has a flow in flight, at most one per stream) and fit an event (event_queue.hpp).
    std::uint32_t id;
    if (!free_.empty()) {
      id = free_.back();
      free_.pop_back();
    } else {
      id = static_cast<std::uint32_t>(classes_.size());
      classes_.emplace_back();
    }
    Class& c = classes_[id];
    c.first_link = route.first_link;
    c.link_count = route.link_count;
    c.cap = route.cap;
    slot = id + 1;
    if (!cap_known_) {
      set_common_cap(route.cap);
    } else if (!std::isnan(common_cap_) && route.cap != common_cap_) {
      set_common_cap(std::numeric_limits<double>::quiet_NaN());  // for good
    }
  }
  return slot - 1;
}

void FlowNetwork::set_common_cap(double cap) {
  cap_known_ = true;
  common_cap_ = cap;
  // A link carries f flows at the cap while f x cap stays below its capacity by a margin far
  // wider than the rounding of the residual that rerate() would compute for it (cap_feasible()).
  // No finite common cap: never.
  constexpr double kMargin = 1e-9;
  const bool finite = std::isfinite(cap) && cap > 0;
  constexpr double kMost = 0x1p63;  // beyond any flow count, and a safe conversion
  for (LinkState& l : links_) {
    const double fit = finite ? std::floor(l.capacity * (1 - kMargin) / cap) : 0.0;
    l.flows_at_cap = fit >= kMost ? std::numeric_limits<std::uint64_t>::max()
                                  : static_cast<std::uint64_t>(std::max(fit, 0.0));
  }
}

void FlowNetwork::advance(Class& c, Time now) const {
  c.served += c.rate * static_cast<double>(now.ps() - c.last_ps) * 1e-12;
  c.last_ps = now.ps();
}

void FlowNetwork::retime(std::uint32_t id, Time now) {
  Class& c = classes_[id];
  if (c.count == 0) {
    c.event = kNoEvent;
    return;
  }
  const double left = std::max(c.members.front().finish - c.served, 0.0);
  c.event = queue_.push(now + wire_time(left, c.rate), EventKind::kFlowDone, id);
}

Time FlowNetwork::start(const RouteInfo& route, std::uint64_t wire_bytes, Time now,
                        std::uint32_t owner, std::uint32_t weight) {
  const std::uint32_t id = class_of(route);
  Class& c = classes_[id];
  if (c.count == 0) {
    // An empty class restarts its clock, so it never grows past one busy period's bytes.
    c.served = 0;
    c.rate = 0;
    c.last_ps = now.ps();
    for (std::uint32_t i = 0; i < c.link_count; ++i) links_[links_of(c)[i]].classes.push_back(id);
  } else {
    advance(c, now);
  }
  for (std::uint32_t i = 0; i < c.link_count; ++i) links_[links_of(c)[i]].flows += weight;
  c.members.push_back(
      Member{c.served + static_cast<double>(wire_bytes), started_++, owner, weight});
  std::push_heap(c.members.begin(), c.members.end(), DueLater{});
  c.count += weight;
  active_ += weight;
  rerate(id, now);
  return kPending;
}

bool FlowNetwork::finish(std::uint32_t cls, std::uint64_t event, Time now, std::uint32_t& owner) {
  Class& c = classes_[cls];
  if (c.count == 0 || c.event != event) return false;
  advance(c, now);
  std::pop_heap(c.members.begin(), c.members.end(), DueLater{});
  owner = c.members.back().owner;
  for (std::uint32_t i = 0; i < c.link_count; ++i) {
    links_[links_of(c)[i]].flows -= c.members.back().weight;
  }
  c.count -= c.members.back().weight;
  active_ -= c.members.back().weight;
  c.members.pop_back();
  c.event = kNoEvent;
  if (c.count == 0) {
    for (std::uint32_t i = 0; i < c.link_count; ++i) {
      std::vector<std::uint32_t>& on = links_[links_of(c)[i]].classes;
      auto it = std::find(on.begin(), on.end(), cls);
      *it = on.back();
      on.pop_back();
    }
    class_by_route_[c.first_link] = 0;
    free_.push_back(cls);
  }
  rerate(cls, now);
  return true;
}

void FlowNetwork::rerate(std::uint32_t changed, Time now) {
  const std::uint32_t stamp = ++stamp_;
  affected_.clear();
  touched_.clear();
  {
    const Class& ch = classes_[changed];
    for (std::uint32_t i = 0; i < ch.link_count; ++i) {
      for (std::uint32_t g : links_[links_of(ch)[i]].classes) {
        if (classes_[g].stamp == stamp) continue;
        classes_[g].stamp = stamp;
        affected_.push_back(g);
      }
    }
  }
  if (affected_.empty()) return;
  if (affected_.size() == 1 && affected_.front() == changed) {
    // No other class on its links (a ring's neighbour pair, a NIC's only flow): the progressive
    // filling below would freeze it at its first level, its cap or its tightest link shared among
    // its own flows (a link's whole capacity is its residual then). The same expressions,
    // without the touched links' bookkeeping.
    Class& c = classes_[changed];
    double level = std::numeric_limits<double>::infinity();
    const double flows = static_cast<double>(c.count);
    for (std::uint32_t i = 0; i < c.link_count; ++i) {
      level = std::min(level, links_[links_of(c)[i]].capacity / flows);
    }
    level = std::min(level, c.cap);
    advance(c, now);
    c.rate = level;
    retime(changed, now);
    return;
  }
  if (cap_feasible()) {
    // Every affected class runs at the common cap: what the filling below computes then (its
    // first level is the cap, at which every class freezes), without computing it.
    for (std::uint32_t g : affected_) {
      Class& c = classes_[g];
      if (g != changed && c.rate == common_cap_) continue;
      advance(c, now);
      c.rate = common_cap_;
      retime(g, now);
    }
    return;
  }
  for (std::uint32_t g : affected_) {
    Class& c = classes_[g];
    c.frozen = false;
    for (std::uint32_t i = 0; i < c.link_count; ++i) {
      LinkState& l = links_[links_of(c)[i]];
      if (l.stamp == stamp) continue;
      l.stamp = stamp;
      touched_.push_back(links_of(c)[i]);
    }
  }
  // Capacity left on each touched link once the classes that keep their rates are served.
  for (std::uint32_t li : touched_) {
    LinkState& l = links_[li];
    l.residual = l.capacity;
    l.unfrozen = 0;
    for (std::uint32_t g : l.classes) {
      const Class& c = classes_[g];
      if (c.stamp == stamp) {
        l.unfrozen += c.count;
      } else {
        l.residual -= c.rate * c.count;
      }
    }
    l.residual = std::max(l.residual, l.capacity * 1e-9);
  }
  // Progressive filling over the affected classes, each weighing its number of flows.
  std::size_t left = affected_.size();
  while (left > 0) {
    double level = std::numeric_limits<double>::infinity();
    for (std::uint32_t li : touched_) {
      LinkState& l = links_[li];
      // A link whose affected flows are all frozen never decides a class: its share is +inf.
      l.share = l.unfrozen > 0 ? l.residual / l.unfrozen : std::numeric_limits<double>::infinity();
      level = std::min(level, l.share);
    }
    for (std::uint32_t g : affected_) {
      if (!classes_[g].frozen) level = std::min(level, classes_[g].cap);
    }
    const double tight = level * (1 + kTight);
    freeze_.clear();
    for (std::uint32_t g : affected_) {
      const Class& c = classes_[g];
      if (c.frozen) continue;
      bool hit = c.cap <= tight;
      for (std::uint32_t i = 0; !hit && i < c.link_count; ++i) {
        hit = links_[links_of(c)[i]].share <= tight;
      }
      if (hit) freeze_.push_back(g);
    }
    for (std::uint32_t g : freeze_) {
      Class& c = classes_[g];
      c.frozen = true;
      c.pending = level;
      for (std::uint32_t i = 0; i < c.link_count; ++i) {
        LinkState& l = links_[links_of(c)[i]];
        l.residual = std::max(l.residual - level * c.count, 0.0);
        l.unfrozen -= c.count;
      }
    }
    left -= freeze_.size();
  }
  // Re-time the classes whose rate changed, and the changed one, whose first flow due may have.
  for (std::uint32_t g : affected_) {
    Class& c = classes_[g];
    if (g != changed && c.pending == c.rate) continue;
    advance(c, now);
    c.rate = c.pending;
    retime(g, now);
  }
}

// Whether every affected class (affected_) can run at the common cap: each link they cross
// carries no more flows than fit at that cap. Then progressive filling ends in its first round
// with every class at the cap: a link's share, its residual over its affected flows, is at least
// (capacity - (flows - affected) x cap) / affected >= cap, because the classes that keep their
// rates run at most at the cap, and the margin of flows_at_cap covers the residual's rounding.
bool FlowNetwork::cap_feasible() const {
  if (!cap_shortcut_ || std::isnan(common_cap_)) return false;
  for (std::uint32_t g : affected_) {
    const Class& c = classes_[g];
    for (std::uint32_t i = 0; i < c.link_count; ++i) {
      const LinkState& l = links_[links_of(c)[i]];
      if (l.flows > l.flows_at_cap) return false;
    }
  }
  return true;
}

}  // namespace collsim::detail
