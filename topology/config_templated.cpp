// The templated config form: one node description repeated `nodes` times, plus a network.
// docs/config.md documents each key; every value is validated here, where its location is known.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "topology/builder.hpp"
#include "topology/config_forms.hpp"
#include "topology/error.hpp"
#include "topology/gpu_models.hpp"

namespace collsim {

namespace {

constexpr long long kMaxNodes = 1 << 20;
constexpr long long kMaxPerNode = 4096;

enum class Fabric { kNone, kNvSwitch, kMesh };

struct NodeSpec {
  GpuModel model;
  int gpus = 0;
  Fabric fabric = Fabric::kNone;
  Bandwidth nvlink_bw;  // nvswitch: per GPU; mesh: per GPU, spread evenly over its peers
  Time nvlink_lat;
  int domain_nodes = 1;
  int mesh_groups = 1;  // mesh: GPUs split into this many equal fully-linked groups
  Bandwidth pcie_bw;
  Time pcie_lat;
  int pcie_switches = 0;
  bool p2p = true;
  std::vector<int> gpu_switch, nic_switch;  // PCIe switch of each GPU / NIC (-1: on a CPU)
  int cpus = 1;
  bool smp = false;
  Bandwidth smp_bw;
  Time smp_lat;
  bool c2c = false;
  Bandwidth c2c_bw;
  Time c2c_lat;
  int nics = 0;
  Bandwidth nic_bw;
  Time nic_lat;
  LinkKind nic_kind = LinkKind::kIb;
  bool nic_in_order = true;  // Topology::in_order
  Time nic_plugin_latency;   // Topology::plugin_latency
};

struct NetworkSpec {
  NetworkKind kind = NetworkKind::kNone;
  Routing routing = Routing::kDmodK;
  bool pxn = false;
  bool gdr = true;
  bool sharp = false;
  Time latency;
  int nodes_per_leaf = 0;
  int spines = 0;  // per pod in a three-tier fabric (its aggregation switches)
  double oversubscription = 1.0;
  int radix = 0;  // switch ports; 0: unlimited (two tiers at any size)
  // Grown fabric: leaves, leaves per pod (a two-tier fabric is one pod), pods, core switches
  // per plane (three tiers only: aggregation switch k of every pod connects to core plane k).
  int leaves = 0;
  int pod_leaves = 0;
  int pods = 1;
  int cores_per_plane = 0;
};

// Even block distribution: item i of n goes to bucket floor(i * buckets / n).
int block_of(int i, int n, int buckets) {
  return static_cast<int>(static_cast<long long>(i) * buckets / n);
}

void parse_nvlink(const ConfigNode& c, NodeSpec& s) {
  c.allow_keys({"fabric", "bandwidth", "latency", "domain_nodes", "groups"});
  const std::string fabric = c.at("fabric").as_choice({"nvswitch", "mesh"}, "NVLink fabric");
  s.fabric = fabric == "nvswitch" ? Fabric::kNvSwitch : Fabric::kMesh;
  if (s.model.nvlinks == 0 && !c.has("bandwidth")) {
    c.fail(fmt::format("{} has no NVLink ports; give nvlink.bandwidth explicitly (bridged parts)",
                       s.model.name));
  }
  s.nvlink_bw = c.has("bandwidth") ? c.at("bandwidth").as_bandwidth()
                                   : s.model.nvlink_bandwidth * s.model.nvlinks;
  s.nvlink_lat = c.at("latency").as_link_latency();
  if (auto d = c.get("domain_nodes")) {
    if (s.fabric != Fabric::kNvSwitch) d->fail("only an nvswitch fabric can span several nodes");
    s.domain_nodes = static_cast<int>(d->as_int(1, kMaxNodes));
  }
  if (auto g = c.get("groups")) {
    if (s.fabric != Fabric::kMesh) g->fail("only a mesh fabric splits into groups");
    s.mesh_groups = static_cast<int>(g->as_int(1, kMaxPerNode));
    if (s.gpus % s.mesh_groups != 0) {
      g->fail(fmt::format("{} GPUs do not split into {} equal groups", s.gpus, s.mesh_groups));
    }
  }
  if (s.fabric == Fabric::kMesh && s.gpus / s.mesh_groups < 2) {
    c.fail("a mesh needs at least 2 GPUs per group");
  }
}

void parse_pcie(const ConfigNode& c, NodeSpec& s) {
  c.allow_keys({"bandwidth", "latency", "switches", "p2p", "lanes", "width", "layout"});
  s.pcie_bw = c.has("bandwidth") ? c.at("bandwidth").as_bandwidth() : s.model.pcie_bandwidth;
  s.pcie_lat = c.at("latency").as_link_latency();
  s.pcie_switches = static_cast<int>(c.at("switches").as_int(0, kMaxPerNode));
  if (auto p = c.get("p2p")) s.p2p = p->as_bool();
  const int width = c.has("width") ? static_cast<int>(c.at("width").as_int(1, 32)) : 16;

  s.gpu_switch.assign(s.gpus, -1);
  s.nic_switch.assign(s.nics, -1);
  if (auto layout = c.get("layout")) {
    if (layout->size() != static_cast<std::size_t>(s.pcie_switches)) {
      layout->fail(fmt::format("expected one entry per PCIe switch ({}), got {}", s.pcie_switches,
                               layout->size()));
    }
    for (std::size_t sw = 0; sw < layout->size(); ++sw) {
      const ConfigNode entry = (*layout)[sw];
      entry.allow_keys({"gpus", "nics"});
      auto place = [&](const char* key, const char* what, std::vector<int>& where, int count) {
        if (auto list = entry.get(key)) {
          for (std::size_t k = 0; k < list->size(); ++k) {
            const ConfigNode item = (*list)[k];
            const auto i = static_cast<int>(item.as_int(0, std::max(0, count - 1)));
            if (where[i] >= 0) {
              item.fail(fmt::format("{} {} is already under switch {}", what, i, where[i]));
            }
            where[i] = static_cast<int>(sw);
          }
        }
      };
      place("gpus", "GPU", s.gpu_switch, s.gpus);
      place("nics", "NIC", s.nic_switch, s.nics);
    }
    for (int g = 0; g < s.gpus; ++g) {
      if (s.gpu_switch[g] < 0 && !s.c2c) layout->fail(fmt::format("GPU {} is under no switch", g));
    }
    for (int n = 0; n < s.nics; ++n) {
      if (s.nic_switch[n] < 0) layout->fail(fmt::format("NIC {} is under no switch", n));
    }
  } else if (s.pcie_switches > 0) {
    for (int g = 0; g < s.gpus; ++g) s.gpu_switch[g] = block_of(g, s.gpus, s.pcie_switches);
    for (int n = 0; n < s.nics; ++n) s.nic_switch[n] = block_of(n, s.nics, s.pcie_switches);
  }

  if (auto lanes_node = c.get("lanes")) {
    const auto lanes = lanes_node->as_int(1, 1 << 16);
    // Each GPU (unless on C2C) and each NIC takes `width` lanes; a switch's uplink takes `width`.
    const int buckets = s.pcie_switches > 0 ? s.pcie_switches : s.cpus;
    std::vector<int> gpus_in(buckets, 0), nics_in(buckets, 0);
    for (int g = 0; g < s.gpus && !s.c2c; ++g) {
      ++gpus_in[s.pcie_switches > 0 ? s.gpu_switch[g] : block_of(g, s.gpus, s.cpus)];
    }
    for (int n = 0; n < s.nics; ++n) {
      ++nics_in[s.pcie_switches > 0 ? s.nic_switch[n] : block_of(n, s.nics, s.cpus)];
    }
    for (int b = 0; b < buckets; ++b) {
      const int uplink = s.pcie_switches > 0 ? 1 : 0;
      const long long need = static_cast<long long>(gpus_in[b] + nics_in[b] + uplink) * width;
      if (need > lanes) {
        lanes_node->fail(fmt::format(
            "{} {} would carry {} GPUs and {} NICs at x{}{} = {} lanes, more than its {}",
            s.pcie_switches > 0 ? "PCIe switch" : "CPU", b, gpus_in[b], nics_in[b], width,
            uplink ? " plus its uplink" : "", need, lanes));
      }
    }
  }
}

// The largest plugin latency a config may give: aws-ofi-nccl's highest is 150 us (p3dn).
constexpr double kMaxPluginLatencyUs = 1000.0;

void parse_nics(const ConfigNode& c, NodeSpec& s) {
  c.allow_keys({"count", "bandwidth", "latency", "kind", "in_order", "plugin_latency"});
  s.nics = static_cast<int>(c.at("count").as_int(0, kMaxPerNode));
  if (s.nics == 0) return;
  s.nic_bw = c.at("bandwidth").as_bandwidth();
  s.nic_lat = c.at("latency").as_link_latency();
  const std::string kind = c.at("kind").as_choice({"ib", "roce", "ethernet", "efa"}, "NIC kind");
  parse_link_kind(kind, s.nic_kind);
  // EFA: whether it delivers aligned 128-byte blocks in order depends on its generation, and
  // decides whether NCCL may run LL and LL128 at all (aws-ofi-nccl sets NCCL_PROTO=simple where
  // it does not), so the config must say; the other kinds do.
  if (auto in_order = c.get("in_order")) {
    s.nic_in_order = in_order->as_bool();
  } else if (s.nic_kind == LinkKind::kEfa) {
    c.fail(
        "missing required key \"in_order\" for EFA NICs: false on the first EFA generation "
        "(p3dn, p4d, p4de: aws-ofi-nccl then runs NCCL with the Simple protocol only), true on "
        "p5 and later");
  }
  // aws-ofi-nccl reports 75 us unless its platform table says otherwise (35 us on p5en, p6-b200
  // and p6-b300, 150 on p3dn; src/platform-aws.cpp); NCCL's own transports 0.
  s.nic_plugin_latency = s.nic_kind == LinkKind::kEfa ? us(75.0) : Time{};
  if (auto latency = c.get("plugin_latency")) {
    s.nic_plugin_latency = latency->as_time();
    if (s.nic_plugin_latency > us(kMaxPluginLatencyUs)) {
      latency->fail(fmt::format("expected at most {:g}us", kMaxPluginLatencyUs));
    }
  }
}

NodeSpec parse_node(const ConfigNode& c) {
  c.allow_keys({"gpu", "gpus", "nvlink", "pcie", "cpus", "smp", "c2c", "nics"});
  NodeSpec s;
  const ConfigNode gpu = c.at("gpu");
  s.model = *find_gpu_model(gpu.as_choice(gpu_model_names(), "GPU model"));
  s.gpus = static_cast<int>(c.at("gpus").as_int(1, kMaxPerNode));
  if (auto cpus = c.get("cpus")) s.cpus = static_cast<int>(cpus->as_int(1, 64));
  // CPUs of one node are chained by their SMP interconnect (UPI, xGMI) when `smp` is given;
  // without it they are separate (two Grace superchips of a GB200 tray).
  if (auto smp = c.get("smp")) {
    if (s.cpus == 1) smp->fail("a node with one CPU has no SMP interconnect");
    smp->allow_keys({"bandwidth", "latency"});
    s.smp = true;
    s.smp_bw = smp->at("bandwidth").as_bandwidth();
    s.smp_lat = smp->at("latency").as_link_latency();
  }
  if (auto c2c = c.get("c2c")) {
    c2c->allow_keys({"bandwidth", "latency"});
    s.c2c = true;
    s.c2c_bw = c2c->at("bandwidth").as_bandwidth();
    s.c2c_lat = c2c->at("latency").as_link_latency();
  }
  if (auto nics = c.get("nics")) parse_nics(*nics, s);
  if (auto nvlink = c.get("nvlink")) parse_nvlink(*nvlink, s);
  if (s.nics > 0 || !s.c2c) {
    parse_pcie(c.at("pcie"), s);
  } else if (auto pcie = c.get("pcie")) {
    parse_pcie(*pcie, s);
  }
  return s;
}

NetworkSpec parse_network(const ConfigNode& c, int nodes, const NodeSpec& node) {
  c.allow_keys({"topology", "latency", "nodes_per_leaf", "spines", "oversubscription", "pxn", "gdr",
                "sharp", "radix", "routing"});
  NetworkSpec n;
  const std::string kind =
      c.at("topology")
          .as_choice({"single_switch", "fat_tree", "rail_optimized"}, "network topology");
  n.kind = kind == "single_switch" ? NetworkKind::kSingleSwitch
           : kind == "fat_tree"    ? NetworkKind::kFatTree
                                   : NetworkKind::kRailOptimized;
  if (node.nics == 0) c.fail("the nodes have no NICs to attach (node.nics.count is 0)");
  // PXN is NCCL's default (NCCL_PXN_DISABLE=0) and matters where NICs sit on separate rails.
  n.pxn = n.kind == NetworkKind::kRailOptimized;
  if (auto pxn = c.get("pxn")) {
    if (n.kind != NetworkKind::kRailOptimized) pxn->fail("only rail_optimized networks have rails");
    n.pxn = pxn->as_bool();
  }
  // GPUDirect RDMA: on unless the config says the NICs cannot reach GPU memory (route.cpp rule 5).
  // Ethernet NICs carry NCCL's socket transport, which moves host memory only (its properties'
  // ptrSupport is NCCL_PTR_HOST, `src/transport/net_socket.cc`): never GPUDirect.
  const bool sockets = node.nic_kind == LinkKind::kEthernet;
  if (sockets) n.gdr = false;
  if (auto gdr = c.get("gdr")) {
    n.gdr = gdr->as_bool();
    if (n.gdr && sockets) {
      gdr->fail(
          "node.nics.kind ethernet is NCCL's socket transport, which moves host memory only; "
          "NICs that reach GPU memory over Ethernet are kind roce (or efa)");
    }
  }
  // SHARP: the InfiniBand switches reduce (Quantum and later), and NCCL runs CollNet over them
  // (NCCL_COLLNET_ENABLE=1 with the SHARP plugin; Topology::sharp()).
  if (auto sharp = c.get("sharp")) {
    n.sharp = sharp->as_bool();
    if (n.sharp && node.nic_kind != LinkKind::kIb) {
      sharp->fail(fmt::format("SHARP runs in InfiniBand switches; node.nics.kind is {}",
                              to_string(node.nic_kind)));
    }
  }
  if (n.kind == NetworkKind::kSingleSwitch) {
    // NICs plug into the one switch; the NIC links' latency covers the whole path.
    for (const char* key :
         {"latency", "nodes_per_leaf", "spines", "oversubscription", "radix", "routing"}) {
      if (auto extra = c.get(key)) extra->fail("only fat_tree and rail_optimized networks have it");
    }
    return n;
  }
  if (auto r = c.get("routing")) {
    const std::string routing = r->as_choice({"dmodk", "ecmp", "adaptive"}, "routing");
    n.routing = routing == "ecmp"       ? Routing::kEcmp
                : routing == "adaptive" ? Routing::kAdaptive
                                        : Routing::kDmodK;
  }
  // The leaf <-> spine (and spine <-> core) links.
  n.latency = c.at("latency").as_link_latency();
  if (auto o = c.get("oversubscription")) n.oversubscription = o->as_number(1, 1024);
  const bool rails = n.kind == NetworkKind::kRailOptimized;
  if (auto radix = c.get("radix")) n.radix = static_cast<int>(radix->as_int(4, 1 << 16));
  // Ports of a leaf: down to the nodes, up to the spines (ceil(down / oversubscription)).
  auto up_ports = [&](int down) {
    return static_cast<int>(std::ceil(down / n.oversubscription - 1e-9));
  };
  if (c.has("nodes_per_leaf")) {
    n.nodes_per_leaf = static_cast<int>(c.at("nodes_per_leaf").as_int(1, kMaxNodes));
  } else if (n.radix > 0) {
    // As many nodes as fill a leaf's down ports, the rest of its ports going up.
    const int per_node = rails ? 1 : node.nics;
    int per = n.radix / per_node;
    while (per > 1 && per * per_node + up_ports(per * per_node) > n.radix) --per;
    n.nodes_per_leaf = per;
  } else {
    n.nodes_per_leaf = nodes;
  }
  const int down = rails ? n.nodes_per_leaf : n.nodes_per_leaf * node.nics;
  const int up = up_ports(down);
  if (n.radix > 0 && down + up > n.radix) {
    c.at("radix").fail(fmt::format(
        "a leaf of {} down ports (nodes_per_leaf {} x {} NIC{}) needs {} up ports at "
        "oversubscription {}: {} ports, more than the radix {}",
        down, n.nodes_per_leaf, rails ? 1 : node.nics, rails || node.nics == 1 ? "" : "s", up,
        n.oversubscription, down + up, n.radix));
  }
  const int groups = (nodes + n.nodes_per_leaf - 1) / n.nodes_per_leaf;
  n.leaves = rails ? groups * node.nics : groups;
  if (auto spines = c.get("spines")) {
    n.spines = static_cast<int>(spines->as_int(1, 1 << 16));
  } else if (n.radix > 0) {
    n.spines = up;  // one up port of every leaf to each spine
  } else if (n.leaves > 1) {
    c.fail(fmt::format("missing required key \"spines\" ({} leaves need a spine layer)", n.leaves));
  }
  n.pod_leaves = n.leaves;
  if (n.radix > 0 && n.leaves > 1) {
    // A spine takes one bundle of ceil(up / spines) ports from each leaf. When the leaves
    // outnumber what its radix can take, the fabric grows a third tier: pods of leaves whose
    // spines (now aggregation switches) give half their ports to the leaves and half to a core
    // layer; aggregation switch k of every pod reaches the core switches of plane k, each of
    // which takes one bundle from every pod (the folded Clos of Leiserson's fat tree).
    const int bundle = (up + n.spines - 1) / n.spines;
    if (n.leaves * bundle > n.radix) {
      n.pod_leaves = std::max(1, n.radix / 2 / bundle);
      n.pods = (n.leaves + n.pod_leaves - 1) / n.pod_leaves;
      n.cores_per_plane = n.radix / 2;
      if (n.pods > n.radix) {
        const long long max_nodes = static_cast<long long>(n.radix) * n.pod_leaves /
                                    (rails ? node.nics : 1) * n.nodes_per_leaf;
        c.at("radix").fail(fmt::format(
            "{} nodes need {} pods of {} leaves, more than a three-tier fat tree of radix {} "
            "connects ({} pods, {} nodes)",
            nodes, n.pods, n.pod_leaves, n.radix, n.radix, max_nodes));
      }
    }
  }
  return n;
}

void build_node(TopologyBuilder& b, int n, const NodeSpec& s, int model,
                std::vector<DeviceId>& domain_switch, std::vector<DeviceId>& nics) {
  const std::string prefix = fmt::format("node{}", n);
  std::vector<DeviceId> gpus, cpus, switches;
  for (int g = 0; g < s.gpus; ++g) {
    gpus.push_back(b.add_device(DeviceKind::kGpu, fmt::format("{}/gpu{}", prefix, g), n, model));
  }
  for (int c = 0; c < s.cpus; ++c) {
    cpus.push_back(b.add_device(DeviceKind::kCpu, fmt::format("{}/cpu{}", prefix, c), n));
  }
  for (int c = 1; c < s.cpus && s.smp; ++c) {
    b.add_cable(cpus[c - 1], cpus[c], LinkKind::kSmp, s.smp_bw, s.smp_lat);
  }
  for (int w = 0; w < s.pcie_switches; ++w) {
    switches.push_back(
        b.add_device(DeviceKind::kPcieSwitch, fmt::format("{}/pcie{}", prefix, w), n, -1, s.p2p));
    b.add_cable(switches[w], cpus[block_of(w, s.pcie_switches, s.cpus)], LinkKind::kPcie, s.pcie_bw,
                s.pcie_lat);
  }
  auto host_of = [&](int sw, int i, int count) {
    return sw >= 0 ? switches[sw] : cpus[block_of(i, count, s.cpus)];
  };
  for (int g = 0; g < s.gpus; ++g) {
    if (s.c2c) {
      b.add_cable(gpus[g], cpus[block_of(g, s.gpus, s.cpus)], LinkKind::kC2c, s.c2c_bw, s.c2c_lat);
    } else {
      b.add_cable(gpus[g], host_of(s.gpu_switch[g], g, s.gpus), LinkKind::kPcie, s.pcie_bw,
                  s.pcie_lat);
    }
  }
  for (int i = 0; i < s.nics; ++i) {
    nics.push_back(b.add_device(DeviceKind::kNic, fmt::format("{}/nic{}", prefix, i), n));
    b.add_cable(nics.back(), host_of(s.nic_switch[i], i, s.nics), LinkKind::kPcie, s.pcie_bw,
                s.pcie_lat);
  }
  if (s.fabric == Fabric::kMesh) {
    const int group = s.gpus / s.mesh_groups;
    const Bandwidth pair = s.nvlink_bw / (group - 1);
    for (int a = 0; a < s.gpus; ++a) {
      for (int c = a + 1; c < s.gpus && c / group == a / group; ++c) {
        b.add_cable(gpus[a], gpus[c], LinkKind::kNvLink, pair, s.nvlink_lat);
      }
    }
  } else if (s.fabric == Fabric::kNvSwitch) {
    const int domain = n / s.domain_nodes;
    if (domain_switch.size() <= static_cast<std::size_t>(domain)) {
      const bool shared = s.domain_nodes > 1;
      domain_switch.push_back(b.add_device(
          DeviceKind::kNvSwitch,
          shared ? fmt::format("nvl{}/nvswitch", domain) : fmt::format("{}/nvswitch", prefix),
          shared ? -1 : n));
    }
    for (DeviceId g : gpus) {
      b.add_cable(g, domain_switch[domain], LinkKind::kNvSwitch, s.nvlink_bw, s.nvlink_lat);
    }
  }
}

void build_network(TopologyBuilder& b, int nodes, const NodeSpec& s, const NetworkSpec& net,
                   const std::vector<DeviceId>& nics) {
  b.set_network_kind(net.kind);
  b.set_routing(net.routing);
  b.set_pxn(net.pxn);
  b.set_gdr(net.gdr);
  b.set_sharp(net.sharp);
  auto nic = [&](int node, int i) { return nics[static_cast<std::size_t>(node) * s.nics + i]; };
  if (net.kind == NetworkKind::kSingleSwitch) {
    const DeviceId sw = b.add_device(DeviceKind::kSwitch, "switch0", -1);
    for (DeviceId d : nics) b.add_cable(d, sw, s.nic_kind, s.nic_bw, s.nic_lat);
    return;
  }
  const int per = net.nodes_per_leaf;
  const int groups = (nodes + per - 1) / per;
  const bool rails = net.kind == NetworkKind::kRailOptimized;
  std::vector<DeviceId> leaves;
  for (int g = 0; g < groups; ++g) {
    for (int r = 0; r < (rails ? s.nics : 1); ++r) {
      leaves.push_back(
          b.add_device(DeviceKind::kSwitch,
                       rails ? fmt::format("su{}/rail{}", g, r) : fmt::format("leaf{}", g), -1));
    }
  }
  for (int n = 0; n < nodes; ++n) {
    for (int i = 0; i < s.nics; ++i) {
      const DeviceId leaf = leaves[rails ? (n / per) * s.nics + i : n / per];
      b.add_cable(nic(n, i), leaf, s.nic_kind, s.nic_bw, s.nic_lat);
    }
  }
  const std::string leaf_desc =
      fmt::format("{} leaves of {} node{}{}", leaves.size(), per, per == 1 ? "" : "s",
                  rails ? fmt::format(" ({} rails)", s.nics) : std::string());
  if (net.spines == 0) {
    b.set_fabric(fmt::format("1 tier: {}", leaf_desc));
    return;
  }
  // A full leaf's downlink capacity, divided by the oversubscription, spread over the spines.
  // Adaptive routing spreads every flow evenly over them (the fluid limit of per-packet
  // adaptive routing), which is one switch carrying all of their capacity: the spines of a pod
  // (and the core planes) are built as one.
  const bool adaptive = net.routing == Routing::kAdaptive;
  const int ports_down = rails ? per : per * s.nics;
  const Bandwidth leaf_up = s.nic_bw * ports_down / net.oversubscription;
  const int spines = adaptive ? 1 : net.spines;
  const Bandwidth uplink = leaf_up / spines;
  std::vector<DeviceId> aggs;  // [pod * spines + k]
  for (int p = 0; p < net.pods; ++p) {
    for (int k = 0; k < spines; ++k) {
      const std::string name = net.pods == 1 ? (adaptive ? "spines" : fmt::format("spine{}", k))
                                             : (adaptive ? fmt::format("pod{}/spines", p)
                                                         : fmt::format("pod{}/spine{}", p, k));
      aggs.push_back(b.add_device(DeviceKind::kSwitch, name, -1));
    }
  }
  for (std::size_t l = 0; l < leaves.size(); ++l) {
    const int pod = static_cast<int>(l) / net.pod_leaves;
    for (int k = 0; k < spines; ++k) {
      b.add_cable(leaves[l], aggs[static_cast<std::size_t>(pod) * spines + k], s.nic_kind, uplink,
                  net.latency);
    }
  }
  const std::string spread = adaptive ? ", spread adaptively (built as one)" : "";
  if (net.pods == 1) {
    b.set_fabric(fmt::format("2 tiers: {}, {} spine{}{}", leaf_desc, net.spines,
                             net.spines == 1 ? "" : "s", spread));
    return;
  }
  b.set_fabric(
      fmt::format("3 tiers (radix {}): {} in {} pods of {}, {} spines per pod, {} core "
                  "planes of {}{}",
                  net.radix, leaf_desc, net.pods, net.pod_leaves, net.spines, net.spines,
                  net.cores_per_plane, spread));
  // Core: an aggregation switch sends up what its pod's leaves send it (non-blocking above the
  // leaves), spread over the core switches of its plane.
  const int cores = adaptive ? 1 : net.cores_per_plane;
  const Bandwidth agg_up = uplink * net.pod_leaves / cores;
  for (int k = 0; k < spines; ++k) {
    for (int c = 0; c < cores; ++c) {
      const DeviceId core =
          b.add_device(DeviceKind::kSwitch,
                       adaptive ? std::string("cores") : fmt::format("core{}/{}", k, c), -1);
      for (int p = 0; p < net.pods; ++p) {
        b.add_cable(aggs[static_cast<std::size_t>(p) * spines + k], core, s.nic_kind, agg_up,
                    net.latency);
      }
    }
  }
}

}  // namespace

Topology build_templated(const ConfigNode& root, const std::string& default_name,
                         const LoadOptions& options) {
  root.allow_keys({"name", "description", "nodes", "node", "network", "costs", "faults"});
  const std::string name = root.has("name") ? root.at("name").as_string() : default_name;
  const int nodes =
      options.nodes ? *options.nodes : static_cast<int>(root.at("nodes").as_int(1, kMaxNodes));
  if (nodes < 1 || nodes > kMaxNodes) {
    throw ConfigError(fmt::format("--nodes: expected 1 to {}, got {}", kMaxNodes, nodes));
  }
  const NodeSpec node = parse_node(root.at("node"));
  const long long gpus = static_cast<long long>(nodes) * node.gpus;
  if (gpus > options.max_gpus) {
    const std::string what = fmt::format("{} nodes x {} GPUs = {} GPUs; expected at most {}", nodes,
                                         node.gpus, gpus, options.max_gpus);
    if (options.nodes) throw ConfigError("--nodes: " + what);
    root.at("nodes").fail(what);
  }

  const bool one_domain = node.fabric == Fabric::kNvSwitch && node.domain_nodes >= nodes;
  NetworkSpec net;
  if (auto network = root.get("network")) {
    net = parse_network(*network, nodes, node);
  } else if (nodes > 1 && !one_domain) {
    root.fail(fmt::format("missing required key \"network\" ({} nodes must be connected)", nodes));
  }
  if (options.routing) {
    if (net.kind != NetworkKind::kFatTree && net.kind != NetworkKind::kRailOptimized) {
      throw ConfigError(fmt::format(
          "--routing: {} {}; routing applies to fat_tree and rail_optimized networks", name,
          net.kind == NetworkKind::kNone ? std::string("has no network")
                                         : fmt::format("has a {} network", to_string(net.kind))));
    }
    net.routing = *options.routing;
  }

  TopologyBuilder b(name);
  const int model = b.add_gpu_model(node.model);
  std::vector<DeviceId> domain_switch, nics;
  for (int n = 0; n < nodes; ++n) build_node(b, n, node, model, domain_switch, nics);
  b.set_nic_delivery(node.nic_in_order, node.nic_plugin_latency);
  if (net.kind != NetworkKind::kNone) build_network(b, nodes, node, net, nics);
  if (auto costs = root.get("costs")) b.add_cost_layer(read_cost_settings(*costs));
  return std::move(b).build();
}

}  // namespace collsim
