#include <fmt/format.h>

#include "import/imported_node.hpp"
#include "import/xml.hpp"
#include "topology/gpu_models.hpp"

namespace collsim {

double nvlink_port_GBps(const std::string& gpu_model) {
  const GpuModel* m = find_gpu_model(gpu_model);
  if (m == nullptr) throw ImportError(fmt::format("unknown GPU model \"{}\"", gpu_model));
  return m->nvlink_bandwidth.gbyte_per_second();
}

namespace {

std::string list(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += fmt::format("{}{}", s.empty() ? "" : ", ", x);
  return "[" + s + "]";
}

// Latencies are the presets' (configs/dgx-h100.yaml): NCCL's LL step over a direct NVLink is
// 0.6 us and over PCIe 1.0 us (tuning.cc hwLat [S7]), a step through an NVSwitch 1.0 us
// (docs/theory.md §3.2); an NVSwitch step and a PCIe step cross two links.
// The IB figure is the adapter-to-adapter 0.6 us of docs/theory.md §3.4 [S9], over two cables.
void write_node(std::string& y, const ImportedNode& n) {
  y += "node:\n";
  y += fmt::format("  gpu: {}\n", n.gpu_model);
  y += fmt::format("  gpus: {}\n", n.gpus);
  if (!n.nvlink_fabric.empty()) {
    const double port = nvlink_port_GBps(n.gpu_model);
    y += "  nvlink:\n";
    y += fmt::format("    fabric: {}\n", n.nvlink_fabric);
    if (n.nvlink_fabric == "nvswitch") {
      y += fmt::format("    bandwidth: {:g}GB/s    # {} links x {:g} GB/s per direction\n",
                       n.nvlink_links * port, n.nvlink_links, port);
      y += "    latency: 0.5us        # an LL step GPU -> NVSwitch -> GPU of 1.0 us (docs/theory.md §3.2)\n";
    } else {
      const int peers = n.nvlink_group - 1;
      if (n.nvlink_group != n.gpus) y += fmt::format("    groups: {}\n", n.gpus / n.nvlink_group);
      y += fmt::format(
          "    bandwidth: {:g}GB/s    # {} links to each of {} peers x {:g} GB/s per direction\n",
          n.nvlink_links * peers * port, n.nvlink_links, peers, port);
      y += "    latency: 0.6us        # NCCL's LL NVLink step, one direct link\n";
    }
  }
  y += fmt::format("  cpus: {}\n", n.cpus);
  if (n.cpus > 1 && n.smp_GBps) {
    y += fmt::format("  smp: {{bandwidth: {:g}GB/s, latency: 0.5us}}\n", *n.smp_GBps);
  }
  y += "  pcie:\n";
  if (n.pcie_GBps) y += fmt::format("    bandwidth: {:g}GB/s\n", *n.pcie_GBps);
  y += "    latency: 0.5us\n";
  if (n.pcie_width != 16) y += fmt::format("    width: {}\n", n.pcie_width);
  y += fmt::format("    switches: {}\n", n.switches.size());
  y += "    p2p: true\n";
  if (!n.switches.empty()) {
    y += "    layout:\n";
    for (const ImportedSwitch& s : n.switches) {
      y += fmt::format("      - {{gpus: {}, nics: {}}}\n", list(s.gpus), list(s.nics));
    }
  }
  if (n.nics > 0) {
    y += "  nics:\n";
    y += fmt::format("    count: {}\n", n.nics);
    y += fmt::format("    bandwidth: {:g}Gbps\n", *n.nic_Gbps);
    y += fmt::format("    kind: {}\n", n.nic_kind);
    if (n.nic_in_order) y += fmt::format("    in_order: {}\n", *n.nic_in_order);
    if (n.plugin_latency_us) y += fmt::format("    plugin_latency: {:g}us\n", *n.plugin_latency_us);
    y += "    latency: 0.3us\n";
  }
}

}  // namespace

std::string cluster_yaml(const ImportedNode& n) {
  std::string y = fmt::format("# Imported by `collsim import` from {}.\n", n.source);
  for (const std::string& r : n.read) y += "#   read:    " + r + "\n";
  for (const std::string& a : n.assumed) y += "#   assumed: " + a + "\n";
  y += fmt::format("name: {}\n", n.name);
  y += fmt::format("description: {} x {} ({})\n", n.gpus, n.gpu_model,
                   n.nvlink_fabric.empty() ? "PCIe" : "NVLink " + n.nvlink_fabric);
  y += "nodes: 1\n";
  write_node(y, n);
  if (n.nics > 0) {
    // The dump describes one node; --nodes N needs a fabric, which no node-local tool sees.
    y += "network:                    # assumed (not in the file): edit for your fabric\n";
    y += fmt::format("  topology: {}\n", n.nics == n.gpus ? "rail_optimized" : "fat_tree");
    y += "  nodes_per_leaf: 32\n";
    y += "  spines: 4\n";
    y += "  oversubscription: 1\n";
    y += "  latency: 0.13us\n";
  }
  return y;
}

}  // namespace collsim
