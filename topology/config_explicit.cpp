// The explicit config form: every device and every full-duplex link listed by hand, for clusters
// the templated form cannot describe.
//
//   devices:
//     - {name: gpu0, kind: gpu, node: 0, model: H100-SXM}
//     - {name: sw0, kind: nvswitch, node: 0}
//   links:
//     - {ends: [gpu0, sw0], kind: nvswitch, bandwidth: 450GB/s, latency: 0.3us}
//   ranks: [gpu0]          # optional; default node-major GPU order
#include <fmt/format.h>

#include <map>

#include "topology/builder.hpp"
#include "topology/config_forms.hpp"
#include "topology/error.hpp"
#include "topology/gpu_models.hpp"

namespace collsim {

namespace {

const std::vector<std::string> kDeviceKindNames = {"gpu", "nvswitch", "pcie_switch",
                                                   "cpu", "nic",      "switch"};
const std::vector<std::string> kLinkKindNames = {"nvlink", "nvswitch", "pcie",     "smp",
                                                 "ib",     "roce",     "ethernet", "c2c"};

}  // namespace

Topology build_explicit(const ConfigNode& root, const std::string& default_name,
                        const LoadOptions& options) {
  root.allow_keys({"name", "description", "devices", "links", "ranks", "costs", "faults"});
  if (options.nodes) {
    root.fail("--nodes applies to templated configs only; this one lists its devices");
  }
  if (options.routing) {
    root.fail(
        "--routing applies to templated fat_tree and rail_optimized networks only; this "
        "config lists its devices");
  }
  TopologyBuilder b(root.has("name") ? root.at("name").as_string() : default_name);

  std::map<std::string, DeviceId> by_name;
  std::vector<std::string> names;
  std::vector<ConfigNode> device_nodes;
  const ConfigNode devices = root.at("devices");
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const ConfigNode d = devices[i];
    d.allow_keys({"name", "kind", "node", "model", "p2p"});
    const ConfigNode name_node = d.at("name");
    const std::string name = name_node.as_string();
    if (by_name.count(name)) name_node.fail(fmt::format("duplicate device name \"{}\"", name));
    DeviceKind kind;
    parse_device_kind(d.at("kind").as_choice(kDeviceKindNames, "device kind"), kind);
    int node = -1;
    if (auto n = d.get("node")) node = static_cast<int>(n->as_int(0, 1 << 20));
    int model = -1;
    if (kind == DeviceKind::kGpu) {
      if (node < 0) d.fail("missing required key \"node\" (every GPU belongs to a node)");
      const ConfigNode m = d.at("model");
      model = b.add_gpu_model(*find_gpu_model(m.as_choice(gpu_model_names(), "GPU model")));
    } else if (auto m = d.get("model")) {
      m->fail("only GPUs have a model");
    }
    bool p2p = true;
    if (auto p = d.get("p2p")) {
      if (kind != DeviceKind::kPcieSwitch) p->fail("only PCIe switches have a p2p setting");
      p2p = p->as_bool();
    }
    by_name[name] = b.add_device(kind, name, node, model, p2p);
    names.push_back(name);
    device_nodes.push_back(d);
  }

  auto lookup = [&](const ConfigNode& n) {
    const std::string name = n.as_string();
    auto it = by_name.find(name);
    if (it == by_name.end()) {
      n.fail(fmt::format("unknown device \"{}\"; {}", name, expected_one_of(name, names)));
    }
    return it->second;
  };

  const ConfigNode links = root.at("links");
  for (std::size_t i = 0; i < links.size(); ++i) {
    const ConfigNode l = links[i];
    l.allow_keys({"ends", "kind", "bandwidth", "latency"});
    const ConfigNode ends = l.at("ends");
    if (ends.size() != 2) ends.fail(fmt::format("expected two device names, got {}", ends.size()));
    const DeviceId a = lookup(ends[0]), c = lookup(ends[1]);
    if (a == c) ends.fail("a link must join two different devices");
    LinkKind kind;
    parse_link_kind(l.at("kind").as_choice(kLinkKindNames, "link kind"), kind);
    b.add_cable(a, c, kind, l.at("bandwidth").as_bandwidth(), l.at("latency").as_link_latency());
    if (is_network(kind)) b.set_network_kind(NetworkKind::kExplicit);
  }

  if (auto ranks = root.get("ranks")) {
    std::vector<DeviceId> order;
    for (std::size_t i = 0; i < ranks->size(); ++i) {
      const ConfigNode r = (*ranks)[i];
      const DeviceId id = lookup(r);
      if (b.device(id).kind != DeviceKind::kGpu) r.fail("a rank must be a GPU");
      if (std::find(order.begin(), order.end(), id) != order.end()) r.fail("GPU listed twice");
      order.push_back(id);
    }
    b.set_ranks(std::move(order));
  }

  if (auto cut = b.find_disconnected_gpus()) {
    device_nodes[cut->second.value].fail(fmt::format("GPU \"{}\" is not connected to GPU \"{}\"",
                                                     b.device(cut->second).name,
                                                     b.device(cut->first).name));
  }
  bool any_gpu = false;
  for (std::size_t i = 0; i < b.device_count(); ++i) {
    any_gpu = any_gpu || b.device(DeviceId{static_cast<std::int32_t>(i)}).kind == DeviceKind::kGpu;
  }
  if (!any_gpu) devices.fail("expected at least one device of kind gpu");
  if (auto costs = root.get("costs")) b.add_cost_layer(read_cost_settings(*costs));
  return std::move(b).build();
}

}  // namespace collsim
