// Estimating NCCL's graph-search results (channels, per-channel bandwidth) from a Topology.
//
// NCCL's ncclTopoCompute tries per-channel speeds from fixed arrays, highest first, and keeps as
// many channels as the links carry (docs/nccl-model.md §1.7). We do not replay the search; we apply
// rules that reproduce the graphs NCCL logged:
//  - NVLink-class nodes: 12 ring channels at the fastest array speed that fits 12 times in the
//    GPU's NVLink capacity (nvlinks x NCCL's per-link figure). DGX-H100: 18 x 20.6 = 370.8 ->
//    12 x 30 (NVIDIA/nccl#1197, NCCL 2.19.4); DGX-A100: 12 x 20 = 240 -> 12 x 20 (24 runtime
//    channels, nccl-tests#100).
//  - PCIe-only nodes: one channel at the fastest speed that fits NCCL's PCIe figure
//    (width x GT/s / 80: Gen3 12, Gen4 24, Gen5 48 GB/s; topo.cc).
//  - Several nodes: one channel per NIC at the fastest inter-node speed not above the NIC's rate
//    (NCCL: Mbps / 8000), intra = inter. #1453: 8 NICs at 200 Gb/s -> 8 x 24. The tree then
//    raises its intra speed up the array towards twice the inter speed while the GPU's links
//    carry it (NCCL's pass 2 for trees).
//  - NVLS (NVSwitch, sm90+, one node): one channel per GPU; the head's NVSwitch links carry twice
//    the bandwidth, so (ppn + 1) x bw must fit: H100 9 x 40 <= 370.8 -> 8 x 40, inter 60 as
//    logged in #1197.
// LL128 is enabled on NVLink-class nodes (typeIntra <= PATH_NVB, §1.6).
#include <algorithm>
#include <iterator>
#include <vector>

#include "algorithms/ir/communicator.hpp"
#include "algorithms/models/nccl_channels.hpp"
#include "algorithms/models/nccl_model.hpp"
#include "algorithms/models/nccl_p2p.hpp"
#include "topology/topology.hpp"

namespace collsim {

namespace {

// Per-channel speed arrays of search.cc (docs/nccl-model.md §1.7), GB/s, descending.
const std::vector<double>& intra_speeds(int sm) {
  static const std::vector<double> kPreHopper = {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3};
  static const std::vector<double> kHopper = {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
  static const std::vector<double> kBlackwell = {90, 80, 70, 60, 50, 45, 40, 30, 24, 20, 19, 18};
  return sm >= 100 ? kBlackwell : sm >= 90 ? kHopper : kPreHopper;
}

const std::vector<double>& inter_speeds(int sm) {
  static const std::vector<double> kPreHopper = {48, 30, 28, 24, 20, 18, 15, 12, 10, 9,
                                                 7,  6,  5,  4,  3,  2.4, 1.2, 0.24, 0.12};
  static const std::vector<double> kHopper = {48, 45, 42, 40, 30, 24, 22, 20, 17.5,
                                              15, 12, 6,  3,  2.4, 1.2, 0.24, 0.12};
  static const std::vector<double> kBlackwell = {96, 86,   80, 48, 45.1, 42, 40,  30,  24,   22,
                                                 20, 17.5, 15, 12, 6,    3,  2.4, 1.2, 0.24, 0.12};
  return sm >= 100 ? kBlackwell : sm >= 90 ? kHopper : kPreHopper;
}

// NCCL's usable per-NVLink figure by architecture (topo.h, docs/nccl-model.md §1.7).
double nccl_nvlink_bw(int sm) {
  if (sm >= 100) return 40.1;
  if (sm >= 90) return 20.6;
  if (sm == 86) return 12.0;
  if (sm >= 70) return 20.0;
  return 18.0;
}

double fastest_fitting(const std::vector<double>& speeds, double limit) {
  for (double s : speeds) {
    if (s <= limit + 1e-9) return s;
  }
  return speeds.back();
}

// The tree graph's intra-node speed after NCCL's pass 2 (above): from the ring's inter-node
// speed, up the array while the next speed fits `capacity` (a GPU's intra-node links, GB/s) over
// the graph's channels and the current one is below twice the inter-node speed.
double raised_tree_intra(const std::vector<double>& speeds, const NcclGraph& g, double capacity) {
  auto it = std::find(speeds.begin(), speeds.end(), g.bw_inter);
  if (it == speeds.end()) return g.bw_intra;
  double intra = g.bw_intra;
  while (it != speeds.begin() && intra < 2 * g.bw_inter) {
    const double next = *std::prev(it);
    if (next * g.channels > capacity + 1e-9) break;
    intra = next;
    --it;
  }
  return intra;
}

// How a GPU reaches its NIC, in NCCL's path types: through PCIe switches only (PATH_PXB or
// closer), through its CPU over NVLink-C2C (PATH_P2C), or through a CPU otherwise (PATH_PHB,
// PATH_SYS). A GPU without a NIC has nothing to cross.
enum class NicPath { kNear, kC2c, kFar };

NicPath nic_path(const Topology& topo, DeviceId gpu) {
  const auto nic = topo.nic_of(gpu);
  if (!nic) return NicPath::kNear;
  bool cpu = false, c2c = false;
  for (LinkId l : topo.route(gpu, *nic).links) {
    const Link& link = topo.link(l);
    cpu = cpu || topo.device(link.dst).kind == DeviceKind::kCpu;
    c2c = c2c || link.kind == LinkKind::kC2c;
  }
  return !cpu ? NicPath::kNear : c2c ? NicPath::kC2c : NicPath::kFar;
}

}  // namespace

NcclModelInput nccl_model_input(const Topology& topo, const Communicator& comm, NcclVersion v,
                                CpuVendor cpu) {
  return nccl_model_input(topo, comm,
                          v == NcclVersion::k2_22   ? NcclRelease{22, 3}
                          : v == NcclVersion::k2_26 ? NcclRelease{26, 2}
                                                    : kNewestNccl,
                          cpu);
}

NcclModelInput nccl_model_input(const Topology& topo, const Communicator& comm, NcclRelease v,
                                CpuVendor cpu) {
  NcclModelInput in;
  in.version = nccl_constants_for(v);
  in.release = v;
  in.cpu = cpu;
  in.nodes = comm.node_count();
  in.ranks = comm.size();
  const GpuModel& model = topo.gpu_model();
  in.sm = model.sm;
  const int ppn = comm.max_ranks_per_node();

  // Is the node's GPU fabric NVLink-class, and is it an NVSwitch?
  const DeviceId g0 = topo.gpu_of(Rank{comm.gpu(0)});
  bool nvlink = false, nvswitch = false;
  Bandwidth pcie_bw;
  for (LinkId l : topo.out_links(g0)) {
    const Link& link = topo.link(l);
    nvlink = nvlink || (is_nvlink_class(link.kind) && link.kind != LinkKind::kC2c);
    nvswitch = nvswitch || link.kind == LinkKind::kNvSwitch;
    if (link.kind == LinkKind::kPcie) pcie_bw = std::max(pcie_bw, link.bandwidth);
    if (link.kind == LinkKind::kC2c) in.cpu_x86 = false;  // a Grace CPU: Arm
  }
  const double capacity =
      nvlink ? model.nvlinks * nccl_nvlink_bw(in.sm) : nccl_pcie_gbps(pcie_bw.gbyte_per_second());
  // LL128 only inside NVLink nodes, and only on the architectures NCCL lists
  // (`src/graph/tuning.cc`): compute capability 7.0 and 8.0, 9.0 from 2.15, 10.0 and 12.0 from
  // 2.25, every one from 7.0 on since 2.27 (so not B300's 10.3 before it).
  const bool ll128_arch = in.sm >= 70 && (v.at_least(27) || in.sm == 70 || in.sm == 80 ||
                                          (in.sm == 90 && v.at_least(15)) ||
                                          ((in.sm == 100 || in.sm == 120) && v.at_least(25)));
  in.ll128 = nvlink && ll128_arch;
  const NicPath own = nic_path(topo, g0);
  // Across nodes NCCL enables LL128 only where its graphs reach the NICs within PCIe switches
  // (typeInter <= PATH_PXB), and on sm90+ from 2.17 also through another GPU over NVLink
  // (PATH_PXN) and, from 2.27, over C2C (PATH_P2C) (`src/graph/tuning.cc` 2.16 to 2.30): a NIC
  // behind the CPU leaves older GPUs without it.
  if (in.nodes > 1 && in.ll128) {
    bool pxn = false;
    for (DeviceId g : topo.gpus_of_node(topo.device(g0).node)) {
      pxn = pxn || nic_path(topo, g) == NicPath::kNear;
    }
    in.ll128 =
        own == NicPath::kNear ||
        (in.sm >= 90 && ((pxn && v.at_least(17)) || (own == NicPath::kC2c && v.at_least(27))));
  }

  // The node's NICs and one NIC's network rate.
  int nics = 0;
  for (const Device& d : topo.devices()) {
    nics += (d.kind == DeviceKind::kNic && d.node == topo.device(g0).node) ? 1 : 0;
  }
  double nic_gbps = 0;
  bool efa = false;
  if (const auto nic = topo.nic_of(g0)) {
    for (LinkId l : topo.out_links(*nic)) {
      if (!is_network(topo.link(l).kind)) continue;
      nic_gbps = topo.link(l).bandwidth.gbyte_per_second();
      efa = efa || topo.link(l).kind == LinkKind::kEfa;
    }
  }

  NcclGraph ring;
  ring.nvlink = nvlink;
  if (in.nodes == 1) {
    const int channels = nvlink ? 12 : 1;
    ring.channels = channels;
    ring.bw_intra = ring.bw_inter = fastest_fitting(intra_speeds(in.sm), capacity / channels);
  } else {
    ring.channels = std::max(1, std::min(nics, nccl_max_channels(v) / 2));
    ring.bw_inter = fastest_fitting(inter_speeds(in.sm), nic_gbps);
    ring.bw_intra = ring.bw_inter;
  }
  in.ring = ring;
  in.tree = ring;  // the tree search is forced to the ring's channel count (§1.7)
  // Across nodes the tree search then raises its intra-node speed, one step of the same speed
  // array at a time, while the node's links carry it and while it is below twice the inter-node
  // speed (search.cc ncclTopoCompute, pass 2, "increase bwIntra for trees (2 nodes or
  // collnet)"). Only a GPU's own links are charged (followPath: forward bandwidth only). On two
  // nodes the model reads bwIntra (§1.3 step 1), which is how NCCL picks Tree over Ring there
  // at large sizes: 2x4 H100 over 4 NDR200 NICs, ring 4 x 24 against tree 4 x 48.
  if (in.nodes > 1) in.tree->bw_intra = raised_tree_intra(inter_speeds(in.sm), ring, capacity);

  // NVLS needs a reducing NVSwitch (gen 3+, sm90+). One channel per NVLS head, every GPU a
  // head; across nodes (NVLSTree) each head drives the network for its share through its own NIC,
  // so there are as many heads as the node has NICs, at most one per GPU, and the inter-node
  // speed is the NIC's (`src/graph/search.cc` NVLS pattern, `src/transport/nvls.cc`).
  if (nvswitch && in.sm >= 90 && ppn >= 2) {
    NcclGraph nvls;
    nvls.channels = ppn;
    nvls.bw_intra = fastest_fitting(intra_speeds(in.sm), capacity / (ppn + 1));
    nvls.bw_inter = intra_speeds(in.sm).front();
    if (in.nodes > 1) {
      nvls.channels = std::max(1, std::min(ppn, ring.channels));
      nvls.bw_inter = ring.bw_inter;
      // More NICs than GPUs: NCCL fuses the ports a GPU shares into one virtual NIC
      // (NCCL_IB_MERGE_NICS, on by default, `src/transport/net_ib.cc`), so each head's network
      // speed is its share of the node's ports: 16 x 200 Gb/s for 8 H100 gives 50 GB/s a head,
      // where one port's 25 GB/s made NCCL's model rank NVLSTree below the ring on OCI's
      // BM.GPU.H100.8, which measured NVLSTree's bandwidth.
      if (nics > ppn) {
        nvls.bw_inter = fastest_fitting(inter_speeds(in.sm), nic_gbps * nics / ppn);
      }
    }
    in.nvls = nvls;
    // A communicator's node is an NVLink domain (communicator_topology.cpp), as NCCL's is.
    NvlsShape shape;
    shape.sm = in.sm;
    shape.domains = in.nodes;
    shape.ppn = comm.min_ranks_per_node();  // comm->minLocalRanks
    shape.net_GBps = nic_gbps * std::max(1, nics / std::max(1, ppn));
    shape.nic_near = own == NicPath::kNear;  // PATH_PXB or closer
    in.nvls_channels = nccl_nvls_channels(v, shape);
    const NvlsChunks chunks = nccl_nvls_chunks(v, shape);
    in.nvls_chunk = chunks.chunk;
    in.nvls_tree_max_chunk = chunks.tree_max;
    // aws-ofi-nccl sets NCCL_NVLS_CHUNKSIZE and NCCL_NVLSTREE_MAX_CHUNKSIZE to 512 KiB for the
    // process on every EFA platform whose GPUs sit on an NVSwitch (p5, p5e, p5en, p6: its
    // platform table, src/platform-aws.cpp, [S50]), undoing 2.19.3's 64 KiB NVLSTree chunk.
    if (efa) {
      in.nvls_chunk = 524288;
      in.nvls_tree_max_chunk = 524288;
    }
  }
  // CollNet, where the fabric's switches reduce and NCCL runs it (network.sharp, several nodes).
  // Its chain graph is a tree search held to the ring's channel count and its direct graph one
  // channel per head (a GPU with its NIC), both with the intra-node speed raised as for trees
  // ("2 nodes or collnet", search.cc), which CollNet's model reads on any node count (§1.3).
  // NCCL disables CollNetDirect without an NVSwitch (tuning.cc).
  if (topo.sharp() && in.nodes > 1) {
    NcclGraph chain = ring;
    chain.bw_intra = raised_tree_intra(inter_speeds(in.sm), ring, capacity);
    in.collnet_chain = chain;
    if (nvswitch) {
      NcclGraph direct = chain;
      direct.channels = std::max(1, std::min(ppn, ring.channels));
      in.collnet_direct = direct;
    }
  }
  in.runtime_channels = 2 * ring.channels;
  // Hopper across nodes: four compute channels per search channel where the ring is fast
  // ("to reach peak BW on <8 PPN", src/graph/connect.cc ncclTopoPostset): ring bwIntra above
  // 45 GB/s doubles the channels again, while 2 x them fit MAXCHANNELS (32 then) in 2.18 and 2.19
  // and while they are fewer than 16 from 2.20; sm90 only until 2.25, sm90 and later since.
  const bool arch = v.at_least(25) ? in.sm >= 90 : in.sm == 90;
  const bool room =
      v.at_least(20) ? in.runtime_channels < 16 : 2 * in.runtime_channels <= nccl_max_channels(v);
  if (v.at_least(18) && arch && in.nodes > 1 && ring.bw_intra > 45.0 && room) {
    in.runtime_channels *= 2;
  }
  in.p2p_per_peer = nccl_p2p_shape(topo, comm, in.runtime_channels, v).per_peer;

  // The network plugin: NICs that do not deliver 128-byte blocks in order leave NCCL Simple
  // only (aws-ofi-nccl sets NCCL_PROTO=simple for the process, Topology::in_order), and from
  // 2.12 every graph that crosses the network carries the latency the plugin reports
  // (graph->latencyInter = the NIC's props.latency, `src/graph/search.cc`).
  in.ll = topo.in_order();
  in.ll128 = in.ll128 && topo.in_order();
  if (in.nodes > 1 && v.at_least(12)) {
    const double plugin_us = topo.plugin_latency().us();
    for (std::optional<NcclGraph>* g :
         {&in.ring, &in.tree, &in.nvls, &in.collnet_direct, &in.collnet_chain}) {
      if (*g) (*g)->latency_inter = plugin_us;
    }
  }
  set_nvls_across_max_chunk(in);
  return in;
}

void set_nvls_across_max_chunk(NcclModelInput& in) {
  in.nvls_across_max_chunk = 0;
  if (!in.nvls || in.nodes <= 1 || !in.release.at_least(19)) return;
  const NcclModel::Entry e =  // a copy: the model is a temporary
      NcclModel(in).entry(Collective::kAllReduce, NcclAlgo::kNvls, Protocol::kSimple);
  if (e.enabled && e.bandwidth_GBps < 150.0) in.nvls_across_max_chunk = 32768;
}

}  // namespace collsim
