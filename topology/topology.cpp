#include "topology/topology.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/graph/push_relabel_max_flow.hpp>
#include <deque>
#include <limits>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "topology/error.hpp"
#include "topology/graph.hpp"

namespace collsim {

std::string_view to_string(NetworkKind k) {
  switch (k) {
    case NetworkKind::kNone:
      return "none";
    case NetworkKind::kSingleSwitch:
      return "single_switch";
    case NetworkKind::kFatTree:
      return "fat_tree";
    case NetworkKind::kRailOptimized:
      return "rail_optimized";
    case NetworkKind::kExplicit:
      return "explicit";
  }
  return "?";
}

std::string_view to_string(Routing r) {
  switch (r) {
    case Routing::kDmodK:
      return "dmodk";
    case Routing::kEcmp:
      return "ecmp";
    case Routing::kAdaptive:
      return "adaptive";
  }
  return "?";
}

Topology::Topology() = default;
Topology::~Topology() = default;
Topology::Topology(Topology&&) noexcept = default;

Topology& Topology::operator=(Topology&&) noexcept = default;

std::vector<LinkId> Topology::out_links(DeviceId d) const { return graph_->out.at(d.value); }
std::vector<LinkId> Topology::in_links(DeviceId d) const { return graph_->in.at(d.value); }

const GpuModel& Topology::gpu_model() const { return models_.at(device(gpu_of(Rank{0})).model); }

const std::vector<DeviceId>& Topology::nics_of(DeviceId gpu) const {
  return gpu_nics_.at(gpu.value);
}

std::optional<DeviceId> Topology::nic_of(DeviceId gpu) const { return nic_for_flow(gpu, 0); }

std::optional<DeviceId> Topology::nic_for_flow(DeviceId gpu, std::uint32_t flow) const {
  const std::vector<DeviceId>& nics = gpu_nics_.at(gpu.value);
  if (nics.empty()) return std::nullopt;
  return nics[flow % nics.size()];
}

std::uint32_t Topology::route_flow(int channel) const {
  const auto c = static_cast<std::uint32_t>(std::max(0, channel));
  if (routing_ == Routing::kEcmp) return c;
  const auto g = static_cast<std::uint32_t>(std::max<std::size_t>(1, node_gpus_.front().size()));
  return c / g % nic_ways_;
}

std::unordered_map<std::int32_t, int> Topology::node_local_hops(DeviceId from) const {
  // A map, not a vector over every device: this runs once per GPU, and a vector would make
  // loading a 27,648-GPU cluster quadratic.
  std::unordered_map<std::int32_t, int> hops{{from.value, 0}};
  std::deque<DeviceId> queue{from};
  while (!queue.empty()) {
    const DeviceId d = queue.front();
    queue.pop_front();
    for (LinkId l : graph_->out[d.value]) {
      const Link& link = links_[l.value];
      if (is_network(link.kind) || hops.contains(link.dst.value)) continue;
      hops[link.dst.value] = hops[d.value] + 1;
      // A NIC is a destination, not a transit point, for intra-node reachability.
      if (devices_[link.dst.value].kind != DeviceKind::kNic) queue.push_back(link.dst);
    }
  }
  return hops;
}

namespace {

// `share` of `nearest` for the i-th of `sharers` GPUs that all have it nearest: an equal block
// when there are at least as many NICs as GPUs, else one NIC, in turn.
std::vector<DeviceId> share_of(const std::vector<DeviceId>& nearest, std::size_t i,
                               std::size_t sharers) {
  if (nearest.size() < sharers) return {nearest[i % nearest.size()]};
  const std::size_t k = nearest.size() / sharers;
  return {nearest.begin() + static_cast<std::ptrdiff_t>(i * k),
          nearest.begin() + static_cast<std::ptrdiff_t>((i + 1) * k)};
}

}  // namespace

void Topology::assign_nics() {
  gpu_nics_.assign(devices_.size(), {});
  nic_index_.assign(devices_.size(), -1);
  int nic_count = 0;
  for (const Device& d : devices_) {
    if (d.kind == DeviceKind::kNic) nic_index_[d.id.value] = nic_count++;
  }
  node_nics_.assign(node_gpus_.size(), {});
  nic_owner_.assign(devices_.size(), std::nullopt);
  auto& node_nics = node_nics_;
  for (const Device& d : devices_) {
    if (d.kind == DeviceKind::kNic && d.node >= 0) node_nics[d.node].push_back(d.id);
  }
  for (std::size_t n = 0; n < node_gpus_.size(); ++n) {
    const auto& gpus = node_gpus_[n];
    const auto& nics = node_nics[n];
    if (nics.empty()) continue;
    // Rails: one NIC per GPU, GPU i uses NIC i (NCCL pairs each GPU with its closest NIC, and
    // rail-optimized nodes put NIC i beside GPU i: DGX H100 user guide §1.2.3 [S20b]).
    if (nics.size() == gpus.size()) {
      for (const DeviceId g : gpus) gpu_nics_[g.value] = {nics[devices_[g.value].local_index]};
      continue;
    }
    // Otherwise each GPU's nearest NICs, shared out among the GPUs with the same nearest set.
    std::vector<std::vector<DeviceId>> nearest(gpus.size());
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      const auto hops = node_local_hops(gpus[i]);
      int best = std::numeric_limits<int>::max();
      for (DeviceId nic : nics) {
        if (const auto it = hops.find(nic.value); it != hops.end())
          best = std::min(best, it->second);
      }
      for (DeviceId nic : nics) {
        if (const auto it = hops.find(nic.value); it != hops.end() && it->second == best) {
          nearest[i].push_back(nic);
        }
      }
    }
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      if (nearest[i].empty()) continue;
      std::size_t before = 0, sharers = 0;
      for (std::size_t j = 0; j < gpus.size(); ++j) {
        if (nearest[j] != nearest[i]) continue;
        before += j < i ? 1 : 0;
        ++sharers;
      }
      gpu_nics_[gpus[i].value] = share_of(nearest[i], before, sharers);
    }
  }
  for (const Device& d : devices_) {
    for (DeviceId nic : gpu_nics_[d.id.value]) {
      if (!nic_owner_[nic.value]) nic_owner_[nic.value] = d.id;
    }
    nic_ways_ = std::max(nic_ways_, static_cast<std::uint32_t>(gpu_nics_[d.id.value].size()));
  }
}

void Topology::drop_nics(const std::vector<DeviceId>& failed) {
  const auto is_failed = [&](DeviceId nic) {
    return std::find(failed.begin(), failed.end(), nic) != failed.end();
  };
  for (DeviceId nic : failed) nic_owner_.at(nic.value) = std::nullopt;  // no PXN through it
  for (std::size_t n = 0; n < node_gpus_.size(); ++n) {
    std::vector<DeviceId> working;
    for (DeviceId nic : node_nics_[n]) {
      if (!is_failed(nic)) working.push_back(nic);
    }
    for (DeviceId gpu : node_gpus_[n]) {
      std::vector<DeviceId>& mine = gpu_nics_[gpu.value];
      if (std::none_of(mine.begin(), mine.end(), is_failed)) continue;
      std::erase_if(mine, is_failed);
      if (!mine.empty()) continue;
      if (working.empty()) {
        if (node_gpus_.size() == 1) continue;  // one node: no network traffic to carry
        throw RequestError(fmt::format(
            "node{} has no working NIC left (all {} failed): NCCL cannot connect it to the other "
            "nodes, so the run cannot proceed",
            n, node_nics_[n].size()));
      }
      // NCCL moves the channels to the nearest of the node's remaining NICs.
      const auto hops = node_local_hops(gpu);
      int best = std::numeric_limits<int>::max();
      for (DeviceId nic : working) {
        if (const auto it = hops.find(nic.value); it != hops.end()) best = std::min(best, it->second);
      }
      for (DeviceId nic : working) {
        if (const auto it = hops.find(nic.value); it != hops.end() && it->second == best) {
          mine.push_back(nic);
        }
      }
      if (mine.empty()) mine = working;
    }
  }
  nic_ways_ = 1;
  for (const auto& nics : gpu_nics_) {
    nic_ways_ = std::max(nic_ways_, static_cast<std::uint32_t>(nics.size()));
  }
  routes_ = std::make_unique<RouteCache>();
}

Time Topology::route_latency(const Route& r) const {
  Time t;
  for (LinkId l : r.links) t += links_[l.value].latency;
  return t;
}

Bandwidth Topology::route_bandwidth(const Route& r) const {
  Bandwidth bw = Bandwidth::bytes_per_second(std::numeric_limits<double>::infinity());
  for (LinkId l : r.links) bw = std::min(bw, links_[l.value].bandwidth);
  return bw;
}

Bandwidth Topology::injection_bandwidth(DeviceId gpu) const {
  Bandwidth total;  // over the GPU's NICs: its share of each, limited by the way there
  for (DeviceId nic : nics_of(gpu)) {
    int sharers = 0;  // the GPUs of this node that use the same NIC
    for (DeviceId other : node_gpus_.at(devices_[gpu.value].node)) {
      const auto& theirs = gpu_nics_[other.value];
      sharers += std::find(theirs.begin(), theirs.end(), nic) != theirs.end() ? 1 : 0;
    }
    Bandwidth out;  // the NIC's network-facing links
    for (LinkId l : graph_->out[nic.value]) {
      if (is_network(links_[l.value].kind)) out = out + links_[l.value].bandwidth;
    }
    total = total + std::min(route_bandwidth(route(gpu, nic)), out / sharers);
  }
  return total;
}

Bandwidth Topology::bisection_bandwidth() const {
  using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
  using FlowGraph = boost::adjacency_list<
      boost::vecS, boost::vecS, boost::directedS, boost::no_property,
      boost::property<
          boost::edge_capacity_t, double,
          boost::property<boost::edge_residual_capacity_t, double,
                          boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;
  const auto n = devices_.size();
  FlowGraph g(n + 2);
  const auto source = n, sink = n + 1;
  auto capacity = boost::get(boost::edge_capacity, g);
  auto reverse = boost::get(boost::edge_reverse, g);
  auto add = [&](std::size_t a, std::size_t b, double cap) {
    auto e = boost::add_edge(a, b, g).first;
    auto r = boost::add_edge(b, a, g).first;
    capacity[e] = cap;
    capacity[r] = 0;
    reverse[e] = r;
    reverse[r] = e;
  };
  // When every GPU shares one NVLink domain, routing never leaves it (route.cpp rule 1), so only
  // NVLink-class links count; otherwise every link may carry cross-half traffic.
  const auto routes_fast = [&](DeviceId gpu) {
    const Route& r = route(rank_gpu_.front(), gpu);
    return std::all_of(r.links.begin(), r.links.end(),
                       [&](LinkId l) { return is_nvlink_class(links_[l.value].kind); });
  };
  const bool one_domain = std::all_of(rank_gpu_.begin(), rank_gpu_.end(), routes_fast);
  for (const Link& l : links_) {
    if (one_domain && !is_nvlink_class(l.kind)) continue;
    add(l.src.value, l.dst.value, l.bandwidth.gbyte_per_second());
  }
  const double unlimited = 1e18;
  const std::size_t half = rank_gpu_.size() / 2;
  if (half == 0) return Bandwidth();
  for (std::size_t r = 0; r < rank_gpu_.size(); ++r) {
    const auto v = static_cast<std::size_t>(rank_gpu_[r].value);
    if (r < half) {
      add(source, v, unlimited);
    } else if (r >= rank_gpu_.size() - half) {  // with an odd count the middle GPU sits out
      add(v, sink, unlimited);
    }
  }
  const double flow = boost::push_relabel_max_flow(g, source, sink);
  return GBps(flow);
}

const Route& Topology::route(DeviceId from, DeviceId to, std::uint32_t flow) const {
  if (routing_ != Routing::kEcmp) flow %= nic_ways_;  // otherwise only the NIC choice differs
  const RouteCache::Key key{
      (static_cast<std::uint64_t>(from.value) << 32) | static_cast<std::uint32_t>(to.value), flow};
  {
    const std::shared_lock<std::shared_mutex> read(routes_->mutex);
    auto it = routes_->routes.find(key);
    if (it != routes_->routes.end()) return it->second;
  }
  // Computed outside the lock (it reads only the immutable graph); the first insert wins, and
  // references stay valid across rehashes (the map's nodes do not move).
  Route route = find_route(from, to, flow);
  const std::unique_lock<std::shared_mutex> write(routes_->mutex);
  return routes_->routes.try_emplace(key, std::move(route)).first->second;
}

}  // namespace collsim
