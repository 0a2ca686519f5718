#include "simulator/flow_network.hpp"

#include <algorithm>
#include <limits>

namespace collsim::detail {

namespace {

// Relative tolerance when deciding which constraints are tight at the current fill level: two
// shares equal up to rounding freeze together, so symmetric flows get identical rates.
constexpr double kTight = 1e-12;

}  // namespace

FlowNetwork::FlowNetwork(std::vector<double> capacity,
                         const std::vector<std::uint32_t>& route_links, EventQueue& queue)
    : route_links_(route_links), queue_(queue) {
  links_.resize(capacity.size());
  for (std::size_t l = 0; l < capacity.size(); ++l) links_[l].capacity = capacity[l];
}

Time FlowNetwork::start(const RouteInfo& route, std::uint64_t wire_bytes, Time now,
                        std::uint32_t owner) {
  std::uint32_t id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<std::uint32_t>(flows_.size());
    flows_.emplace_back();
  }
  Flow& f = flows_[id];
  f = Flow{};
  f.first_link = route.first_link;
  f.link_count = route.link_count;
  f.cap = route.cap;
  f.remaining = static_cast<double>(wire_bytes);
  f.last_ps = now.ps();
  f.owner = owner;
  f.active = true;
  ++active_;
  for (std::uint32_t i = 0; i < f.link_count; ++i) links_[links_of(f)[i]].flows.push_back(id);
  rerate(id, now);
  return kPending;
}

bool FlowNetwork::finish(std::uint32_t flow, std::uint64_t event, Time now, std::uint32_t& owner) {
  Flow& f = flows_[flow];
  if (!f.active || f.event != event) return false;
  f.active = false;
  --active_;
  owner = f.owner;
  for (std::uint32_t i = 0; i < f.link_count; ++i) {
    std::vector<std::uint32_t>& on = links_[links_of(f)[i]].flows;
    auto it = std::find(on.begin(), on.end(), flow);
    *it = on.back();
    on.pop_back();
  }
  f.event = kNoEvent;
  free_.push_back(flow);
  rerate(flow, now);
  return true;
}

void FlowNetwork::rerate(std::uint32_t changed, Time now) {
  const std::uint32_t stamp = ++stamp_;
  affected_.clear();
  touched_.clear();
  const Flow& c = flows_[changed];
  for (std::uint32_t i = 0; i < c.link_count; ++i) {
    for (std::uint32_t g : links_[links_of(c)[i]].flows) {
      if (flows_[g].stamp == stamp) continue;
      flows_[g].stamp = stamp;
      affected_.push_back(g);
    }
  }
  if (affected_.empty()) return;
  for (std::uint32_t g : affected_) {
    Flow& f = flows_[g];
    f.frozen = false;
    for (std::uint32_t i = 0; i < f.link_count; ++i) {
      LinkState& l = links_[links_of(f)[i]];
      if (l.stamp == stamp) continue;
      l.stamp = stamp;
      touched_.push_back(links_of(f)[i]);
    }
  }
  // Capacity left on each touched link once the flows that keep their rates are served.
  for (std::uint32_t li : touched_) {
    LinkState& l = links_[li];
    l.residual = l.capacity;
    l.unfrozen = 0;
    for (std::uint32_t g : l.flows) {
      if (flows_[g].stamp == stamp) {
        ++l.unfrozen;
      } else {
        l.residual -= flows_[g].rate;
      }
    }
    l.residual = std::max(l.residual, l.capacity * 1e-9);
  }
  // Progressive filling over the affected flows.
  std::size_t left = affected_.size();
  while (left > 0) {
    double level = std::numeric_limits<double>::infinity();
    for (std::uint32_t li : touched_) {
      const LinkState& l = links_[li];
      if (l.unfrozen > 0) level = std::min(level, l.residual / l.unfrozen);
    }
    for (std::uint32_t g : affected_) {
      if (!flows_[g].frozen) level = std::min(level, flows_[g].cap);
    }
    const double tight = level * (1 + kTight);
    freeze_.clear();
    for (std::uint32_t g : affected_) {
      const Flow& f = flows_[g];
      if (f.frozen) continue;
      bool hit = f.cap <= tight;
      for (std::uint32_t i = 0; !hit && i < f.link_count; ++i) {
        const LinkState& l = links_[links_of(f)[i]];
        hit = l.residual / l.unfrozen <= tight;
      }
      if (hit) freeze_.push_back(g);
    }
    for (std::uint32_t g : freeze_) {
      Flow& f = flows_[g];
      f.frozen = true;
      f.pending = level;
      for (std::uint32_t i = 0; i < f.link_count; ++i) {
        LinkState& l = links_[links_of(f)[i]];
        l.residual = std::max(l.residual - level, 0.0);
        --l.unfrozen;
      }
    }
    left -= freeze_.size();
  }
  // Re-time the flows whose rate changed.
  for (std::uint32_t g : affected_) {
    Flow& f = flows_[g];
    if (f.pending == f.rate) continue;
    f.remaining -= f.rate * static_cast<double>(now.ps() - f.last_ps) * 1e-12;
    f.remaining = std::max(f.remaining, 0.0);
    f.last_ps = now.ps();
    f.rate = f.pending;
    f.event = queue_.push(now + wire_time(f.remaining, f.rate), EventKind::kFlowDone, g);
  }
}

}  // namespace collsim::detail
