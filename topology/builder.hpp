// Builds a Topology device by device and cable by cable.
//
//   TopologyBuilder b("two-gpus");
//   int h100 = b.add_gpu_model(*find_gpu_model("H100-SXM"));
//   DeviceId g0 = b.add_device(DeviceKind::kGpu, "node0/gpu0", 0, h100);
//   DeviceId g1 = b.add_device(DeviceKind::kGpu, "node0/gpu1", 0, h100);
//   b.add_cable(g0, g1, LinkKind::kNvLink, GBps(450), us(0.3));   // both directions
//   Topology t = std::move(b).build();
//
// The config loaders (config_templated.cpp, config_explicit.cpp) use it; tests use it directly for
// small hand-made clusters.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "topology/topology.hpp"

namespace collsim {

class TopologyBuilder {
 public:
  explicit TopologyBuilder(std::string name);

  int add_gpu_model(const GpuModel& model);
  // `node` is -1 for devices shared by several nodes (network switches, a multi-node NVSwitch).
  DeviceId add_device(DeviceKind kind, std::string name, int node, int model = -1, bool p2p = true);
  // A full-duplex cable: two directed links with the same bandwidth and latency. Returns the
  // a -> b link; the b -> a link is its `reverse`.
  LinkId add_cable(DeviceId a, DeviceId b, LinkKind kind, Bandwidth bw, Time latency);
  void set_network_kind(NetworkKind kind) { topo_.network_kind_ = kind; }
  void set_pxn(bool on) { topo_.pxn_ = on; }
  void set_gdr(bool on) { topo_.gdr_ = on; }
  void set_sharp(bool on) { topo_.sharp_ = on; }
  void set_nic_delivery(bool in_order, Time plugin_latency) {
    topo_.in_order_ = in_order;
    topo_.plugin_latency_ = plugin_latency;
  }
  void set_routing(Routing r) { topo_.routing_ = r; }
  void set_fabric(std::string description) { topo_.fabric_ = std::move(description); }
  // Appends a `costs:` layer (the config's own first, then overlays; `file` names an overlay).
  void add_cost_layer(CostSettings costs, std::string file = {}) {
    add_cost_layer(topo_, std::move(costs), std::move(file));
  }
  static void clear_cost_layers(Topology& topo) {
    topo.cost_settings_.clear();
    topo.cost_files_.clear();
  }
  // The same on a built topology (the loader layers calibration overlays after building).
  static void add_cost_layer(Topology& topo, CostSettings costs, std::string file = {}) {
    for (CostSetting& s : costs) topo.cost_settings_.push_back(s);
    if (!file.empty()) topo.cost_files_.push_back(std::move(file));
  }
  // What-if faults on a built topology (topology/faults.hpp): a link's rate and latency, and NICs
  // taken out (their GPUs move to the nearest working NICs of their node). Routes are recomputed.
  static void set_link_cost(Topology& topo, LinkId l, Bandwidth bw, Time latency);
  static void fail_nics(Topology& topo, const std::vector<DeviceId>& nics) { topo.drop_nics(nics); }
  // What-if transports on a built topology: GPUDirect RDMA and PXN on or off (--gdr, --pxn).
  static void set_transport(Topology& topo, bool gdr, bool pxn);
  // Rank order; by default node-major (node 0's GPUs in local order, then node 1's...).
  void set_ranks(std::vector<DeviceId> gpus) { ranks_ = std::move(gpus); }

  const Device& device(DeviceId id) const { return topo_.devices_.at(id.value); }
  std::size_t device_count() const { return topo_.devices_.size(); }

  // A pair of GPUs with no path between them, if any (checked by the loaders, which know where
  // in the file to point).
  std::optional<std::pair<DeviceId, DeviceId>> find_disconnected_gpus() const;

  // Finishes the topology. Throws ConfigError if there is no GPU or a rank list names a
  // non-GPU device or the same GPU twice.
  Topology build() &&;

 private:
  Topology topo_;
  std::vector<DeviceId> ranks_;
  std::vector<int> local_count_;  // per (node, kind): next local index
};

}  // namespace collsim
