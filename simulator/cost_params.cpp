// Default cost parameters. Sources (tags as in docs/theory.md §6 and docs/nccl-model.md §0):
//   docs/nccl-model.md §1.4 (per-channel caps), §1.5 (baseLat, hwLat), §1.7 (per-link bandwidths,
//   search speed arrays, runtime channel doubling), §2.3 (protocol line formats);
//   docs/theory.md §3.3-§3.4 (PCIe and IB efficiencies), NVIDIA datasheets for HBM bandwidth.
#include "simulator/cost_params.hpp"

#include <algorithm>
#include <cmath>

#include "algorithms/generators/registry.hpp"
#include "algorithms/ir/schedule.hpp"
#include "topology/topology.hpp"

namespace collsim {

namespace {

enum ArchRow { kAmpere, kHopper, kBlackwell };

ArchRow arch_row(int sm) { return sm >= 100 ? kBlackwell : sm >= 90 ? kHopper : kAmpere; }

}  // namespace

std::string_view to_string(RouteClass c) {
  switch (c) {
    case RouteClass::kNvLink:
      return "nvlink";
    case RouteClass::kPcie:
      return "pcie";
    case RouteClass::kNetwork:
      return "network";
  }
  return "?";
}

namespace {

// An element-wise reduction reads two operands and writes one, so it streams at about a third
// of the memory bandwidth a kernel achieves; a copy at half. Achieved: 0.905 of the datasheet's
// peak, measured on an H100 SXM 80GB on 2026-11-26 (docs/gpu.md): NCCL's one-rank AllReduce, a
// device-to-device copy, moved 1.49-1.52 TB/s (its time's slope from 256 MiB to 1 GiB) where
// half of 3.35 is 1.675.
void set_memory_rates(CostParams& c, Bandwidth peak) {
  constexpr double kAchieved = 0.905;
  c.reduce_bandwidth = Bandwidth::bytes_per_second(peak.bytes_per_second() * kAchieved / 3.0);
  c.copy_bandwidth = Bandwidth::bytes_per_second(peak.bytes_per_second() * kAchieved / 2.0);
}

}  // namespace

CostParams default_cost_params(int sm) {
  const ArchRow a = arch_row(sm);
  CostParams c;
  ProtocolCost& ll = c.protocol(Protocol::kLL);
  ProtocolCost& ll128 = c.protocol(Protocol::kLL128);
  ProtocolCost& simple = c.protocol(Protocol::kSimple);

  // Payload efficiency from the line formats (docs/nccl-model.md §2.3): LL 8 of 16 bytes, LL128 120
  // of 128 bytes, Simple all of it.
  ll.efficiency = 0.5;
  ll128.efficiency = 120.0 / 128.0;
  simple.efficiency = 1.0;

  // Per-piece latency beyond the links. NCCL's Ring hwLat (docs/nccl-model.md §1.5), µs, {LL,
  // LL128, Simple}: NVLink {0.6, 1.9, 3.4}, PCI {1.0, 2.5, 5.7}, NET {2.7, 4.0, 14.0}. The preset
  // link latencies already add up to the LL figure inside a node (0.6 µs over a mesh's direct
  // link; 0.5 + 0.5 µs over GPU->NVSwitch->GPU, NCCL's 0.6 and 0.4 more that a step through a
  // switch measures, 0.65 + 0.65 through Blackwell's, docs/theory.md §3.2; 0.5 + 0.5 µs over
  // PCIe), so a protocol adds its excess over LL there. Across the network the presets encode
  // only the adapter-to-adapter 0.6 µs (docs/theory.md §3.4), so the network class adds
  // hwLat[NET] - 0.6 µs for every protocol.
  ll.hop_latency = {us(0.0), us(0.0), us(2.7 - 0.6)};
  ll128.hop_latency = {us(1.9 - 0.6), us(2.5 - 1.0), us(4.0 - 0.6)};
  simple.hop_latency = {us(3.4 - 0.6), us(5.7 - 1.0), us(14.0 - 0.6)};

  // One channel is one CTA. Caps per runtime channel; NCCL runs two CTAs per search channel
  // (ncclTopoDupChannels, docs/nccl-model.md §1.7), so each per-search-channel figure is halved:
  //  - LL: NCCL caps a whole single-node ring at llMaxBw (Ampere 87.7, Hopper 141.0, Blackwell
  //    282.0 GB/s, §1.4) and runs 24 channels on an 8-GPU NVSwitch node (12 search channels
  //    doubled, §1.7 "Channel xx/24"): 87.7/24, 141/24, 282/24 GB/s per channel.
  //  - LL128: perChMaxRingLL128Bw (Ampere 20, Hopper 36.7, Blackwell 40 GB/s, §1.4) / 2.
  //  - Simple: the top of the search's per-channel intra speed array (pre-Hopper 40, sm90 60,
  //    sm100 90 GB/s, §1.7) / 2: the search never gives a channel more.
  constexpr double kLlMax[] = {87.7, 141.0, 282.0};
  constexpr double kLl128PerCh[] = {20.0, 36.7, 40.0};
  constexpr double kSimpleTop[] = {40.0, 60.0, 90.0};
  ll.channel_bandwidth = GBps(kLlMax[a] / 24.0);
  ll128.channel_bandwidth = GBps(kLl128PerCh[a] / 2.0);
  simple.channel_bandwidth = GBps(kSimpleTop[a] / 2.0);

  // Launch and setup once per collective: NCCL's Ring baseLat {6.6, 14.0, 8.4} µs (§1.5).
  ll.launch = us(6.6);
  ll128.launch = us(14.0);
  simple.launch = us(8.4);

  // The step overhead: what a step costs the CTA that sends it besides pushing the data (LogP's
  // o, docs/theory.md §2.4). A Simple or LL128 step ends with a barrier of the CTA's threads and
  // a memory fence (system scope on Hopper) before the tail flag is posted (NCCL src/device/
  // prims_simple.h postPeer, prims_ll128.h postSend): the sender waits until its writes are
  // visible at the peer and cannot start the next step meanwhile. NCCL's hwLat, collsim's
  // hop_latency, already counts the step's synchronisation as latency; what it leaves out is
  // that the sender is held while it lasts, which is what this is. An LL step has a barrier but
  // no fence (its flags ride in every 8-byte line): none charged. 1.5 us for both, chosen by
  // sweeping 1 to 3 us (LL128 0 to 1.5) over the project's 17 measured tables, not the three
  // held out: at 1.5 the 8x H100 AllGather and ReduceScatter tables
  // (h100x8_1node_{allgather,reducescatter}_xxrjun-cluster01.txt) go from 6.8 and 7.7 % median
  // |error| to 2.8 and 2.8 %, Snellius's 4-GPU-node AllGather
  // (h100x8_2node-4gpu_allgather_snellius-ib-4xNDR200_odissei.txt) from 11.3 to 5.2 %; at 2 us
  // and above the 8x A100 and Dell XE9680 IB tables get worse again.
  ll128.step_overhead = us(1.5);
  simple.step_overhead = us(1.5);

  // Usable fraction of line rate per link kind.
  //  - NVLink / NVSwitch / C2C: NCCL's per-link bandwidth over the 25 GB/s (NVLink3/4) or
  //    50 GB/s (NVLink5) line rate (topo.h, §1.7): sm80 20/25, sm90 20.6/25, sm100 40.1/50.
  //    Measured: H100 p2p 376 of 450 GB/s (0.836, nccl#1264), H200 396 of 450
  //    (docs/theory.md §3.1).
  //  - PCIe: measured Gen5 x16 host<->device copies reach 55.4 of 63 GB/s (8xH200,
  //    docs/theory.md §3.3 [S9]): 0.879. (NCCL's own, more conservative figure is 48/63 = 0.762,
  //    topo.cc; it would make a GPU's PCIe link narrower than its 400 Gb/s NIC.)
  //  - IB / RoCE / Ethernet: RDMA write reaches 193.7 of 200 Gb/s (0.969, docs/theory.md §3.4).
  //  - EFA: no published figure of what its SRD transport keeps of the line rate was found;
  //    taken as RDMA's 0.969, an assumption (docs/config.md, Transports).
  //  - SMP: the presets already give NCCL's inter-socket figure (SPR_QPI_BW 22 GB/s): 1.
  constexpr double kNvlEff[] = {20.0 / 25.0, 20.6 / 25.0, 40.1 / 50.0};
  auto set = [&](LinkKind k, double e) { c.link_efficiency[static_cast<int>(k)] = e; };
  set(LinkKind::kNvLink, kNvlEff[a]);
  set(LinkKind::kNvSwitch, kNvlEff[a]);
  set(LinkKind::kC2c, kNvlEff[a]);
  set(LinkKind::kPcie, 55.4 / 63.0);
  set(LinkKind::kSmp, 1.0);
  set(LinkKind::kIb, 193.7 / 200.0);
  set(LinkKind::kRoce, 193.7 / 200.0);
  set(LinkKind::kEthernet, 193.7 / 200.0);
  set(LinkKind::kEfa, 193.7 / 200.0);

  // Host staging (link_capacity): data NCCL stages in host memory crosses the root port's links
  // twice, as the sender's write into host memory and the receiver's read out of it
  // (src/transport/shm.cc: both GPUs' threads access the host buffer), and a receive that
  // forwards nothing holds its channel while it reads (engine.cpp). Those are the model's
  // structure, so the staged bytes themselves move at the PCIe link's own rate: 1. NCCL's
  // maintainer reports 9 or 6 GB/s through SHM where a PCIe Gen3 path inside a switch gives 12
  // (nccl#406, docs/sources.md [S45]), 0.75 and 0.5 of it; the structure gives 2/3 of the link
  // for a 2-GPU ring AllReduce whose reads serialize with its sends, and 1/2 where two GPUs
  // share one uplink.
  c.host_staging = 1.0;

  // γ: the architecture's usual memory (A100-80GB 2.04 TB/s, H100 SXM 3.35 TB/s, B200 8 TB/s,
  // [S48]); default_cost_params(topo) takes the cluster's GPU model's own.
  constexpr double kHbmTBps[] = {2.04, 3.35, 8.0};
  set_memory_rates(c, GBps(kHbmTBps[a] * 1e3));

  // NVLS: what the NVSwitch delivers per GPU port when it reduces (its ALU and multicast, not
  // the links, bound NVLS: docs/theory.md §1.8). Measured 8-GPU NVLS AllReduce peaks: H100 /
  // H200 (NVSwitch gen 3) busbw 480 GB/s, algbw 274 GB/s (nccl-tests#212; 8xH200 480.0 GB/s);
  // B200 (gen 4) busbw 838-846 GB/s, algbw 842 x 8/14 = 481 GB/s (p6-b200 sweeps). Each GPU
  // gives and receives n bytes through the switch, so the port rate is algbw. A100's gen-2
  // NVSwitch does not reduce (nccl-tests#228): no NVLS, the value is never used.
  constexpr double kNvlsGBps[] = {0.0, 274.0, 481.0};
  c.nvls_bandwidth = GBps(kNvlsGBps[a]);

  // One channel of NCCL's send/recv kernel. NCCL splits one peer's data over a few channels
  // (algorithms/models/nccl_p2p.hpp), and each of those CTAs gives its send about half its 20
  // warps (src/device/sendrecv.h: one send warp more than recv warps), so it moves less than a
  // collective's channel; the receive runs on the other warps at the same time (a SendRecv's
  // send and receive are two lanes of the channel, algorithms/generators/direct.cpp). Measured
  // on 8x H100 (NCCL 2.29, h100x8_1node_sendrecv_xxrjun-cluster01.txt): 820.2 us for 64 MiB on
  // NCCL's 4 channels and 825.7 us for 128 MiB on 8, 16 MiB a channel both times. The
  // simulation charges the launch (8.4 us), Simple's step overhead on each of the 32 pieces of
  // 512 KiB (1.5 us, the send's warps held while its fence and flag post, above) and the last
  // piece's NVLink hop besides the channel's rate, which leaves 16 MiB in about 760 us: 22.0
  // GB/s, 0.733 of Hopper's Simple cap above (at 22.0 the simulation gives 821.3 us for both
  // rows). Other architectures keep that ratio to their Simple cap: 14.7 GB/s on Ampere, which
  // the 8x A100 sendrecv table (a100x8_1node_sendrecv_li-plus-playground.txt) checks without
  // having been fitted to it.
  constexpr double kP2pOfSimple = 22.0 / 30.0;
  c.p2p_channel_bandwidth = GBps(kP2pOfSimple * kSimpleTop[a] / 2.0);

  // One channel of NVLSTree. Its CTA splits its warps three ways (src/device/all_reduce.h
  // runNvlsTree: scatter = reduce from the switch and send up the tree, reduce = combine what the
  // tree returns, broadcast = multicast it back through the switch), so it moves less than an
  // NVLS channel, and NCCL caps it with its own constant: perChMaxNVLSTreeBw, 57.7 GB/s of bus
  // bandwidth per search channel on Hopper with 2 nodes, 96.0 on Blackwell (docs/nccl-model.md
  // §1.4; 45.5 / 80.0 beyond 2 nodes: nvls_tree_deep_share below). A
  // search channel runs as two (16 NVLS channels for 8 search channels on 8x H100), and a
  // channel's part of the vector is its bus bandwidth x nRanks / (2 (nRanks - 1)), 16/30 on the
  // 2 x 8 GPUs the constant is for: 57.7 / 2 x 16/30 = 15.4 GB/s a channel, 246 GB/s algbw on 16
  // channels. NCCL's figure is an achieved rate, its steps' synchronisation included; a
  // simulated channel pays that synchronisation itself (the step overhead above, 1.5 us on each
  // 128 KiB piece, and Simple's hop latency, partly overlapped), which leaves it 77.3 % of its cap
  // on 2 x 8 H100 (h100-2node-ib, 16 GiB: 246.1 GB/s at a 19.9 GB/s cap, 245.4 at 19.8, 232.6 at
  // 18.1; 209.2 at 15.4), so the cap, the CTA's rate between two synchronisations, is
  // 15.4 / 0.773 = 19.9 GB/s and the simulation reaches NCCL's 246 GB/s. Uncapped, the NVSwitch
  // bounds it at 273.5 GB/s. The 2-node tables of NVLSTree measure 250 (Dell XE9680 IB),
  // 248 (OCI H100 RoCE) and 259 GB/s (H200 on Spectrum-X) at 16 GiB. No NVLS before Hopper: no
  // cap there (never used).
  constexpr double kNvlsTreePerCh[] = {0.0, 57.7, 96.0};
  constexpr double kPieceCostShare = 0.773;
  c.nvls_tree_channel_bandwidth = GBps(kNvlsTreePerCh[a] / 2.0 * 16.0 / 30.0 / kPieceCostShare);
  // Beyond two nodes a tree has interior nodes, whose NVLSTree CTA also combines two children's
  // sums and sends to a parent: NCCL's constant drops to 45.5 GB/s on Hopper, 80.0 on Blackwell
  // (perChMaxNVLSTreeBw's third column, docs/nccl-model.md §1.4). The extra NIC traffic of an
  // interior node is the topology's to charge; this is the CTA's own share. On the 4-node
  // Voltage Park table (h100x32_4node_allreduce_voltagepark-ib-8x400G_vpbenchmarking.txt, not
  // fitted) its 8 NVLSTree rows go from 11.8 % to 8.8 % mean |error|.
  constexpr double kNvlsTreeDeepPerCh[] = {0.0, 45.5, 80.0};
  c.nvls_tree_deep_share = a == 0 ? 1.0 : kNvlsTreeDeepPerCh[a] / kNvlsTreePerCh[a];

  // The host's cost to issue one collective on one GPU (NCCL's enqueue and the kernel launch).
  // One thread driving g GPUs issues g of them per iteration inside one group (nccl-tests -g;
  // NCCL launches every device's kernel at ncclGroupEnd, nccl#347). Measured on a DGX A100,
  // NCCL_ALGO=Ring, one channel, 8-128 B AllReduce with -g 2..8 (nccl-tests#123): 10.0, 13.76,
  // 16.88, 20.8, 25.2, 29.5, 33.7 us, linear in g from 4 GPUs on at 4.2 us per GPU
  // ((33.7 - 16.88) / 4 = 4.2; 33.7 / 8 = 4.21), far steeper than the ring's NVLink steps.
  // No architecture-specific figure is published; the same value serves every GPU.
  c.host_launch = us(4.2);
  // And per NCCL channel the collective runs on: the host builds each channel's share of the
  // work (src/enqueue.cc, scheduleCollTasksToPlan: for each channel from channelLo to channelHi
  // a work batch, ncclAddWorkBatchToPlan, and a proxy op where one is needed), so a host-bound
  // iteration lengthens with the channels though the GPUs' share of it does not. Measured as the
  // slope of the per-GPU iteration time over the channel count (1 to 24) on the rows up to 1 MiB
  // of one-thread eager tables (tests/data/nccl-tests): 0.035 us on 8 H100 with NCCL 2.26
  // (h100x8_1node_allreduce_NVLS_together), 0.049, 0.049 and 0.058 us, median 0.049, on another
  // host's 4 H100 with NCCL 2.29 (the AllReduce, ReduceScatter and AllGather tables of
  // waynehacking8, -g 4); tests/predict/host_loop_test.cpp computes and prints them. 0.04 us lies
  // between the two hosts. Where the one-channel cost itself differs from host to host (4.4 and
  // 4.3-6.0 us per GPU there), this slope did not.
  c.host_channel = us(0.04);
  return c;
}

double CostParams::channel_cap(Protocol p, ChannelKernel kernel) const {
  const double own = protocol(p).channel_bandwidth.bytes_per_second();
  double k = 0;
  if (kernel == ChannelKernel::kP2p) k = p2p_channel_bandwidth.bytes_per_second();
  if (kernel == ChannelKernel::kNvlsTree) k = nvls_tree_channel_bandwidth.bytes_per_second();
  if (kernel == ChannelKernel::kNvlsTreeDeep) {
    k = nvls_tree_channel_bandwidth.bytes_per_second() * nvls_tree_deep_share;
  }
  if (own <= 0) return k;
  return k > 0 ? std::min(own, k) : own;
}

bool stages_in_host(const Topology& topo, LinkId l) {
  const Link& link = topo.link(l);
  if (link.kind != LinkKind::kPcie) return false;
  const auto pcie_host = [&](DeviceId d) {
    if (topo.device(d).kind != DeviceKind::kCpu) return false;
    for (LinkId o : topo.out_links(d)) {
      const LinkKind k = topo.link(o).kind;
      if (k == LinkKind::kNvLink || k == LinkKind::kNvSwitch || k == LinkKind::kC2c) return false;
    }
    return true;
  };
  return pcie_host(link.src) || pcie_host(link.dst);
}

bool receiver_reads_host(const Topology& topo, const Route& r) {
  bool reads = false;
  for (LinkId l : r.links) {
    if (is_network(topo.link(l).kind)) {
      reads = false;
    } else if (stages_in_host(topo, l)) {
      reads = true;
    }
  }
  return reads;
}

double link_capacity(const Topology& topo, LinkId l, const CostParams& costs) {
  const Link& link = topo.link(l);
  const double rate = link.bandwidth.bytes_per_second() * costs.efficiency(link.kind);
  return stages_in_host(topo, l) ? rate * costs.host_staging : rate;
}

ChannelKernel channel_kernel(const ScheduleInfo& info) {
  if (info.p2p) return ChannelKernel::kP2p;
  // NVLSTree's kernel (registry.hpp, Family::kNvlsTree).
  const AlgorithmInfo* a = find_algorithm_or_null(info.algorithm);
  if (a == nullptr || a->family != Family::kNvlsTree) {
    return ChannelKernel::kCollective;
  }
  return info.nodes > 2 ? ChannelKernel::kNvlsTreeDeep : ChannelKernel::kNvlsTree;
}

CostParams default_cost_params(const Topology& topo) {
  CostParams c = default_cost_params(topo.gpu_model().sm);
  if (topo.gpu_model().memory_bandwidth.bytes_per_second() > 0) {
    set_memory_rates(c, topo.gpu_model().memory_bandwidth);
  }
  // An LL step inside an Ampere node of a multi-node communicator: the NCCL releases of the
  // Ampere era (2.7 to 2.17, src/graph/tuning.cc: `if (nNodes > 1 && p == NCCL_PROTO_LL)
  // intraLat *= 1.8`) count 1.8 x the single-node hwLat, 0.6 us, for every intra-node LL hop of
  // a communicator that spans nodes; Hopper-era releases dropped the factor. That is 0.48 us
  // more than NCCL's own 0.6 us step, added to whatever the links cost (through an NVSwitch
  // 1.0 us, docs/theory.md §3.2: 1.48 us in all). The two 2-node 8x A100 tables' 8 B to 4 KiB
  // Tree/LL floors, 37 and 39 us, are predicted at 36.7 and 36.9 us with both (24 us with
  // neither, 31 with the factor alone; docs/calibration.md, Known limits). Not applied to Volta
  // or to one node, where no table of the project's says it would be right.
  constexpr double kNvlinkLlHwLatUs = 0.6;  // hwLat[NVLINK][*][LL], what the factor scales
  constexpr double kMultiNodeLlFactor = 1.8;
  if (arch_row(topo.gpu_model().sm) == kAmpere && topo.gpu_model().sm >= 80 &&
      topo.node_count() > 1) {
    Time& hop = c.protocol(Protocol::kLL).hop_latency[static_cast<int>(RouteClass::kNvLink)];
    hop = hop + us(kMultiNodeLlFactor * kNvlinkLlHwLatUs - kNvlinkLlHwLatUs);
  }
  return c;
}

CostParams cost_params(const Topology& topo) {
  CostParams c = default_cost_params(topo);
  apply_cost_settings(topo.cost_settings(), c);
  return c;
}

CostParams ideal_cost_params() {
  CostParams c;
  for (ProtocolCost& p : c.protocols) p = ProtocolCost{};
  return c;
}

namespace {

static_assert(static_cast<int>(Protocol::kLL) == 0 && static_cast<int>(Protocol::kLL128) == 1 &&
                  static_cast<int>(Protocol::kSimple) == 2,
              "kCostProtocols follows the Protocol enum");
static_assert(static_cast<int>(RouteClass::kNvLink) == 0 &&
                  static_cast<int>(RouteClass::kPcie) == 1 &&
                  static_cast<int>(RouteClass::kNetwork) == 2,
              "kCostRouteClasses follows the RouteClass enum");

Time ps_of(double v) { return Time::from_ps(static_cast<std::int64_t>(std::llround(v))); }

}  // namespace

double cost_value(const CostParams& params, const CostField& f) {
  using K = CostField::Kind;
  const ProtocolCost& p = params.protocols[static_cast<std::size_t>(f.protocol)];
  switch (f.kind) {
    case K::kLaunch:
      return static_cast<double>(p.launch.ps());
    case K::kHopLatency:
      return static_cast<double>(p.hop_latency[static_cast<std::size_t>(f.route)].ps());
    case K::kEfficiency:
      return p.efficiency;
    case K::kChannelBandwidth:
      return p.channel_bandwidth.bytes_per_second();
    case K::kLinkEfficiency:
      return params.link_efficiency[static_cast<std::size_t>(f.link)];
    case K::kReduceBandwidth:
      return params.reduce_bandwidth.bytes_per_second();
    case K::kCopyBandwidth:
      return params.copy_bandwidth.bytes_per_second();
    case K::kNvlsBandwidth:
      return params.nvls_bandwidth.bytes_per_second();
    case K::kP2pChannelBandwidth:
      return params.p2p_channel_bandwidth.bytes_per_second();
    case K::kNvlsTreeChannelBandwidth:
      return params.nvls_tree_channel_bandwidth.bytes_per_second();
    case K::kHostLaunch:
      return static_cast<double>(params.host_launch.ps());
    case K::kHostChannel:
      return static_cast<double>(params.host_channel.ps());
    case K::kStepOverhead:
      return static_cast<double>(p.step_overhead.ps());
    case K::kHostStaging:
      return params.host_staging;
  }
  return 0;
}

void set_cost_value(CostParams& params, const CostField& f, double v) {
  using K = CostField::Kind;
  ProtocolCost& p = params.protocols[static_cast<std::size_t>(f.protocol)];
  switch (f.kind) {
    case K::kLaunch:
      p.launch = ps_of(v);
      break;
    case K::kHopLatency:
      p.hop_latency[static_cast<std::size_t>(f.route)] = ps_of(v);
      break;
    case K::kEfficiency:
      p.efficiency = v;
      break;
    case K::kChannelBandwidth:
      p.channel_bandwidth = Bandwidth::bytes_per_second(v);
      break;
    case K::kLinkEfficiency:
      params.link_efficiency[static_cast<std::size_t>(f.link)] = v;
      break;
    case K::kReduceBandwidth:
      params.reduce_bandwidth = Bandwidth::bytes_per_second(v);
      break;
    case K::kCopyBandwidth:
      params.copy_bandwidth = Bandwidth::bytes_per_second(v);
      break;
    case K::kNvlsBandwidth:
      params.nvls_bandwidth = Bandwidth::bytes_per_second(v);
      break;
    case K::kP2pChannelBandwidth:
      params.p2p_channel_bandwidth = Bandwidth::bytes_per_second(v);
      break;
    case K::kNvlsTreeChannelBandwidth:
      params.nvls_tree_channel_bandwidth = Bandwidth::bytes_per_second(v);
      break;
    case K::kHostLaunch:
      params.host_launch = ps_of(v);
      break;
    case K::kHostChannel:
      params.host_channel = ps_of(v);
      break;
    case K::kStepOverhead:
      p.step_overhead = ps_of(v);
      break;
    case K::kHostStaging:
      params.host_staging = v;
      break;
  }
}

void apply_cost_settings(const CostSettings& settings, CostParams& params) {
  for (const CostSetting& s : settings) set_cost_value(params, s.field, s.value);
}

}  // namespace collsim
