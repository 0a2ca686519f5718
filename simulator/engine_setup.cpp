// Engine set-up and tear-down: streams, connections and routes (built once, never per piece),
// the result, and the report of a schedule that cannot finish. Also simulate() itself.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "algorithms/generators/registry.hpp"
#include "simulator/engine.hpp"
#include "simulator/flow_network.hpp"
#include "simulator/symmetry.hpp"
#include "simulator/trace.hpp"
#include "topology/error.hpp"

namespace collsim {

namespace detail {

// The NVSwitch a GPU's NVLinks reach: where a switch actor anchored at cluster rank `gpu` runs
// (schedule.hpp, "Switch actors").
DeviceId switch_of(const Topology& topo, int gpu) {
  const DeviceId g = topo.gpu_of(Rank{gpu});
  if (topo.gpu_model().sm < 90) {
    throw RequestError(fmt::format(
        "NVLS needs an NVSwitch that reduces (third generation or later, sm90+ GPUs); {} has {} "
        "GPUs (sm{})",
        topo.name(), topo.gpu_model().name, topo.gpu_model().sm));
  }
  for (LinkId l : topo.out_links(g)) {
    const Device& d = topo.device(topo.link(l).dst);
    if (d.kind == DeviceKind::kNvSwitch) return d.id;
  }
  throw RequestError(fmt::format(
      "the schedule has the NVSwitch compute (NVLS), but {} of {} reaches no NVSwitch",
      topo.device(g).name, topo.name()));
}

// The network switch a GPU's NIC plugs into: where a CollNet switch actor anchored at cluster
// rank `gpu` runs (InfiniBand SHARP; schedule.hpp, "Switch actors").
DeviceId network_switch_of(const Topology& topo, int gpu) {
  const DeviceId g = topo.gpu_of(Rank{gpu});
  if (!topo.sharp()) {
    throw RequestError(fmt::format(
        "CollNet needs switches that reduce (InfiniBand SHARP) and NCCL's CollNet enabled; {} "
        "says network.sharp: false",
        topo.name()));
  }
  const std::optional<DeviceId> nic = topo.nic_of(g);
  if (nic) {
    for (LinkId l : topo.out_links(*nic)) {
      const Device& d = topo.device(topo.link(l).dst);
      if (d.kind == DeviceKind::kSwitch) return d.id;
    }
  }
  throw RequestError(
      fmt::format("the schedule has a network switch reduce (CollNet), but {} of "
                  "{} reaches no network switch",
                  topo.device(g).name, topo.name()));
}

template <class Net>
Engine<Net>::Engine(const Schedule& s, const Topology& topo, const SimOptions& o,
                    const CostParams& costs)
    : sched_(s),
      topo_(topo),
      opts_(o),
      costs_(costs),
      proto_(costs.protocol(s.info().protocol)),
      trace_(o.trace),
      ranks_(s.actor_count()),
      slots_(static_cast<std::uint64_t>(std::max(1, s.info().fifo.slots))),
      slot_mask_((slots_ & (slots_ - 1)) == 0 ? slots_ - 1 : 0),
      payload_(std::max<std::uint64_t>(1, s.info().fifo.slot_payload)),
      wire_per_byte_(1.0 / proto_.efficiency),
      reduce_rate_(costs.reduce_bandwidth.bytes_per_second()),
      copy_rate_(costs.copy_bandwidth.bytes_per_second()) {
  p2p_warps_ = s.info().p2p;
  cut_through_ = costs.line_forwarding && s.info().protocol != Protocol::kSimple;
  if (o.give_up_after) give_up_after_ = *o.give_up_after;
  give_up_live_ = o.give_up_live;
  full_wire_ = wire_bytes(payload_);
  if (cut_through_) {
    // Pieces no larger than one pass are forwarded whole: store and forward, as without this.
    pass_wire_ = static_cast<double>(s.info().fifo.pass_bytes);
    const std::uint64_t widest = s.info().widest_channel_bytes();
    const std::uint64_t largest = widest > 0 ? std::min(payload_, widest) : payload_;
    if (pass_wire_ <= 0 || static_cast<double>(wire_bytes(largest)) <= pass_wire_) {
      cut_through_ = false;
    }
  }
  reduce_full_ = reduce_rate_ > 0 ? wire_time(static_cast<double>(payload_), reduce_rate_) : Time();
  const double cap = costs.channel_cap(s.info().protocol, channel_kernel(s.info()));
  wire_cap_ = cap > 0 ? cap * wire_per_byte_ : std::numeric_limits<double>::infinity();
  gpu_ = o.placement;
  if (gpu_.empty()) {
    for (int r = 0; r < s.rank_count(); ++r) gpu_.push_back(r);
  }
  if (static_cast<int>(gpu_.size()) != s.rank_count()) {
    throw RequestError(fmt::format("placement names {} ranks but the schedule has {}", gpu_.size(),
                                   s.rank_count()));
  }
  for (int g : gpu_) {
    if (g < 0 || g >= topo.rank_count()) {
      throw RequestError(fmt::format("the schedule needs {} ranks but {} has {} GPUs",
                                     s.rank_count(), topo.name(), topo.rank_count()));
    }
    device_.push_back(topo.gpu_of(Rank{g}).value);
  }
  const std::vector<SwitchActor>& switches = s.info().switches;
  for (const SwitchActor& a : switches) {
    device_.push_back(a.site == SwitchSite::kNvSwitch
                          ? switch_of(topo, gpu_[a.anchor]).value
                          : network_switch_of(topo, gpu_[a.anchor]).value);
  }
  // NVSwitch actors come before network ones (NVLS across nodes has both).
  const auto on_nvswitch = [](const SwitchActor& a) { return a.site == SwitchSite::kNvSwitch; };
  const auto network_from = std::partition_point(switches.begin(), switches.end(), on_nvswitch);
  if (std::any_of(network_from, switches.end(), on_nvswitch)) {
    throw RequestError(
        "a schedule's NVSwitch actors must come before its network switch actors; this one "
        "interleaves them");
  }
  const auto nvswitches = static_cast<int>(network_from - switches.begin());
  if (nvswitches > 0) {
    // The switch's whole rate (ports x per-port rate) is shared by its streams; a piece of a
    // switch stream is reduced by (members - 1) recv-reduce ops (cost_params.hpp).
    const int members = s.rank_count() / nvswitches;
    switch_reduce_rate_ = costs.nvls_bandwidth.bytes_per_second() * std::max(1, members - 1) /
                          std::max(1, s.info().requested_channels);
  }
  // Network switches (SHARP) reduce at their ports' rate: the links are the limit, and their
  // reductions are free (switch_reduce_time).
  period_ = ranks_;
  if (o.symmetry && trace_ == nullptr) {
    RankSymmetry sym = rank_symmetry(s, topo, gpu_, !Net::kKnowsFinish);
    period_ = sym.period;
    link_image_ = std::move(sym.link_image);
  }
  // CollNetDirect is simulated in full: under max-min its folded run ended 3.7 % late at 64 MiB
  // (channel_fold_test.cpp), beyond the bound the other folds keep.
  const AlgorithmInfo* algo = find_algorithm_or_null(s.info().algorithm);
  const bool foldable = algo == nullptr || algo->family != Family::kCollNetDirect;
  fold_ = o.fold_channels && foldable && trace_ == nullptr
              ? fold_channels(s, topo, device_, period_)
              : no_fold(s);
  channels_ = static_cast<int>(fold_.simulated.size());
  first_switch_stream_ = static_cast<std::uint32_t>(s.rank_count() * channels_);
  first_network_switch_stream_ =
      static_cast<std::uint32_t>((s.rank_count() + nvswitches) * channels_);
  link_capacity_.reserve(topo.links().size());
  for (std::size_t l = 0; l < topo.links().size(); ++l) {
    link_capacity_.push_back(link_capacity(topo, LinkId{static_cast<std::int32_t>(l)}, costs));
  }
}

template <class Net>
void Engine<Net>::init_streams() {
  // Streams of the simulated ranks only: one period when a rank shift is a symmetry.
  const std::size_t n = static_cast<std::size_t>(period_) * static_cast<std::size_t>(channels_);
  // Events name their stream (or flow: at most one per stream) in 24 bits (event_queue.hpp).
  if (n >= kMaxEventTarget) {
    throw ScheduleError(
        fmt::format("the simulator runs at most {} streams (ranks x channels); "
                    "this schedule has {}",
                    kMaxEventTarget - 1, n));
  }
  streams_.resize(n);
  if (p2p_warps_) recv_busy_.assign(n, Time());
  if (cut_through_) {
    sent_at_.assign(n, Time());
    last_pass_.assign(n, Time());
  }
  waiters_.resize(n);
  // Only the simulated channels' dependencies are kept, asked for as ranges of consecutive IR
  // channels (a folded NCCL channel is one): a source then builds only those channels'.
  std::vector<std::pair<int, int>> ranges;
  for (int actual : fold_.simulated) {
    if (!ranges.empty() && ranges.back().second == actual) {
      ++ranges.back().second;
    } else {
      ranges.emplace_back(actual, actual + 1);
    }
  }
  std::vector<DependencyRun> runs;
  std::vector<Dependency> deps;
  for (int r = 0; r < period_; ++r) {
    runs.clear();
    for (const auto& [first, end] : ranges) sched_.append_dependency_runs(r, first, end, runs);
    deps.clear();
    for (const DependencyRun& run : runs) expand(run, deps);
    // Sorted only where the generator did not list them in this order: NVLSTree does, and its
    // switches have one per piece, millions at scale.
    const auto by_op = [](const Dependency& a, const Dependency& b) {
      return a.channel != b.channel ? a.channel < b.channel : a.op < b.op;
    };
    if (!std::is_sorted(deps.begin(), deps.end(), by_op)) {
      std::stable_sort(deps.begin(), deps.end(), by_op);
    }
    std::size_t d = 0;
    for (int c = 0; c < channels_; ++c) {
      // Simulated channel c runs schedule channel `actual`; a dependency stays inside its NCCL
      // channel (ChannelFold), so it names simulated channels by the same offset.
      const int actual = fold_.simulated[c];
      StreamState& s = streams_[static_cast<std::size_t>(r) * channels_ + c];
      s.cursor = sched_.source()->stream(r, actual);
      s.op_count = s.cursor->size();
      s.dep_next = static_cast<std::uint32_t>(deps_.size());
      while (d < deps.size() && deps[d].channel < actual) ++d;
      for (; d < deps.size() && deps[d].channel == actual; ++d) {
        Dependency dep = deps[d];
        dep.after_channel = c + (dep.after_channel - actual);
        dep.channel = c;
        deps_.push_back(dep);
      }
      s.dep_end = static_cast<std::uint32_t>(deps_.size());
    }
  }
}

template <class Net>
std::uint32_t Engine<Net>::route_between(int from, int to, int channel) {  // device ids
  // Each channel is its own connection (its own queue pair), so ECMP hashes channels apart.
  // NCCL gives a GPU's channels its NICs in turn (Topology::route_flow).
  const std::uint32_t flow = topo_.route_flow(sched_.info().request_channel(channel));
  const std::uint64_t key = static_cast<std::uint64_t>(from) << 40 |
                            static_cast<std::uint64_t>(to) << 16 | (flow & 0xFFFF);
  if (const std::uint32_t known = route_index_.find(key); known != IdIndex::kNone) return known;
  const Route& found = topo_.route(DeviceId{from}, DeviceId{to}, flow);
  // Where periods share links, each link is the one standing for its orbit (symmetry.hpp).
  Route folded;
  if (!link_image_.empty()) {
    folded.links = found.links;
    for (LinkId& l : folded.links) {
      if (link_image_[l.value] >= 0) l = LinkId{link_image_[l.value]};
    }
  }
  const Route& route = link_image_.empty() ? found : folded;
  RouteInfo info;
  info.link_count = static_cast<std::uint32_t>(route.links.size());
  // Channels whose routes cross the same links share one entry of route_links_, which makes
  // their flows one class under max-min (flow_network.hpp).
  const std::uint64_t pair =
      static_cast<std::uint64_t>(from) << 32 | static_cast<std::uint32_t>(to);
  const std::uint32_t head = pair_head_.find(pair);
  const auto same_links = [&](std::uint32_t r) {
    const RouteInfo& other = routes_[r];
    if (other.link_count != info.link_count) return false;
    for (std::size_t i = 0; i < route.links.size(); ++i) {
      const auto l = static_cast<std::uint32_t>(route.links[i].value);
      if (route_links_[other.first_link + i] != l) return false;
    }
    return true;
  };
  std::uint32_t shared = head;
  while (shared != IdIndex::kNone && !same_links(shared)) shared = pair_next_[shared];
  pair_next_.push_back(IdIndex::kNone);  // this route's link in its pair's chain
  if (shared != IdIndex::kNone) {
    info.first_link = routes_[shared].first_link;
  } else {
    info.first_link = static_cast<std::uint32_t>(route_links_.size());
    for (LinkId l : route.links) route_links_.push_back(static_cast<std::uint32_t>(l.value));
    // This route heads its pair's chain of distinct sequences from now on.
    const auto id = static_cast<std::uint32_t>(routes_.size());
    pair_next_.back() = head;
    if (!pair_head_.assign(pair, id)) pair_head_.insert(pair, id);
  }
  RouteClass cls = RouteClass::kNvLink;
  double bottleneck = std::numeric_limits<double>::infinity();
  for (LinkId l : route.links) {
    const Link& link = topo_.link(l);
    info.latency += link.latency;
    bottleneck = std::min(bottleneck, link_capacity_[l.value]);
    if (is_network(link.kind)) {
      cls = RouteClass::kNetwork;
    } else if (!is_nvlink_class(link.kind) && cls == RouteClass::kNvLink) {
      cls = RouteClass::kPcie;
    }
  }
  // A credit is one counter crossing back: what NCCL's LL hwLat charges a flag on this path
  // (LL's excess over the links), not the data protocol's step latency, which also covers the
  // fence, the flush and the proxy's post that only data pays (docs/theory.md §2.6).
  info.credit_latency =
      info.latency + costs_.protocol(Protocol::kLL).hop_latency[static_cast<int>(cls)];
  info.latency += proto_.hop_latency[static_cast<int>(cls)];
  info.cap = wire_cap_;
  info.staged_read = receiver_reads_host(topo_, found);
  info.proxied = cls == RouteClass::kNetwork;
  // Without max-min sharing, the request's channels split every link of the route evenly, as
  // they do on a GPU that drives them all at once; the closed forms assume the same.
  if constexpr (Net::kKnowsFinish) bottleneck /= std::max(1, sched_.info().requested_channels);
  info.rate = std::min(bottleneck, info.cap);
  const auto id = static_cast<std::uint32_t>(routes_.size());
  routes_.push_back(info);
  // A model that knows a transfer's end at once times it by route and size alone (network.hpp).
  if constexpr (Net::kKnowsFinish) full_tx_.push_back(Net{}.start(info, full_wire_, Time(), 0));
  if (trace_ != nullptr) trace_->routes.push_back(route.links);
  route_index_.insert(key, id);
  return id;
}

template <class Net>
std::uint32_t Engine<Net>::connection(int channel, int sender, int receiver) {
  if (period_ < ranks_) {
    // Shift the pair so that the sender is in the simulated period (symmetry.hpp): rank N-1's
    // send to rank 0 is rank P-1's send to rank P, which the simulated rank 0 receives.
    const int base = sender / period_ * period_;
    sender -= base;
    receiver = (receiver - base + ranks_) % ranks_;
  }
  const std::uint64_t n = static_cast<std::uint64_t>(ranks_);
  const std::uint64_t key =
      (static_cast<std::uint64_t>(channel) * n + static_cast<std::uint64_t>(sender)) * n +
      static_cast<std::uint64_t>(receiver);
  if (const std::uint32_t known = conn_index_.find(key); known != IdIndex::kNone) return known;
  ConnState c;
  c.route = route_between(device_[sender], device_[receiver], fold_.simulated[channel]);
  c.weight = fold_.weight[channel];
  c.sender = static_cast<std::uint32_t>(sender * channels_ + channel);
  c.receiver = static_cast<std::uint32_t>(receiver % period_ * channels_ + channel);
  c.ring = static_cast<std::uint32_t>(times_.size());
  times_.resize(times_.size() + 2 * slots_);
  c.staged_read = routes_[c.route].staged_read;
  c.proxied = routes_[c.route].proxied;
  if (c.staged_read) reads_.resize(times_.size() / 2);
  if (cut_through_) heads_.resize(times_.size() / 2);
  const auto id = static_cast<std::uint32_t>(conns_.size());
  conns_.push_back(c);
  conn_index_.insert(key, id);
  return id;
}

template <class Net>
Result Engine<Net>::collect() {
  Result r;
  r.rank_finish.assign(static_cast<std::size_t>(ranks_), proto_.launch);
  for (std::size_t sid = 0; sid < streams_.size(); ++sid) {
    Time& f = r.rank_finish[sid / static_cast<std::size_t>(channels_)];
    f = std::max(f, streams_[sid].last_done);
  }
  // Every period finishes as the simulated one does.
  for (int rank = period_; rank < ranks_; ++rank)
    r.rank_finish[rank] = r.rank_finish[rank % period_];
  for (Time t : r.rank_finish) r.total = std::max(r.total, t);
  // Switch actors finish before the ranks they send to; results name ranks only.
  r.rank_finish.resize(static_cast<std::size_t>(sched_.rank_count()));
  r.simulated_ranks = std::min(period_, sched_.rank_count());
  r.folded_links = !link_image_.empty();
  r.nccl_channels = fold_.nccl_channels;
  r.simulated_channels = fold_.nccl_simulated;
  std::vector<std::uint64_t> bytes(topo_.links().size(), 0);
  for (const ConnState& c : conns_) {
    const RouteInfo& ri = routes_[c.route];
    for (std::uint32_t i = 0; i < ri.link_count; ++i)
      bytes[route_links_[ri.first_link + i]] += c.wire_bytes * c.weight;
  }
  link_usage(r, bytes);
  r.events = events_;
  r.pieces = pieces_;
  r.ops = ops_;
  r.peak_pending_events = peak_;
  if (trace_ != nullptr) trace_->link_capacity = link_capacity_;
  return r;
}

template <class Net>
void Engine<Net>::link_usage(Result& r, std::vector<std::uint64_t>& bytes) const {
  // Folded links: every link of an orbit carries what the one standing for it carried.
  for (std::size_t l = 0; l < link_image_.size(); ++l) {
    if (link_image_[l] >= 0) bytes[l] = bytes[static_cast<std::size_t>(link_image_[l])];
  }
  const double seconds = r.total.seconds();
  for (std::size_t l = 0; l < bytes.size(); ++l) {
    if (bytes[l] == 0) continue;
    LinkUsage u;
    u.link = LinkId{static_cast<std::int32_t>(l)};
    u.bytes = bytes[l];
    u.busy_fraction =
        seconds > 0 ? static_cast<double>(bytes[l]) / (link_capacity_[l] * seconds) : 0;
    if (r.bottleneck < 0 || u.busy_fraction > r.links[r.bottleneck].busy_fraction) {
      r.bottleneck = static_cast<int>(r.links.size());
    }
    r.links.push_back(u);
  }
}

template <class Net>
void Engine<Net>::report_stuck() const {
  std::vector<std::string> lines;
  int stuck = 0;
  std::vector<int> ranks;
  for (std::size_t sid = 0; sid < streams_.size(); ++sid) {
    const StreamState& s = streams_[sid];
    if (s.done) continue;
    ++stuck;
    const int rank = static_cast<int>(sid) / channels_;
    if (ranks.empty() || ranks.back() != rank) ranks.push_back(rank);
    if (lines.size() >= 8) continue;
    const int ch = fold_.simulated[sid % static_cast<std::size_t>(channels_)];
    std::string why;
    if (!s.active) {
      why = "waits for a dependency on another channel";
    } else if (s.in_conn >= 0 && conns_[s.in_conn].receiver_waiting) {
      const ConnState& c = conns_[s.in_conn];
      why = fmt::format("waits for piece {} from rank {}, which has sent {}", c.consumed,
                        s.cursor->op().recv_peer, c.posted);
    } else if (s.out_conn >= 0 && conns_[s.out_conn].sender_waiting) {
      why = fmt::format("waits for a free slot to rank {} ({} pieces unconsumed)",
                        s.cursor->op().send_peer, slots_);
    } else {
      why = "cannot proceed";
    }
    const std::string what = fmt::format("op {} ({})", s.completed, describe(s.cursor->op()));
    lines.push_back(fmt::format("rank {} channel {} {} {}", rank, ch, what, why));
  }
  std::string msg = fmt::format("schedule cannot finish: {} stream(s) on rank(s) ", stuck);
  for (std::size_t i = 0; i < ranks.size() && i < 16; ++i) {
    msg += fmt::format("{}{}", i == 0 ? "" : ",", ranks[i]);
  }
  if (ranks.size() > 16) msg += fmt::format(",... ({} ranks)", ranks.size());
  msg += " are stuck";
  for (const std::string& l : lines) msg += "\n  " + l;
  if (stuck > static_cast<int>(lines.size())) {
    msg += fmt::format("\n  ... and {} more", stuck - static_cast<int>(lines.size()));
  }
  throw ScheduleError(msg);
}

// Members defined here; run() and the hot loop are instantiated in engine.cpp.
#define COLLSIM_INSTANTIATE(Net)                                                    \
  template Engine<Net>::Engine(const Schedule&, const Topology&, const SimOptions&, \
                               const CostParams&);                                  \
  template void Engine<Net>::init_streams();                                        \
  template std::uint32_t Engine<Net>::connection(int, int, int);                    \
  template std::uint32_t Engine<Net>::route_between(int, int, int);                 \
  template Result Engine<Net>::collect();                                           \
  template void Engine<Net>::link_usage(Result&, std::vector<std::uint64_t>&) const; \
  template void Engine<Net>::report_stuck() const;
COLLSIM_INSTANTIATE(AlphaBetaNetwork)
COLLSIM_INSTANTIATE(FlowNetwork)
#undef COLLSIM_INSTANTIATE

}  // namespace detail

std::string_view to_string(SimNetwork n) {
  return n == SimNetwork::kContentionFree ? "contention-free" : "max-min";
}

std::uint64_t events_so_far() { return detail::g_events.load(std::memory_order_relaxed); }

Result simulate(const Schedule& s, const Topology& topo, const SimOptions& options) {
  const CostParams costs = options.costs ? *options.costs : cost_params(topo);
  if (options.network == SimNetwork::kContentionFree) {
    detail::Engine<detail::AlphaBetaNetwork> e(s, topo, options, costs);
    return e.run();
  }
  detail::Engine<detail::FlowNetwork> e(s, topo, options, costs);
  return e.run();
}

Time lower_bound(const Schedule& s, const Topology& topo, const SimOptions& options, Time enough) {
  if (options.network == SimNetwork::kContentionFree) return Time();
  const CostParams costs = options.costs ? *options.costs : cost_params(topo);
  detail::Engine<detail::FlowNetwork> e(s, topo, options, costs);
  return e.lower_bound(enough);
}

}  // namespace collsim
