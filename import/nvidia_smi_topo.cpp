#include "import/nvidia_smi_topo.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <sstream>

#include "import/device_facts.hpp"
#include "import/xml.hpp"
#include "topology/gpu_models.hpp"
#include "topology/units.hpp"

namespace collsim {

namespace {

// The line without terminal escapes: nvidia-smi underlines the header row (ESC [4m ... ESC [0m)
// even when its output goes to a file, as seen on an H100 machine on 2026-11-26.
std::string without_escapes(const std::string& line) {
  std::string out;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\x1b' && i + 1 < line.size() && line[i + 1] == '[') {
      // A CSI sequence: parameters and intermediates up to one final byte in @ .. ~.
      i += 2;
      while (i < line.size() && (line[i] < '@' || line[i] > '~')) ++i;
      continue;
    }
    out += line[i];
  }
  return out;
}

// Cells are separated by tabs, or (as pasted in issues) by runs of two or more spaces; "CPU
// Affinity" keeps its single space.
std::vector<std::string> cells(const std::string& raw) {
  const std::string line = without_escapes(raw);
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    const auto b = cur.find_first_not_of(' ');
    if (b != std::string::npos) out.push_back(cur.substr(b, cur.find_last_not_of(' ') - b + 1));
    cur.clear();
  };
  const bool tabs = line.find('\t') != std::string::npos;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '\t' || c == '\r' ||
        (!tabs && c == ' ' && i + 1 < line.size() && line[i + 1] == ' ')) {
      flush();
    } else {
      cur += c;
    }
  }
  flush();
  return out;
}

bool is_gpu(const std::string& name) { return name.starts_with("GPU") && name.size() > 3; }

struct Matrix {
  std::vector<std::string> devices;              // the columns, in order
  std::map<std::string, std::string> nic_names;  // NIC0 -> mlx5_0, from the legend
  std::vector<std::vector<std::string>> rel;     // [row][column]
  std::map<int, std::string> numa;               // GPU index -> NUMA affinity
  std::vector<int> lines;                        // each row's line, for messages
};

bool known_relation(const std::string& v) {
  static const std::set<std::string> kWords = {"X", "PIX", "PXB", "PHB", "NODE", "SYS", "SOC"};
  if (kWords.contains(v)) return true;
  return v.size() > 2 && v.starts_with("NV") && std::all_of(v.begin() + 2, v.end(), [](char c) {
           return std::isdigit(static_cast<unsigned char>(c));
         });
}

Matrix parse(std::string_view text, std::string_view file) {
  std::istringstream in{std::string(text)};
  std::string line;
  Matrix m;
  int number = 0;
  bool legend = false;
  std::size_t header_cells = 0;
  while (std::getline(in, line)) {
    ++number;
    std::vector<std::string> c = cells(line);
    if (c.empty()) continue;
    if (m.devices.empty()) {
      if (c.front() != "GPU0") continue;  // text before the header
      for (const std::string& h : c) {
        if (h == "CPU Affinity" || h == "NUMA Affinity" || h == "GPU NUMA ID") break;
        m.devices.push_back(h);
      }
      header_cells = c.size();
      continue;
    }
    if (c.front().starts_with("Legend")) legend = true;
    if (legend) {
      // "NIC0: mlx5_0"
      const std::string& first = c.front();
      const auto colon = first.find(':');
      if (first.starts_with("NIC") && colon != std::string::npos) {
        std::string name = first.substr(colon + 1);
        name.erase(0, name.find_first_not_of(' '));
        m.nic_names[first.substr(0, colon)] = name;
      }
      continue;
    }
    const std::size_t row = m.rel.size();
    if (row >= m.devices.size() || c.front() != m.devices[row]) {
      throw ImportError(fmt::format("{}:{}: expected the row of {}, got \"{}\"", file, number,
                                    row < m.devices.size() ? m.devices[row] : "the legend",
                                    c.front()));
    }
    if (c.size() < m.devices.size() + 1) {
      throw ImportError(fmt::format("{}:{}: {}: expected {} columns, got {}", file, number,
                                    c.front(), m.devices.size(), c.size() - 1));
    }
    std::vector<std::string> r(c.begin() + 1, c.begin() + 1 + static_cast<long>(m.devices.size()));
    for (std::size_t k = 0; k < r.size(); ++k) {
      const bool self = k == row;
      if (!known_relation(r[k]) || (self != (r[k] == "X"))) {
        throw ImportError(fmt::format("{}:{}: {} to {}: expected {}, got \"{}\"", file, number,
                                      c.front(), m.devices[k],
                                      self ? "X" : "NV#, PIX, PXB, PHB, NODE or SYS", r[k]));
      }
    }
    if (is_gpu(c.front()) && header_cells > m.devices.size() + 1 &&
        c.size() > m.devices.size() + 2) {
      m.numa[static_cast<int>(row)] = c[m.devices.size() + 2];
    }
    m.rel.push_back(std::move(r));
    m.lines.push_back(number);
  }
  if (m.devices.empty()) {
    throw ImportError(
        fmt::format("{}: expected `nvidia-smi topo -m` output: no header row "
                    "starting with GPU0",
                    file));
  }
  if (m.rel.size() != m.devices.size()) {
    throw ImportError(fmt::format("{}: the matrix has {} rows for {} columns", file, m.rel.size(),
                                  m.devices.size()));
  }
  return m;
}

int nv_links(const std::string& v) { return v.starts_with("NV") ? std::stoi(v.substr(2)) : 0; }

// Groups of GPUs joined by NVLink; each fully linked with one count, or an error.
void read_nvlink(const Matrix& m, const std::vector<int>& gpus, std::string_view file,
                 const ImportOptions& o, ImportedNode& n) {
  std::set<int> counts;
  std::vector<int> peers(gpus.size(), 0);
  for (std::size_t a = 0; a < gpus.size(); ++a) {
    for (std::size_t b = 0; b < gpus.size(); ++b) {
      if (const int k = nv_links(m.rel[gpus[a]][gpus[b]]); k > 0) {
        counts.insert(k);
        ++peers[a];
      }
    }
  }
  if (counts.empty()) {
    n.gpu_model = o.gpu_model;
    if (n.gpu_model.empty()) {
      throw ImportError(fmt::format(
          "{}: {}, so the model cannot be told: name it with --gpu (e.g. --gpu H100-PCIe)", file,
          gpus.size() == 1 ? "one GPU and no NVLink" : "no NVLink between the GPUs"));
    }
    return;
  }
  const int k = *counts.begin();
  const int group = peers[0] + 1;
  const bool all_pairs = group == static_cast<int>(gpus.size());
  if (counts.size() > 1 ||
      std::any_of(peers.begin(), peers.end(), [&](int p) { return p + 1 != group; }) ||
      gpus.size() % group != 0) {
    throw ImportError(fmt::format(
        "{}:{}: NVLink counts {} over {} to {} peers per GPU: collsim's NVLink mesh links every "
        "pair of equal groups with one count (describe this node in the explicit form, "
        "docs/config.md)",
        file, m.lines[gpus[0]], fmt::join(counts, ", "),
        *std::min_element(peers.begin(), peers.end()),
        *std::max_element(peers.begin(), peers.end())));
  }
  n.gpu_model = o.gpu_model;
  if (n.gpu_model.empty() && all_pairs && (k == 18 || k == 12)) {
    n.gpu_model = k == 18 ? "H100-SXM" : "A100-SXM";
    n.assumed.push_back(fmt::format("NV{} between every pair: {} (--gpu {} if not)", k, n.gpu_model,
                                    k == 18 ? "H200" : "A100-SXM"));
  }
  if (n.gpu_model.empty()) {
    // 8 links between every pair: the export parts' NVSwitch nodes, Ampere or Hopper [S57, S58].
    const char* example = all_pairs && k == 8 ? "--gpu H800 or --gpu A800-SXM" : "--gpu H100-SXM";
    throw ImportError(fmt::format(
        "{}: NV{} between GPUs in groups of {}: name the GPU model with --gpu (e.g. {})", file, k,
        group, example));
  }
  const GpuModel* model = find_gpu_model(n.gpu_model);
  const int ports = model != nullptr ? model->nvlinks : 0;
  if (all_pairs && k * (group - 1) > ports) {
    n.nvlink_fabric = "nvswitch";
    n.nvlink_links = k;
    n.read.push_back(
        fmt::format("NV{} between every pair of {} GPUs: an NVSwitch fabric", k, group));
  } else {
    n.nvlink_fabric = "mesh";
    n.nvlink_links = k;
    n.nvlink_group = group;
    n.read.push_back(fmt::format("NV{} between each pair of GPUs in groups of {}", k, group));
  }
}

// Union-find over devices joined by PIX/PXB (one PCIe switch tree).
std::vector<int> switch_groups(const Matrix& m) {
  std::vector<int> parent(m.devices.size());
  std::iota(parent.begin(), parent.end(), 0);
  std::function<int(int)> find = [&](int x) {
    return parent[x] == x ? x : parent[x] = find(parent[x]);
  };
  for (std::size_t a = 0; a < m.devices.size(); ++a) {
    for (std::size_t b = 0; b < m.devices.size(); ++b) {
      const std::string& v = m.rel[a][b];
      if (v == "PIX" || v == "PXB") parent[find(static_cast<int>(a))] = find(static_cast<int>(b));
    }
  }
  std::vector<int> g(m.devices.size());
  for (std::size_t i = 0; i < g.size(); ++i) g[i] = find(static_cast<int>(i));
  return g;
}

void read_pcie(const Matrix& m, const std::vector<int>& gpus, const std::vector<int>& nics,
               ImportedNode& n, std::vector<std::string>& nic_names) {
  const std::vector<int> group = switch_groups(m);
  std::vector<int> order;
  for (int g : gpus) {
    const bool shared = std::count(group.begin(), group.end(), group[g]) > 1;
    if (shared && std::find(order.begin(), order.end(), group[g]) == order.end())
      order.push_back(group[g]);
  }
  std::vector<std::string> left_out;
  if (order.empty()) {
    n.assumed.push_back("no GPU shares a PCIe switch (PIX/PXB): GPUs on the CPUs' root ports");
    for (int d : nics) nic_names.push_back(m.devices[d]);
    n.nics = static_cast<int>(nics.size());
    return;
  }
  for (int id : order) {
    ImportedSwitch s;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      if (group[gpus[i]] == id) s.gpus.push_back(static_cast<int>(i));
    }
    for (int d : nics) {
      if (group[d] == id) {
        s.nics.push_back(n.nics++);
        nic_names.push_back(m.devices[d]);
      }
    }
    n.switches.push_back(std::move(s));
  }
  for (int d : nics) {
    if (std::find(order.begin(), order.end(), group[d]) == order.end())
      left_out.push_back(m.devices[d]);
  }
  n.read.push_back(fmt::format("{} PCIe switches (PIX/PXB) holding the GPUs", n.switches.size()));
  if (order.size() < gpus.size() && std::any_of(gpus.begin(), gpus.end(), [&](int g) {
        return std::count(group.begin(), group.end(), group[g]) == 1;
      })) {
    n.assumed.push_back("a GPU alone on its PCIe path counted as its own switch");
  }
  if (!left_out.empty()) {
    n.assumed.push_back(
        fmt::format("NICs under no GPU's switch left out: {}", fmt::join(left_out, ", ")));
  }
}

}  // namespace

bool looks_like_nvidia_smi_topo(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    const std::vector<std::string> c = cells(line);
    if (!c.empty() && c.front() == "GPU0") return true;
  }
  return false;
}

ImportedNode read_nvidia_smi_topo(std::string_view text, std::string_view file,
                                  const ImportOptions& o) {
  const Matrix m = parse(text, file);
  std::vector<int> gpus, nics;
  for (std::size_t i = 0; i < m.devices.size(); ++i) {
    (is_gpu(m.devices[i]) ? gpus : nics).push_back(static_cast<int>(i));
  }
  ImportedNode n;
  n.source = fmt::format("`nvidia-smi topo -m` output {}", file);
  n.gpus = static_cast<int>(gpus.size());
  read_nvlink(m, gpus, file, o, n);
  std::set<std::string> numa;
  for (const auto& [g, a] : m.numa) numa.insert(a);
  n.cpus = numa.empty() ? 1 : static_cast<int>(numa.size());
  n.read.push_back(numa.empty() ? fmt::format("{} GPUs; no NUMA Affinity column: 1 CPU", n.gpus)
                                : fmt::format("{} GPUs on {} NUMA node(s) ({})", n.gpus,
                                              numa.size(), fmt::join(numa, ", ")));
  n.assumed.push_back("PCIe and CPU links: the GPU model's defaults (the matrix gives no speeds)");
  std::vector<std::string> used;
  read_pcie(m, gpus, nics, n, used);
  if (n.nics > 0) {
    if (o.nic_bandwidth.empty()) {
      throw ImportError(
          fmt::format("{}: `nvidia-smi topo -m` gives no NIC speeds: pass "
                      "--nic-bandwidth (e.g. 400Gbps) for {}",
                      file, fmt::join(used, ", ")));
    }
    n.nic_Gbps = parse_bandwidth(o.nic_bandwidth).gbit_per_second();
    std::vector<std::string> names;
    for (const std::string& d : used) {
      auto it = m.nic_names.find(d);
      names.push_back(it != m.nic_names.end() ? it->second : d);
    }
    n.read.push_back(fmt::format("NICs {}", fmt::join(names, ", ")));
    n.nic_kind = nic_kind_of(names, o.nic_kind, n.assumed);
    infer_efa_delivery(n);
  }
  return n;
}

}  // namespace collsim
