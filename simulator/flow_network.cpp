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
  touch(id);
  return kPending;
}

bool FlowNetwork::finish(std::uint32_t cls, std::uint64_t event, Time now, std::uint32_t& owner) {
  Class& c = classes_[cls];
  if (c.count == 0 || c.event != event) return false;
  advance(c, now);
  touch(cls);
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
  return true;
}

void FlowNetwork::touch(std::uint32_t id) {
  Class& c = classes_[id];
  if (c.mark != mark_) {
    c.mark = mark_;
    marked_.push_back(id);
  }
  for (std::uint32_t i = 0; i < c.link_count; ++i) {
    LinkState& l = links_[links_of(c)[i]];
    if (l.mark == mark_) continue;
    l.mark = mark_;
    marked_links_.push_back(links_of(c)[i]);
  }
}

// Whether no other class has flows on any of c's links.
bool FlowNetwork::alone(const Class& c) const {
  for (std::uint32_t i = 0; i < c.link_count; ++i) {
    if (links_[links_of(c)[i]].classes.size() != 1) return false;
  }
  return true;
}

void FlowNetwork::settle(Time now) {
  if (!unsettled()) return;
  const std::uint32_t stamp = ++stamp_;
  affected_.clear();
  const auto affect = [&](std::uint32_t g) {
    if (classes_[g].stamp == stamp) return;
    classes_[g].stamp = stamp;
    affected_.push_back(g);
  };
  for (std::uint32_t g : marked_) {
    if (classes_[g].count > 0) affect(g);
  }
  for (std::uint32_t li : marked_links_) {
    for (std::uint32_t g : links_[li].classes) affect(g);
  }
  rerate(now);
  marked_.clear();
  marked_links_.clear();
  if (++mark_ == 0) {
    // After 2^32 settles: no class or link may keep a mark the next round would take for its own.
    for (Class& c : classes_) c.mark = 0;
    for (LinkState& l : links_) l.mark = 0;
    mark_ = 1;
  }
}

// Re-rates affected_ (settle()) and re-times the classes whose rate changed or whose flows did.
void FlowNetwork::rerate(Time now) {
  const std::uint32_t stamp = stamp_;
  // A class alone on its links (a ring's neighbour pair, a NIC's only flow) meets no other: the
  // progressive filling would freeze it at its first level, its cap or its tightest link shared
  // among its own flows (a link's whole capacity is its residual then). The same expressions,
  // without the filling's bookkeeping; the rest are filled among themselves.
  filled_.clear();
  for (std::uint32_t g : affected_) {
    Class& c = classes_[g];
    if (!alone(c)) {
      filled_.push_back(g);
      continue;
    }
    double level = std::numeric_limits<double>::infinity();
    const double flows = static_cast<double>(c.count);
    for (std::uint32_t i = 0; i < c.link_count; ++i) {
      level = std::min(level, links_[links_of(c)[i]].capacity / flows);
    }
    c.pending = std::min(level, c.cap);
  }
  if (!filled_.empty()) {
    if (cap_feasible()) {
      // Every class filled runs at the common cap: what the filling computes then (its first
      // level is the cap, at which every class freezes), without computing it.
      for (std::uint32_t g : filled_) classes_[g].pending = common_cap_;
    } else {
      fill(stamp);
    }
  }
  for (std::uint32_t g : affected_) {
    Class& c = classes_[g];
    if (!changed(c) && c.pending == c.rate) continue;
    advance(c, now);
    c.rate = c.pending;
    retime(g, now);
  }
}

// Progressive filling of filled_ (Bertsekas & Gallager §6.5.2): raise their rates together from
// zero, freezing a class where it meets its cap or a link of it fills (its share, the residual
// over the unfrozen flows on it, is the level); the classes that keep their rates are served
// first. A round scans the links and classes left, which is cheapest while the levels are few
// (a burst of symmetric flows freezes in one round); past linear_rounds_ the links' shares go
// into a heap, so that a settle() of thousands of classes at as many levels costs n log n, not
// n^2.
void FlowNetwork::fill(std::uint32_t stamp) {
  touched_.clear();
  for (std::uint32_t g : filled_) {
    Class& c = classes_[g];
    c.frozen = false;
    for (std::uint32_t i = 0; i < c.link_count; ++i) {
      LinkState& l = links_[links_of(c)[i]];
      if (l.stamp == stamp) continue;
      l.stamp = stamp;
      touched_.push_back(links_of(c)[i]);
    }
  }
  // Capacity left on each touched link once the classes that keep their rates are served. An
  // alone class never shares a touched link, so these are exactly the filled classes' flows.
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
  std::size_t left = filled_.size();
  for (int round = 0; left > 0; ++round) {
    if (round == linear_rounds_) {
      fill_by_heap(stamp, left);
      return;
    }
    double level = std::numeric_limits<double>::infinity();
    for (std::uint32_t li : touched_) {
      LinkState& l = links_[li];
      // A link whose affected flows are all frozen never decides a class: its share is +inf.
      l.share = l.unfrozen > 0 ? l.residual / l.unfrozen : std::numeric_limits<double>::infinity();
      level = std::min(level, l.share);
    }
    for (std::uint32_t g : filled_) {
      if (!classes_[g].frozen) level = std::min(level, classes_[g].cap);
    }
    // Shares equal up to rounding freeze together, so symmetric flows get identical rates.
    const double tight = level * (1 + kTight);
    freeze_.clear();
    for (std::uint32_t g : filled_) {
      const Class& c = classes_[g];
      if (c.frozen) continue;
      bool hit = c.cap <= tight;
      for (std::uint32_t i = 0; !hit && i < c.link_count; ++i) {
        hit = links_[links_of(c)[i]].share <= tight;
      }
      if (hit) freeze_.push_back(g);
    }
    freeze_at(level);
    left -= freeze_.size();
  }
}

// Freezes freeze_ at `level`: each class's flows take `level` of each of its links.
void FlowNetwork::freeze_at(double level) {
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
}

// The rounds of fill() from where they stand (`left` classes unfrozen), each costing the links of
// the classes it freezes: the smallest share comes off a heap (stale entries dropped as they
// surface) and the caps are taken in order. A link's share never falls below the level as
// classes on it freeze at the level ((R - L c) / (U - c) >= L while R / U >= L), so the shares a
// round did not freeze stay above the next level and the heap's order gives the rounds' answer.
void FlowNetwork::fill_by_heap(std::uint32_t stamp, std::size_t left) {
  const auto later = [](const Share& a, const Share& b) {
    return a.value != b.value ? a.value > b.value : a.id > b.id;
  };
  const auto share_of = [](const LinkState& l) { return l.residual / l.unfrozen; };
  shares_.clear();
  for (std::uint32_t li : touched_) {
    LinkState& l = links_[li];
    if (l.unfrozen <= 0) continue;
    l.share = share_of(l);
    shares_.push_back({l.share, li});
  }
  std::make_heap(shares_.begin(), shares_.end(), later);
  caps_.clear();
  for (std::uint32_t g : filled_) {
    if (!classes_[g].frozen) caps_.push_back({classes_[g].cap, g});
  }
  std::sort(caps_.begin(), caps_.end(),
            [&](const Share& a, const Share& b) { return later(b, a); });
  const auto stale = [&](const Share& s) {
    const LinkState& l = links_[s.id];
    return l.unfrozen <= 0 || l.share != s.value;
  };
  std::size_t next_cap = 0;
  while (left > 0) {
    while (!shares_.empty() && stale(shares_.front())) {
      std::pop_heap(shares_.begin(), shares_.end(), later);
      shares_.pop_back();
    }
    while (next_cap < caps_.size() && classes_[caps_[next_cap].id].frozen) ++next_cap;
    double level = std::numeric_limits<double>::infinity();
    if (!shares_.empty()) level = shares_.front().value;
    if (next_cap < caps_.size()) level = std::min(level, caps_[next_cap].value);
    const double tight = level * (1 + kTight);
    freeze_.clear();
    for (; next_cap < caps_.size() && caps_[next_cap].value <= tight; ++next_cap) {
      Class& c = classes_[caps_[next_cap].id];
      if (c.frozen) continue;
      c.frozen = true;  // listed once; freeze_at() sets the rest
      freeze_.push_back(caps_[next_cap].id);
    }
    while (!shares_.empty() && shares_.front().value <= tight) {
      const Share s = shares_.front();
      std::pop_heap(shares_.begin(), shares_.end(), later);
      shares_.pop_back();
      if (stale(s)) continue;
      for (std::uint32_t g : links_[s.id].classes) {
        Class& c = classes_[g];
        if (c.stamp != stamp || c.frozen) continue;
        c.frozen = true;
        freeze_.push_back(g);
      }
    }
    freeze_at(level);
    // The shares the round changed, once each: a link's last entry is the one not stale.
    for (std::uint32_t g : freeze_) {
      const Class& c = classes_[g];
      for (std::uint32_t i = 0; i < c.link_count; ++i) {
        const std::uint32_t li = links_of(c)[i];
        LinkState& l = links_[li];
        if (l.unfrozen <= 0 || l.share == share_of(l)) continue;
        l.share = share_of(l);
        shares_.push_back({l.share, li});
        std::push_heap(shares_.begin(), shares_.end(), later);
      }
    }
    left -= freeze_.size();
  }
}

// Whether every class to fill (filled_) can run at the common cap: each link they cross
// carries no more flows than fit at that cap. Then progressive filling ends in its first round
// with every class at the cap: a link's share, its residual over its affected flows, is at least
// (capacity - (flows - affected) x cap) / affected >= cap, because the classes that keep their
// rates run at most at the cap, and the margin of flows_at_cap covers the residual's rounding.
bool FlowNetwork::cap_feasible() const {
  if (!cap_shortcut_ || std::isnan(common_cap_)) return false;
  for (std::uint32_t g : filled_) {
    const Class& c = classes_[g];
    for (std::uint32_t i = 0; i < c.link_count; ++i) {
      const LinkState& l = links_[links_of(c)[i]];
      if (l.flows > l.flows_at_cap) return false;
    }
  }
  return true;
}

}  // namespace collsim::detail
