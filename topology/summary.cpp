#include "topology/summary.hpp"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

namespace collsim {

TopologySummary summarize(const Topology& topo) {
  TopologySummary s;
  s.name = topo.name();
  s.network = topo.network_kind();
  if (s.network == NetworkKind::kFatTree || s.network == NetworkKind::kRailOptimized) {
    s.routing = std::string(to_string(topo.routing()));
  }
  s.fabric = topo.fabric();
  s.nodes = topo.node_count();
  s.gpus = topo.rank_count();
  s.gpus_per_node_min = INT32_MAX;
  for (int n = 0; n < topo.node_count(); ++n) {
    const int g = static_cast<int>(topo.gpus_of_node(n).size());
    s.gpus_per_node_min = std::min(s.gpus_per_node_min, g);
    s.gpus_per_node_max = std::max(s.gpus_per_node_max, g);
  }
  s.gpu_model = topo.gpu_model().name;
  s.gpu_sm = topo.gpu_model().sm;
  for (const Device& d : topo.devices()) ++s.devices[d.kind];

  for (const Link& l : topo.links()) {
    if (l.reverse < l.id) continue;  // one entry per cable
    auto it = std::find_if(s.links.begin(), s.links.end(), [&](const LinkGroup& g) {
      return g.kind == l.kind && g.bandwidth == l.bandwidth && g.latency == l.latency;
    });
    if (it == s.links.end()) {
      s.links.push_back(LinkGroup{l.kind, l.bandwidth, l.latency, 1});
    } else {
      ++it->cables;
    }
  }
  std::sort(s.links.begin(), s.links.end(), [](const LinkGroup& a, const LinkGroup& b) {
    return std::make_tuple(a.kind, b.bandwidth, a.latency) <
           std::make_tuple(b.kind, a.bandwidth, b.latency);
  });

  bool first = true;
  for (DeviceId g : topo.gpus()) {
    const Bandwidth inj = topo.injection_bandwidth(g);
    s.injection_min = first ? inj : std::min(s.injection_min, inj);
    s.injection_max = first ? inj : std::max(s.injection_max, inj);
    first = false;
  }
  s.bisection = topo.bisection_bandwidth();
  s.nics = s.devices.contains(DeviceKind::kNic);
  s.in_order = topo.in_order();
  s.plugin_latency = topo.plugin_latency();
  return s;
}

void write_dot(const Topology& topo, std::ostream& out) {
  out << fmt::format("graph \"{}\" {{\n  node [fontname=\"Helvetica\"];\n", topo.name());
  auto shape = [](DeviceKind k) {
    switch (k) {
      case DeviceKind::kGpu: return "box";
      case DeviceKind::kNic: return "component";
      case DeviceKind::kCpu: return "box3d";
      default: return "ellipse";
    }
  };
  for (int n = -1; n < topo.node_count(); ++n) {
    if (n >= 0) out << fmt::format("  subgraph cluster_node{} {{\n    label=\"node{}\";\n", n, n);
    for (const Device& d : topo.devices()) {
      if (d.node != n) continue;
      out << fmt::format("{}  \"{}\" [shape={}];\n", n >= 0 ? "  " : "", d.name, shape(d.kind));
    }
    if (n >= 0) out << "  }\n";
  }
  for (const Link& l : topo.links()) {
    if (l.reverse < l.id) continue;
    out << fmt::format("  \"{}\" -- \"{}\" [label=\"{} {}\"];\n", topo.device(l.src).name,
                       topo.device(l.dst).name, to_string(l.kind), to_string(l.bandwidth));
  }
  out << "}\n";
}

}  // namespace collsim
