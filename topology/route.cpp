// Routing rules (Topology::route):
//  1. Inside a node (or an NVLink domain spanning nodes) a transfer takes the shortest path over
//     NVLink / NVSwitch / C2C links when one exists, otherwise over PCIe and the CPUs' SMP link
//     (NCCL prefers path type NVL over PCI, src/graph/paths.cc). Only switches and CPUs forward:
//     a GPU or NIC is never a transit point. A PCIe switch with P2P off does not turn traffic
//     between two of its downstream devices; the route climbs to the CPU instead (what NCCL's
//     SHM transport does when P2P is unavailable).
//  2. Between nodes, a GPU reaches the network through its NIC for the flow's channel
//     (Topology::nics_of and route_flow: the rail NIC when the node has one per GPU) and the data
//     enters the destination through the destination GPU's NIC for the same flow.
//  3. Across the network the route is a shortest path; where several next hops are equally short
//     (leaf -> spine, spine -> core in a fat tree) the fabric's Routing picks one:
//     dmodk: the (d mod k)-th (at the next level up, the (d / k mod k')-th), d being the
//     destination NIC's index: destination-mod-k routing, which spreads traffic deterministically
//     over the spines (Zahavi, "D-Mod-K Routing Providing Non-Blocking Traffic for Shift
//     Permutations on Real Life Fat Trees", 2010); ecmp: the (h mod k)-th, h a fixed 64-bit mix of
//     (source NIC, destination NIC, flow, hop), as a switch hashes a packet's 5-tuple: static per
//     flow, flows collide by chance; adaptive: the fabric was built with one switch per tier
//     (config_templated.cpp), so there is nothing to choose.
//  4. PXN: on rail-optimized networks a GPU whose own NIC is on another rail than the
//     destination's NIC sends through its node's NIC on the destination's rail: directly where
//     that NIC shares its PCIe switch (path PXB, nic_at_pxb: NCCL takes the PXN path only where
//     a GPU's own path to the NIC is worse, `src/graph/paths.cc`), else handing the data over
//     NVLink to the GPU that owns the NIC, which sends it (see pxn_first_leg).
//  5. GPUDirect RDMA off (Topology::gdr): the NIC cannot reach GPU memory, so NCCL's proxy
//     stages the data in host memory (NCCL's env docs, NCCL_NET_GDR_LEVEL; docs/theory.md §2.3):
//     the sending GPU writes it to its host CPU's memory and the NIC reads it from there, and on
//     arrival the NIC writes to host memory and the GPU reads it back: GPU -> host CPU -> NIC
//     and NIC -> host CPU -> GPU, each leg as in 1. PXN is then not taken [assumption: NCCL's
//     PXN has the NIC read the proxy GPU's memory, which needs GPUDirect RDMA].
// Ties in 1 break on lower total latency, then on lower link id.
#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <limits>
#include <mutex>
#include <queue>
#include <tuple>
#include <unordered_map>

#include "topology/error.hpp"
#include "topology/graph.hpp"

namespace collsim {

namespace {

bool forwards(DeviceKind k) {
  return k == DeviceKind::kNvSwitch || k == DeviceKind::kPcieSwitch || k == DeviceKind::kCpu ||
         k == DeviceKind::kSwitch;
}

}  // namespace

const Route& Topology::intra_route(DeviceId from, DeviceId to) const {
  static const Route kNone;
  RouteCache& cache = *routes_;
  std::call_once(cache.islands_once, [&] { cache.island = islands(); });
  if (cache.island[from.value] != cache.island[to.value]) return kNone;
  const std::uint64_t key =
      (static_cast<std::uint64_t>(from.value) << 32) | static_cast<std::uint32_t>(to.value);
  {
    const std::shared_lock<std::shared_mutex> read(cache.mutex);
    const auto it = cache.intra.find(key);
    if (it != cache.intra.end()) return it->second;
  }
  Route r = find_intra_route(from, to);
  const std::unique_lock<std::shared_mutex> write(cache.mutex);
  return cache.intra.try_emplace(key, std::move(r)).first->second;
}

std::vector<std::int32_t> Topology::islands() const {
  // Union-find over the non-network links; every device ends at the smallest id of its set.
  std::vector<std::int32_t> up(devices_.size());
  const auto at = [&](std::int32_t d) -> std::int32_t& { return up[static_cast<std::size_t>(d)]; };
  for (std::size_t d = 0; d < up.size(); ++d) up[d] = static_cast<std::int32_t>(d);
  const auto root = [&](std::int32_t d) {
    while (at(d) != d) d = at(d) = at(at(d));  // halving the path as it goes
    return d;
  };
  for (const Link& l : links_) {
    if (is_network(l.kind)) continue;
    const std::int32_t a = root(l.src.value);
    const std::int32_t b = root(l.dst.value);
    if (a != b) at(std::max(a, b)) = std::min(a, b);
  }
  for (std::size_t d = 0; d < up.size(); ++d) up[d] = root(static_cast<std::int32_t>(d));
  return up;
}

Route Topology::find_intra_route(DeviceId from, DeviceId to) const {
  // Dijkstra over "arrived through link L" states, cost (hops, latency), so that the P2P turn
  // rule (which depends on where the route came from) can be applied.
  auto search = [&](const std::function<bool(LinkKind)>& allowed) -> Route {
    using Cost = std::tuple<int, std::int64_t, std::int32_t>;  // hops, latency ps, link id
    // Maps, not vectors over every link: the search stays inside a node or NVLink domain, and
    // clearing per-link vectors on every call made loading a large cluster quadratic.
    std::unordered_map<std::int32_t, Cost> best;  // by link id; absent = not reached
    std::unordered_map<std::int32_t, std::int32_t> parent;
    std::priority_queue<Cost, std::vector<Cost>, std::greater<>> queue;
    for (LinkId l : graph_->out[from.value]) {
      const Link& link = links_[l.value];
      if (!allowed(link.kind)) continue;
      best[l.value] = Cost{1, link.latency.ps(), l.value};
      queue.push(best[l.value]);
    }
    while (!queue.empty()) {
      const auto [hops, lat, lid] = queue.top();
      queue.pop();
      if (best.at(lid) != Cost{hops, lat, lid}) continue;
      const Link& in = links_[lid];
      if (in.dst == to) {
        Route r;
        for (std::int32_t l = lid; l >= 0;) {
          r.links.push_back(LinkId{l});
          const auto up = parent.find(l);
          l = up == parent.end() ? -1 : up->second;
        }
        std::reverse(r.links.begin(), r.links.end());
        return r;
      }
      const Device& here = devices_[in.dst.value];
      if (!forwards(here.kind)) continue;
      for (LinkId o : graph_->out[here.id.value]) {
        const Link& out = links_[o.value];
        // No U-turns, except at a CPU: bouncing through host memory is how two devices talk
        // when peer-to-peer is off.
        if (!allowed(out.kind) || (o == in.reverse && here.kind != DeviceKind::kCpu)) continue;
        if (here.kind == DeviceKind::kPcieSwitch && !here.p2p &&
            devices_[in.src.value].kind != DeviceKind::kCpu &&
            devices_[out.dst.value].kind != DeviceKind::kCpu) {
          continue;
        }
        const Cost c{hops + 1, lat + out.latency.ps(), o.value};
        const auto seen = best.find(o.value);
        // Fewer hops first, then lower latency (and link id, the tuple's last element).
        if (seen == best.end() || c < seen->second) {
          best[o.value] = c;
          parent[o.value] = lid;
          queue.push(c);
        }
      }
    }
    return Route{};
  };
  Route r = search([](LinkKind k) { return is_nvlink_class(k); });
  if (r.empty()) r = search([](LinkKind k) { return !is_network(k); });
  return r;
}

namespace {

// splitmix64's finaliser: a fixed, well-mixed hash, the same on every platform.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

}  // namespace

Route Topology::network_route(DeviceId from_nic, DeviceId to_nic, std::uint32_t flow) const {
  // Hop distances to the destination over network links, transiting switches only: a breadth-
  // first search back from the destination through the switches, then the source NIC one hop
  // past the nearest switch it feeds. Only the switches' distances and the two NICs' are read
  // below, so the search never walks the links of the thousands of NICs a switch may serve,
  // and the distances live in a per-thread array reset entry by entry: a route costs the
  // fabric's switch links, not the cluster's devices. The switches' distances depend only on
  // which switches feed the destination NIC, so NICs behind the same leaf or ToR share one
  // search (RouteCache::fabric): a route then costs the switches it reaches.
  thread_local std::vector<int> dist;
  thread_local std::vector<std::int32_t> touched;
  if (dist.size() < devices_.size()) dist.resize(devices_.size(), -1);
  const auto set = [&](DeviceId d, int hops) {
    dist[d.value] = hops;
    touched.push_back(d.value);
  };
  struct Reset {
    ~Reset() {
      for (std::int32_t d : touched) dist[d] = -1;
      touched.clear();
    }
  } reset;
  set(to_nic, 0);
  std::vector<std::int32_t> feeders;
  for (LinkId l : graph_->in[to_nic.value]) {
    const Link& link = links_[l.value];
    if (is_network(link.kind) && devices_[link.src.value].kind == DeviceKind::kSwitch) {
      feeders.push_back(link.src.value);
    }
  }
  std::sort(feeders.begin(), feeders.end());
  feeders.erase(std::unique(feeders.begin(), feeders.end()), feeders.end());
  const std::vector<std::pair<std::int32_t, int>>* known = nullptr;
  {
    const std::shared_lock<std::shared_mutex> read(routes_->mutex);
    auto it = routes_->fabric.find(feeders);
    if (it != routes_->fabric.end()) known = &it->second;  // map nodes never move
  }
  std::deque<DeviceId> queue;
  if (known != nullptr) {
    for (const auto& [d, hops] : *known) set(DeviceId{d}, hops);
  } else {
    queue.push_back(to_nic);
  }
  while (!queue.empty()) {
    const DeviceId d = queue.front();
    queue.pop_front();
    const auto visit = [&](LinkId l) {
      const Link& link = links_[l.value];
      if (!is_network(link.kind) || devices_[link.src.value].kind != DeviceKind::kSwitch ||
          dist[link.src.value] >= 0) {
        return;
      }
      set(link.src, dist[d.value] + 1);
      queue.push_back(link.src);
    };
    // The destination NIC's own in-links are few; a switch's come from switches only here.
    if (d == to_nic) {
      for (LinkId l : graph_->in[d.value]) visit(l);
    } else {
      for (LinkId l : graph_->in_from_switch[d.value]) visit(l);
    }
  }
  if (known == nullptr) {
    std::vector<std::pair<std::int32_t, int>> reached;
    for (std::int32_t d : touched) {
      if (d != to_nic.value) reached.emplace_back(d, dist[d]);
    }
    const std::unique_lock<std::shared_mutex> write(routes_->mutex);
    routes_->fabric.try_emplace(std::move(feeders), std::move(reached));
  }
  if (from_nic != to_nic) {
    int best = -1;
    for (LinkId l : graph_->out[from_nic.value]) {
      const Link& link = links_[l.value];
      if (!is_network(link.kind) || dist[link.dst.value] < 0) continue;
      if (link.dst != to_nic && devices_[link.dst.value].kind != DeviceKind::kSwitch) continue;
      if (best < 0 || dist[link.dst.value] < best) best = dist[link.dst.value];
    }
    if (best < 0) return Route{};
    set(from_nic, best + 1);
  }
  // D-mod-k's destination: the NIC's index, or a switch's device id (a CollNet switch actor).
  const int key = nic_index_[to_nic.value] >= 0 ? nic_index_[to_nic.value] : to_nic.value;
  const std::uint64_t flow_hash =
      mix(mix(mix(static_cast<std::uint64_t>(nic_index_[from_nic.value])) ^
              static_cast<std::uint64_t>(key)) ^
          flow);
  Route r;
  std::uint64_t digit = 1;
  for (DeviceId cur = from_nic; cur != to_nic;) {
    // The next hops: a switch one hop nearer, or the destination itself (links in id order,
    // as the device's out-links list them).
    thread_local std::vector<LinkId> next;  // kept from hop to hop, route to route
    next.clear();
    const auto nearer = [&](LinkId l) {
      const Link& link = links_[l.value];
      return link.src == cur && is_network(link.kind) &&
             dist[link.dst.value] == dist[cur.value] - 1;
    };
    if (dist[cur.value] == 1) {
      for (LinkId l : graph_->in[to_nic.value]) {
        if (nearer(l)) next.push_back(l);
      }
    } else {
      for (LinkId l : graph_->out_to_switch[cur.value]) {
        if (nearer(l)) next.push_back(l);
      }
    }
    // D-mod-k takes successive digits of d at successive levels (d mod k1, then d / k1 mod k2).
    const std::uint64_t choice = routing_ == Routing::kEcmp
                                     ? mix(flow_hash ^ r.links.size())
                                     : static_cast<std::uint64_t>(key) / digit;
    const LinkId pick = next[choice % next.size()];
    digit *= next.size();
    r.links.push_back(pick);
    cur = links_[pick.value].dst;
  }
  return r;
}

bool Topology::nic_at_pxb(DeviceId gpu, DeviceId nic) const {
  const Route& r = intra_route(gpu, nic);
  if (r.empty()) return false;
  for (std::size_t i = 0; i < r.links.size(); ++i) {
    const Link& l = links_[r.links[i].value];
    if (l.kind != LinkKind::kPcie) return false;
    if (i + 1 < r.links.size() && devices_[l.dst.value].kind != DeviceKind::kPcieSwitch) {
      return false;
    }
  }
  return true;
}

// Rule 4 (PXN): when the source GPU's own NIC (for this flow) is on another rail than the
// destination NIC, and the source node has a NIC on the destination's rail: the first leg is
// GPU -> PCIe switch -> that NIC where the two share a PCIe switch, else, where the GPU reaches
// that NIC's GPU over NVLink, GPU -> (NVLink) -> that GPU -> its NIC. Empty when PXN does not
// apply.
Route Topology::pxn_first_leg(DeviceId gpu, DeviceId own_nic, DeviceId dst_nic,
                              DeviceId& via_nic) const {
  if (!pxn_ || devices_[gpu.value].kind != DeviceKind::kGpu) return Route{};
  const int node = devices_[gpu.value].node;
  const int rail = devices_[dst_nic.value].local_index;
  if (node < 0 || rail >= static_cast<int>(node_nics_[node].size())) return Route{};
  const DeviceId rail_nic = node_nics_[node][rail];
  if (rail_nic == own_nic) return Route{};
  if (nic_at_pxb(gpu, rail_nic)) {
    via_nic = rail_nic;
    return intra_route(gpu, rail_nic);
  }
  const auto proxy = nic_owner_[rail_nic.value];
  if (!proxy || *proxy == gpu) return Route{};
  const Route& to_proxy = intra_route(gpu, *proxy);
  const bool nvlink = !to_proxy.empty() &&
                      std::all_of(to_proxy.links.begin(), to_proxy.links.end(),
                                  [&](LinkId l) { return is_nvlink_class(links_[l.value].kind); });
  if (!nvlink) return Route{};
  const Route& to_nic = intra_route(*proxy, rail_nic);
  if (to_nic.empty()) return Route{};
  Route leg = to_proxy;
  leg.links.insert(leg.links.end(), to_nic.links.begin(), to_nic.links.end());
  via_nic = rail_nic;
  return leg;
}

std::optional<DeviceId> Topology::host_cpu(DeviceId gpu) const {
  std::optional<DeviceId> best;
  int best_hops = std::numeric_limits<int>::max();
  for (const auto& [id, hops] : node_local_hops(gpu)) {
    if (devices_[id].kind != DeviceKind::kCpu) continue;
    if (hops < best_hops || (hops == best_hops && id < best->value)) {
      best = DeviceId{id};
      best_hops = hops;
    }
  }
  return best;
}

bool Topology::append_nic_leg(Route& r, DeviceId from, DeviceId to, DeviceId gpu) const {
  const auto add = [&r](const Route& part) {
    r.links.insert(r.links.end(), part.links.begin(), part.links.end());
    return !part.empty();
  };
  if (gdr_ || devices_[gpu.value].kind != DeviceKind::kGpu) return add(intra_route(from, to));
  const std::optional<DeviceId> cpu = host_cpu(gpu);
  if (!cpu) return add(intra_route(from, to));
  const Route& up = intra_route(from, *cpu);
  const Route& down = intra_route(*cpu, to);
  return !up.empty() && !down.empty() && add(up) && add(down);
}

Route Topology::find_route(DeviceId from, DeviceId to, std::uint32_t flow) const {
  if (from == to) return Route{};
  if (const Route& direct = intra_route(from, to); !direct.empty()) return direct;

  // A network switch is its own end of the network leg: a CollNet switch actor (SHARP) runs on
  // one, and the GPUs reach it through their NIC for the flow.
  auto nic_for = [&](DeviceId d) -> std::optional<DeviceId> {
    const DeviceKind kind = devices_[d.value].kind;
    if (kind == DeviceKind::kNic || kind == DeviceKind::kSwitch) return d;
    if (devices_[d.value].kind == DeviceKind::kGpu) return nic_for_flow(d, flow);
    return std::nullopt;
  };
  auto src_nic = nic_for(from);
  const auto dst_nic = nic_for(to);
  auto fail = [&](std::string_view why) -> Route {
    throw ConfigError(fmt::format("no route from {} to {}: {}", devices_[from.value].name,
                                  devices_[to.value].name, why));
  };
  if (!src_nic) return fail(fmt::format("{} reaches no NIC", devices_[from.value].name));
  if (!dst_nic) return fail(fmt::format("{} reaches no NIC", devices_[to.value].name));

  Route r;
  auto append = [&](const Route& part, std::string_view what) {
    if (part.empty()) fail(what);
    r.links.insert(r.links.end(), part.links.begin(), part.links.end());
  };
  DeviceId via_nic = *src_nic;
  const bool to_switch = devices_[dst_nic->value].kind == DeviceKind::kSwitch;
  const Route pxn = gdr_ && !to_switch ? pxn_first_leg(from, *src_nic, *dst_nic, via_nic) : Route{};
  if (!pxn.empty()) {
    append(pxn, "");
    src_nic = via_nic;
  } else if (from != *src_nic) {
    if (!append_nic_leg(r, from, *src_nic, from)) fail("its NIC is unreachable");
  }
  if (*src_nic != *dst_nic) {
    append(network_route(*src_nic, *dst_nic, flow), "the network does not connect their NICs");
  }
  if (*dst_nic != to && !append_nic_leg(r, *dst_nic, to, to)) {
    fail("the destination NIC cannot reach it");
  }
  return r;
}

}  // namespace collsim
