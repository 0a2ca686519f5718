#include "topology/topology.hpp"

#include <mutex>
#include <shared_mutex>

#include <algorithm>
#include <deque>
#include <limits>
#include <unordered_map>

#include <boost/graph/push_relabel_max_flow.hpp>
#include <fmt/format.h>

#include "topology/error.hpp"
#include "topology/graph.hpp"

namespace collsim {

std::string_view to_string(NetworkKind k) {
  switch (k) {
    case NetworkKind::kNone: return "none";
    case NetworkKind::kSingleSwitch: return "single_switch";
    case NetworkKind::kFatTree: return "fat_tree";
    case NetworkKind::kRailOptimized: return "rail_optimized";
    case NetworkKind::kExplicit: return "explicit";
  }
  return "?";
}

std::string_view to_string(Routing r) {
  switch (r) {
    case Routing::kDmodK: return "dmodk";
    case Routing::kEcmp: return "ecmp";
    case Routing::kAdaptive: return "adaptive";
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

std::optional<DeviceId> Topology::nic_of(DeviceId gpu) const { return gpu_nic_.at(gpu.value); }

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

void Topology::assign_nics() {
  gpu_nic_.assign(devices_.size(), std::nullopt);
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
    for (const DeviceId g : gpus) {
      // Rails: one NIC per GPU, GPU i uses NIC i (NCCL pairs each GPU with its closest NIC, and
      // rail-optimized nodes put NIC i beside GPU i: DGX H100 user guide §1.2.3 [S20b]).
      if (nics.size() == gpus.size()) {
        gpu_nic_[g.value] = nics[devices_[g.value].local_index];
        continue;
      }
      // Otherwise the nearest NICs; GPUs sharing the same nearest set spread over it.
      const auto hops = node_local_hops(g);
      const auto hops_to = [&](DeviceId nic) {
        const auto it = hops.find(nic.value);
        return it == hops.end() ? -1 : it->second;
      };
      int best = std::numeric_limits<int>::max();
      for (DeviceId nic : nics) {
        if (hops_to(nic) >= 0) best = std::min(best, hops_to(nic));
      }
      std::vector<DeviceId> nearest;
      for (DeviceId nic : nics) {
        if (hops_to(nic) == best) nearest.push_back(nic);
      }
      if (nearest.empty()) continue;
      gpu_nic_[g.value] = nearest[devices_[g.value].local_index % nearest.size()];
    }
  }
  for (const Device& d : devices_) {
    const auto nic = gpu_nic_[d.id.value];
    if (nic && !nic_owner_[nic->value]) nic_owner_[nic->value] = d.id;
  }
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
  const auto nic = nic_of(gpu);
  if (!nic) return Bandwidth();
  int sharers = 0;  // the GPUs of this node that use the same NIC
  for (DeviceId other : node_gpus_.at(devices_[gpu.value].node)) {
    sharers += (gpu_nic_[other.value] == nic) ? 1 : 0;
  }
  Bandwidth out;  // the NIC's network-facing links
  for (LinkId l : graph_->out[nic->value]) {
    if (is_network(links_[l.value].kind)) out = out + links_[l.value].bandwidth;
  }
  const Bandwidth path = route_bandwidth(route(gpu, *nic));
  return std::min(path, out / sharers);
}

Bandwidth Topology::bisection_bandwidth() const {
  using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
  using FlowGraph = boost::adjacency_list<
      boost::vecS, boost::vecS, boost::directedS, boost::no_property,
      boost::property<boost::edge_capacity_t, double,
                      boost::property<boost::edge_residual_capacity_t, double,
                                      boost::property<boost::edge_reverse_t,
                                                      Traits::edge_descriptor>>>>;
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
  if (routing_ != Routing::kEcmp) flow = 0;  // only ECMP tells flows of one pair apart
  const RouteCache::Key key{(static_cast<std::uint64_t>(from.value) << 32) |
                                static_cast<std::uint32_t>(to.value),
                            flow};
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
