#include "import/nccl_topology_xml.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <map>
#include <set>

#include "import/device_facts.hpp"
#include "import/xml.hpp"

namespace collsim {

namespace {

struct NvLink {
  std::string target;
  int count = 0;
  std::string tclass;
};

struct Gpu {
  int dev = 0;
  int sm = 0;
  std::string busid;
  std::string pci_device;  // the PCI device id, e.g. 0x2330
  std::string link_speed;
  int link_width = -1;  // -1: not given
  std::vector<NvLink> nvlinks;
  int switch_id = -1;  // -1: a CPU root port
  const XmlElement* element = nullptr;
};

struct Nic {
  std::string name;
  long speed_mbps = 0;
  int switch_id = -1;
  double latency_us = 0;  // what the network plugin reported to NCCL (ncclNetProperties_t)
};

struct Walk {
  std::string_view file;
  std::vector<Gpu> gpus;
  std::vector<Nic> nics;
  int next_switch = 0;
};

const XmlElement& require_one(const std::vector<XmlElement>& v, const XmlElement& parent,
                              std::string_view name, std::string_view file) {
  for (const XmlElement& e : v) {
    if (e.name == name) return e;
  }
  throw ImportError(fmt::format("{}: expected a <{}> element inside", parent.where(file), name));
}

std::string required(const XmlElement& e, std::string_view key, std::string_view file) {
  auto v = e.attribute(key);
  if (!v) throw ImportError(fmt::format("{}: missing attribute {}", e.where(file), key));
  return *v;
}

long number(const XmlElement& e, std::string_view key, std::string_view file) {
  const std::string v = required(e, key, file);
  long out = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || end != v.data() + v.size()) {
    throw ImportError(
        fmt::format("{}: {}: expected a whole number, got \"{}\"", e.where(file), key, v));
  }
  return out;
}

void read_nic(const XmlElement& nic, int switch_id, Walk& w) {
  for (const XmlElement& net : nic.children) {
    if (net.name != "net") continue;
    // NCCL writes the latency the network plugin reports as "latency" (topo.cc: "75" or
    // "75.000000" by release); some dumps lack it.
    double latency = 0;
    if (const auto text = net.attribute("latency")) {
      char* end = nullptr;
      latency = std::strtod(text->c_str(), &end);
      if (text->empty() || end != text->c_str() + text->size() || !(latency >= 0)) {
        throw ImportError(fmt::format("{}: latency: expected a number of microseconds, got \"{}\"",
                                      net.where(w.file), *text));
      }
    }
    w.nics.push_back(
        {required(net, "name", w.file), number(net, "speed", w.file), switch_id, latency});
  }
}

void read_gpu(const XmlElement& pci, const XmlElement& gpu, int switch_id, Walk& w) {
  Gpu g;
  g.dev = static_cast<int>(number(gpu, "dev", w.file));
  g.sm = static_cast<int>(number(gpu, "sm", w.file));
  g.busid = pci.attribute("busid").value_or("");
  g.pci_device = pci.attribute("device").value_or("");
  g.link_speed = pci.attribute("link_speed").value_or("");
  if (pci.attribute("link_width"))
    g.link_width = static_cast<int>(number(pci, "link_width", w.file));
  g.switch_id = switch_id;
  g.element = &gpu;
  for (const XmlElement& l : gpu.children) {
    if (l.name != "nvlink") continue;
    g.nvlinks.push_back({required(l, "target", w.file),
                         static_cast<int>(number(l, "count", w.file)),
                         l.attribute("tclass").value_or("")});
  }
  w.gpus.push_back(std::move(g));
}

// Below a CPU: a bridge directly under it starts a switch; everything below belongs to it.
void walk(const XmlElement& e, int switch_id, bool under_cpu, Walk& w) {
  for (const XmlElement& c : e.children) {
    if (c.name == "nic") {
      read_nic(c, switch_id, w);
    } else if (c.name == "pci") {
      int id = switch_id;
      if (under_cpu && c.attribute("class").value_or("").starts_with("0x0604"))
        id = w.next_switch++;
      for (const XmlElement& g : c.children) {
        if (g.name == "gpu") read_gpu(c, g, id, w);
      }
      walk(c, id, false, w);
    }
  }
}

void read_nvlinks(const std::vector<Gpu>& gpus, std::string_view file, ImportedNode& n) {
  std::map<std::string, int> index;
  for (std::size_t i = 0; i < gpus.size(); ++i) index[gpus[i].busid] = static_cast<int>(i);
  std::vector<int> to_switch(gpus.size(), 0);
  std::vector<std::map<int, int>> to_gpu(gpus.size());
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    for (const NvLink& l : gpus[i].nvlinks) {
      if (auto it = index.find(l.target); it != index.end()) {
        to_gpu[i][it->second] += l.count;
      } else if (l.tclass == "0x068000") {
        to_switch[i] += l.count;
      } else {
        n.assumed.push_back(fmt::format("GPU {}'s {} NVLinks to {} (class {}) left out",
                                        gpus[i].dev, l.count, l.target, l.tclass));
      }
    }
  }
  const auto [lo, hi] = std::minmax_element(to_switch.begin(), to_switch.end());
  if (*hi > 0) {
    if (*lo != *hi) {
      n.assumed.push_back(
          fmt::format("GPUs have {} to {} NVSwitch links; all get {}", *lo, *hi, *lo));
    }
    n.nvlink_fabric = "nvswitch";
    n.nvlink_links = *lo;
    n.read.push_back(fmt::format("{} NVLinks per GPU to NVSwitches", *lo));
    return;
  }
  if (std::all_of(to_gpu.begin(), to_gpu.end(), [](const auto& m) { return m.empty(); })) return;
  // A mesh: GPU i's peers form its group; every group fully linked with one link count.
  const int links = to_gpu[0].empty() ? 0 : to_gpu[0].begin()->second;
  const std::size_t group = to_gpu[0].size() + 1;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    for (const auto& [j, c] : to_gpu[i]) {
      const bool same_group = to_gpu[j].size() + 1 == group;
      if (c != links || !same_group || to_gpu[i].size() + 1 != group) {
        throw ImportError(fmt::format(
            "{}: GPU {} has {} NVLinks to GPU {} and {} peers; collsim's NVLink mesh links every "
            "pair of equal groups with one link count (describe this node in the explicit form, "
            "docs/config.md)",
            gpus[i].element->where(file), gpus[i].dev, c, gpus[j].dev, to_gpu[i].size()));
      }
    }
  }
  if (gpus.size() % group != 0) {
    throw ImportError(
        fmt::format("{}: {} GPUs do not split into NVLink groups of {}", file, gpus.size(), group));
  }
  n.nvlink_fabric = "mesh";
  n.nvlink_links = links;
  n.nvlink_group = static_cast<int>(group);
  n.read.push_back(
      fmt::format("{} NVLinks between each pair of GPUs in groups of {}", links, group));
}

void read_pcie(const std::vector<Gpu>& gpus, std::string_view file, ImportedNode& n) {
  std::optional<double> lowest;
  int width = 16;
  for (const Gpu& g : gpus) {
    if (g.link_speed.empty()) continue;
    const double x16 = pcie_x16_GBps(g.link_speed, g.element->where(file));
    lowest = lowest ? std::min(*lowest, x16) : x16;
    if (g.link_width > 0) width = std::min(width, g.link_width);
  }
  if (!lowest) {
    n.assumed.push_back("no PCIe link speed in the file: the GPU model's host interface");
    return;
  }
  n.pcie_GBps = lowest;
  n.pcie_width = width;
  n.read.push_back(
      fmt::format("GPU PCIe links {:g} GB/s per direction at x16, x{}", *lowest, width));
  if (std::any_of(gpus.begin(), gpus.end(), [](const Gpu& g) { return g.link_width == 0; })) {
    n.assumed.push_back("link_width 0 (a virtual machine hides it) read as x16");
  }
}

void read_switches(const Walk& w, ImportedNode& n) {
  const bool on_switches =
      std::all_of(w.gpus.begin(), w.gpus.end(), [](const Gpu& g) { return g.switch_id >= 0; });
  std::vector<int> order;  // switch ids in GPU order
  for (const Gpu& g : w.gpus) {
    if (std::find(order.begin(), order.end(), g.switch_id) == order.end())
      order.push_back(g.switch_id);
  }
  std::vector<std::string> left_out;
  if (on_switches) {
    for (int id : order) {
      ImportedSwitch s;
      for (std::size_t i = 0; i < w.gpus.size(); ++i) {
        if (w.gpus[i].switch_id == id) s.gpus.push_back(static_cast<int>(i));
      }
      for (const Nic& nic : w.nics) {
        if (nic.switch_id == id) s.nics.push_back(n.nics++);
      }
      n.switches.push_back(std::move(s));
    }
    for (const Nic& nic : w.nics) {
      if (std::find(order.begin(), order.end(), nic.switch_id) == order.end()) {
        left_out.push_back(nic.name);
      }
    }
    n.read.push_back(fmt::format("{} PCIe switches holding the GPUs", n.switches.size()));
  } else {
    n.nics = static_cast<int>(w.nics.size());
    n.assumed.push_back("GPUs on the CPUs' root ports (switches: 0)");
  }
  if (!left_out.empty()) {
    n.assumed.push_back(
        fmt::format("NICs under no GPU's switch left out: {}", fmt::join(left_out, ", ")));
  }
}

void read_nics(const Walk& w, const ImportOptions& o, ImportedNode& n) {
  if (n.nics == 0) return;
  long lo = w.nics.front().speed_mbps, hi = lo;
  std::vector<std::string> names;
  for (const Nic& nic : w.nics) {
    lo = std::min(lo, nic.speed_mbps);
    hi = std::max(hi, nic.speed_mbps);
    names.push_back(nic.name);
  }
  n.nic_Gbps = static_cast<double>(lo) / 1000.0;
  n.read.push_back(fmt::format("NICs {} at {} Mb/s", fmt::join(names, ", "), lo));
  if (lo != hi) n.assumed.push_back(fmt::format("NIC speeds {} to {} Mb/s: all at {}", lo, hi, lo));
  n.nic_kind = nic_kind_of(names, o.nic_kind, n.assumed);
  const double latency = w.nics.front().latency_us;
  if (latency > 0) {
    n.plugin_latency_us = latency;
    n.read.push_back(fmt::format("the network plugin reports {:g} us to NCCL's tuner", latency));
  }
}

}  // namespace

ImportedNode read_nccl_topology_xml(std::string_view text, std::string_view file,
                                    const ImportOptions& options) {
  const XmlElement root = parse_xml(text, file);
  if (root.name != "system") {
    throw ImportError(
        fmt::format("{}: expected NCCL's topology dump, whose root is <system>", root.where(file)));
  }
  Walk w{file, {}, {}, 0};
  std::set<std::string> hosts;
  int cpus = 0;
  const XmlElement* first_cpu = nullptr;
  for (const XmlElement& cpu : root.children) {
    if (cpu.name != "cpu") continue;
    ++cpus;
    if (first_cpu == nullptr) first_cpu = &cpu;
    if (auto h = cpu.attribute("host_hash")) hosts.insert(*h);
    walk(cpu, -1, true, w);
  }
  if (cpus == 0) (void)require_one(root.children, root, "cpu", file);
  if (hosts.size() > 1) {
    throw ImportError(fmt::format("{}: the dump holds {} hosts (host_hash); import one node's dump",
                                  root.where(file), hosts.size()));
  }
  if (w.gpus.empty()) {
    throw ImportError(
        fmt::format("{}: no <gpu> in the dump (NCCL_TOPO_FILE-style files list only "
                    "PCI devices; use the NCCL_TOPO_DUMP_FILE output)",
                    root.where(file)));
  }
  std::stable_sort(w.gpus.begin(), w.gpus.end(),
                   [](const Gpu& a, const Gpu& b) { return a.dev < b.dev; });

  ImportedNode n;
  n.source = fmt::format("NCCL's topology dump {}", file);
  n.gpus = static_cast<int>(w.gpus.size());
  n.cpus = cpus;
  n.read.push_back(fmt::format("{} GPU{} (sm {}), {} CPU socket(s)", n.gpus, n.gpus == 1 ? "" : "s",
                               w.gpus.front().sm, cpus));
  read_nvlinks(w.gpus, file, n);
  n.gpu_model =
      options.gpu_model.empty()
          ? gpu_model_of(w.gpus.front().pci_device, w.gpus.front().sm, !n.nvlink_fabric.empty())
          : options.gpu_model;
  if (n.gpu_model.empty()) {
    throw ImportError(fmt::format(
        "{}: GPU sm {} (PCI device {}) is not a model collsim knows; "
        "name one with --gpu",
        w.gpus.front().element->where(file), w.gpus.front().sm, w.gpus.front().pci_device));
  }
  std::string smp_what;
  n.smp_GBps = smp_bandwidth(first_cpu->attribute("vendor").value_or(""),
                             first_cpu->attribute("modelid").value_or(""), smp_what);
  if (n.smp_GBps && cpus > 1) n.read.push_back(smp_what);
  read_pcie(w.gpus, file, n);
  read_switches(w, n);
  read_nics(w, options, n);
  infer_efa_delivery(n);
  return n;
}

}  // namespace collsim
