#include "topology/builder.hpp"

#include <fmt/format.h>

#include <boost/graph/connected_components.hpp>
#include <boost/graph/undirected_graph.hpp>

#include "topology/error.hpp"
#include "topology/graph.hpp"

namespace collsim {

TopologyBuilder::TopologyBuilder(std::string name) { topo_.name_ = std::move(name); }

int TopologyBuilder::add_gpu_model(const GpuModel& model) {
  for (std::size_t i = 0; i < topo_.models_.size(); ++i) {
    if (topo_.models_[i].name == model.name) return static_cast<int>(i);
  }
  topo_.models_.push_back(model);
  return static_cast<int>(topo_.models_.size() - 1);
}

DeviceId TopologyBuilder::add_device(DeviceKind kind, std::string name, int node, int model,
                                     bool p2p) {
  constexpr int kKinds = 6;
  const std::size_t slot = static_cast<std::size_t>(node + 1) * kKinds + static_cast<int>(kind);
  if (local_count_.size() <= slot) local_count_.resize(slot + 1, 0);
  Device d;
  d.id = DeviceId{static_cast<std::int32_t>(topo_.devices_.size())};
  d.kind = kind;
  d.name = std::move(name);
  d.node = node;
  d.local_index = local_count_[slot]++;
  d.model = model;
  d.p2p = p2p;
  topo_.devices_.push_back(std::move(d));
  return topo_.devices_.back().id;
}

LinkId TopologyBuilder::add_cable(DeviceId a, DeviceId b, LinkKind kind, Bandwidth bw,
                                  Time latency) {
  const auto n = static_cast<std::int32_t>(topo_.links_.size());
  const LinkId ab{n}, ba{n + 1};
  topo_.links_.push_back(Link{ab, a, b, kind, bw, latency, ba});
  topo_.links_.push_back(Link{ba, b, a, kind, bw, latency, ab});
  return ab;
}

std::optional<std::pair<DeviceId, DeviceId>> TopologyBuilder::find_disconnected_gpus() const {
  boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS> g(topo_.devices_.size());
  for (const Link& l : topo_.links_) {
    if (l.src < l.dst) boost::add_edge(l.src.value, l.dst.value, g);
  }
  std::vector<int> component(topo_.devices_.size());
  boost::connected_components(g, component.data());
  std::optional<DeviceId> first;
  for (const Device& d : topo_.devices_) {
    if (d.kind != DeviceKind::kGpu) continue;
    if (!first) {
      first = d.id;
    } else if (component[d.id.value] != component[first->value]) {
      return std::make_pair(*first, d.id);
    }
  }
  return std::nullopt;
}

Topology TopologyBuilder::build() && {
  Topology& t = topo_;
  // Nodes and their GPUs in local order.
  int nodes = 0;
  for (const Device& d : t.devices_) nodes = std::max(nodes, d.node + 1);
  t.node_gpus_.assign(static_cast<std::size_t>(nodes), {});
  for (const Device& d : t.devices_) {
    if (d.kind == DeviceKind::kGpu && d.node >= 0) t.node_gpus_[d.node].push_back(d.id);
  }
  if (ranks_.empty()) {
    for (const auto& gpus : t.node_gpus_) ranks_.insert(ranks_.end(), gpus.begin(), gpus.end());
  }
  if (ranks_.empty()) throw ConfigError("the cluster has no GPU");
  std::vector<bool> seen(t.devices_.size(), false);
  for (DeviceId id : ranks_) {
    const Device& d = t.devices_.at(id.value);
    if (d.kind != DeviceKind::kGpu) {
      throw ConfigError(fmt::format("rank list names {}, which is not a GPU", d.name));
    }
    if (seen[id.value]) throw ConfigError(fmt::format("rank list names {} twice", d.name));
    seen[id.value] = true;
  }
  t.rank_gpu_ = std::move(ranks_);

  auto graph = std::make_unique<Topology::Graph>();
  graph->g = Topology::Graph::Type(t.devices_.size());
  graph->out.assign(t.devices_.size(), {});
  graph->in.assign(t.devices_.size(), {});
  graph->in_from_switch.assign(t.devices_.size(), {});
  graph->out_to_switch.assign(t.devices_.size(), {});
  for (const Link& l : t.links_) {
    boost::add_edge(l.src.value, l.dst.value, Topology::Graph::EdgeProps{l.id.value}, graph->g);
    graph->out[l.src.value].push_back(l.id);
    graph->in[l.dst.value].push_back(l.id);
    if (is_network(l.kind) && t.devices_[l.src.value].kind == DeviceKind::kSwitch) {
      graph->in_from_switch[l.dst.value].push_back(l.id);
    }
    if (is_network(l.kind) && t.devices_[l.dst.value].kind == DeviceKind::kSwitch) {
      graph->out_to_switch[l.src.value].push_back(l.id);
    }
  }
  t.graph_ = std::move(graph);
  t.routes_ = std::make_unique<Topology::RouteCache>();
  t.assign_nics();
  return std::move(t);
}

void TopologyBuilder::set_link_cost(Topology& topo, LinkId l, Bandwidth bw, Time latency) {
  Link& link = topo.links_.at(l.value);
  link.bandwidth = bw;
  link.latency = latency;
  topo.routes_ = std::make_unique<Topology::RouteCache>();
}

void TopologyBuilder::set_transport(Topology& topo, bool gdr, bool pxn) {
  topo.gdr_ = gdr;
  topo.pxn_ = pxn;
  topo.routes_ = std::make_unique<Topology::RouteCache>();
}

}  // namespace collsim
