// The simulator's cost parameters: what a protocol, a link kind and a GPU add to the topology's
// raw links. Every default cites NCCL's own figures (docs/nccl-model.md) or a measurement; a
// cluster YAML overrides any of them under a top-level `costs:` key.
//
//   CostParams c = default_cost_params(topo);            // by the cluster's GPU architecture
//   c.protocol(Protocol::kSimple).channel_bandwidth;     // 30 GB/s per channel on Hopper
//   apply_cost_settings(topo.cost_settings(), c);        // the config's `costs:` and overlays
//
// How each parameter enters the simulation (simulate.hpp says where):
//  - A piece of B payload bytes puts ceil(B / efficiency) bytes on the wire (LL: 8 data bytes
//    per 16-byte line; LL128: 120 of 128 bytes; Simple: all; docs/nccl-model.md §2.3,
//    docs/theory.md §2.2).
//  - A link carries at most bandwidth x link_efficiency wire bytes per second: the fraction of
//    line rate that data movement reaches. NVLink: NCCL's per-link figure over the line rate
//    (topo.h: sm90 20.6 of 25 GB/s = 0.824; measured H100 p2p 376 of 450 GB/s, nccl#1264). This
//    is the mechanism that puts 8xH100 ring busbw at ~370 GB/s rather than 450
//    (docs/nccl-model.md §6 anchor 1, "~20% protocol overhead").
//  - A PCIe link at the root port of a host whose GPUs attach over PCIe carries at most
//    host_staging of that rate again (link_capacity()): NCCL moves no GPU data peer-to-peer
//    across a root port (P2P and GPUDirect RDMA stop at PCIe switches, NCCL's p2pLevel and
//    netGdrLevel PATH_PXB, src/graph/paths.cc), so whatever crosses one is staged in host
//    memory: NCCL's SHM transport between GPUs (the receiving GPU reads the sender's data out of
//    host memory, shm.cc SHM_RECV_SIDE), the network proxy's bounce buffer with GPUDirect RDMA
//    off. The receiving channel's threads do that read themselves: a receive that forwards
//    nothing (a ring's last step, a tree's leaf) holds its channel for as long as the piece took
//    to write in (RouteInfo::staged_read, receiver_reads_host()), where a receive that forwards
//    overlaps the read with its own push. Steps of one channel run one after another, so a 2-GPU
//    ring AllGather over SHM moves half the bytes per second a bare link would, and an AllReduce
//    two thirds. NCCL's point-to-point kernel gives a channel's sends and receives warps of their
//    own (src/device/sendrecv.h), so there the read holds only the receiving warps and a
//    sendrecv over SHM keeps sending meanwhile (the engine's recv_busy_).
//  - One channel (one CTA) moves at most channel_bandwidth payload bytes per second; a channel
//    of NCCL's point-to-point kernel (ScheduleInfo::p2p: sendrecv, alltoall, gather, scatter)
//    at most p2p_channel_bandwidth too, and one of NVLSTree at most nvls_tree_channel_bandwidth
//    (x nvls_tree_deep_share on more than two nodes) (channel_kernel(), channel_cap()).
//  - Each piece pays its route's latency (the sum of the preset link latencies, which already
//    encode NCCL's per-hop LL figure, see configs/dgx-h100.yaml) plus the protocol's
//    hop_latency for the route's class: only the protocol's excess over LL, so nothing is counted
//    twice.
//  - launch is paid once per collective, before any rank starts (NCCL's baseLat).
//  - Reducing B bytes delays the piece by B / reduce_bandwidth (γ); a local copy occupies its
//    channel for B / copy_bandwidth. A zero bandwidth means "free".
//  - A switch actor (NVLS, schedule.hpp) reduces at nvls_bandwidth per GPU port: the switch's
//    whole rate, ports x nvls_bandwidth, is shared by its streams, so a switch reducing for p
//    GPUs over C channels delays each piece-reduction by B x C / ((p - 1) x nvls_bandwidth)
//    and reduces a whole n-byte AllReduce in n / nvls_bandwidth.
//  - host_launch is not simulated: it is the host's time to issue one collective on one GPU,
//    plus host_channel for each NCCL channel the collective runs on. A measured iteration takes
//    at least (host_launch + channels x host_channel) x the GPUs one host thread drives
//    (predict/predict.hpp, Request::host). The -g 8 AllReduce tables of tests/data/nccl-tests
//    stay flat at 32-36 us up to 32 KiB on 8x A100 (a100x8_1node_allreduce_oci-bm-gpu4.8) and
//    64 KiB on 8x H100 (h100x8_1node_allreduce_NVLS_together).
#pragma once

#include <array>

#include "algorithms/ir/types.hpp"
#include "topology/cost_schema.hpp"
#include "topology/device.hpp"
#include "topology/units.hpp"

namespace collsim {

class Topology;
struct Route;
struct ScheduleInfo;

// Which kernel a channel runs, where that sets its own per-channel cap.
// kNvlsTreeDeep: NVLSTree on more than two nodes, where a tree has interior nodes.
enum class ChannelKernel { kCollective, kP2p, kNvlsTree, kNvlsTreeDeep };

// Where a route runs, for the per-hop protocol latency: NVLink-class links only, some PCIe (or
// SMP) link, or the inter-node network.
enum class RouteClass { kNvLink, kPcie, kNetwork };
inline constexpr int kRouteClassCount = 3;
inline constexpr int kLinkKindCount = 9;  // LinkKind::kNvLink .. kEfa

struct ProtocolCost {
  double efficiency = 1.0;                           // payload bytes per wire byte, (0, 1]
  std::array<Time, kRouteClassCount> hop_latency{};  // per piece, by RouteClass
  Bandwidth channel_bandwidth;                       // payload per channel; zero = no cap
  Time launch;                                       // once per collective
  // What a GPU channel's sender spends on each non-empty piece besides moving it (the step's
  // barrier and fence before its flag), holding the channel; the piece's arrival does not wait
  // for it (docs/theory.md §2.4).
  Time step_overhead;
};

struct CostParams {
  std::array<ProtocolCost, kProtocolCount> protocols{};
  std::array<double, kLinkKindCount> link_efficiency{1, 1, 1, 1, 1, 1, 1, 1, 1};
  double host_staging = 1.0;        // what a root port's PCIe links keep for host-staged data
  Bandwidth reduce_bandwidth;       // zero = reductions are free
  Bandwidth copy_bandwidth;         // zero = local copies are free
  Bandwidth nvls_bandwidth;         // the NVSwitch's reduction rate per GPU port; zero = free
  Bandwidth p2p_channel_bandwidth;  // one channel of NCCL's send/recv kernel; zero = no cap
  Bandwidth nvls_tree_channel_bandwidth;  // one channel of NVLSTree's split CTA; zero = no cap
  // What an NVLSTree channel keeps of that cap on more than two nodes (NCCL's own ratio, by
  // architecture; cost_params.cpp). Not a `costs:` key: it scales whatever cap is given.
  double nvls_tree_deep_share = 1.0;
  // LL and LL128 forward their lines as they come, a pass of the channel's threads at a time
  // (docs/theory.md §2.5, ProtocolGeometry::pass_bytes): an op that receives a piece and sends it
  // on over NVLink or PCIe starts once the piece's first pass is in and ends one pass after its
  // arrival; false (the default): store and forward by piece, as Simple always does. Not a
  // `costs:` key: --line-forwarding sets it.
  bool line_forwarding = false;
  Time host_launch;                 // host time to issue one collective on one GPU; zero = none
  Time host_channel;                // and for each NCCL channel the collective runs on

  ProtocolCost& protocol(Protocol p) { return protocols[static_cast<int>(p)]; }
  const ProtocolCost& protocol(Protocol p) const { return protocols[static_cast<int>(p)]; }
  double efficiency(LinkKind k) const { return link_efficiency[static_cast<int>(k)]; }
  // What one channel of protocol `p` running `kernel` moves at most, payload bytes per second
  // (0: no cap): the protocol's cap, and the kernel's own where it has one.
  double channel_cap(Protocol p, ChannelKernel kernel) const;
};

// Whether link `l` is a PCIe link at the root port of a CPU that its GPUs reach over PCIe (not
// NVLink or C2C, over which NCCL reaches a Grace's or a POWER9's NICs directly): everything NCCL
// sends across it is staged in host memory.
bool stages_in_host(const Topology& topo, LinkId l);
// Whether the receiver of a transfer along `r` reads it out of host memory: a staging link on
// the receiver's side of the route's last network hop, or anywhere on a route without one
// (staging before the network is the sender's write, which its push already holds).
bool receiver_reads_host(const Topology& topo, const Route& r);
// What link `l` carries, wire bytes per second: its bandwidth x its kind's efficiency, x
// host_staging where it stages in host memory. The simulator's capacities and the closed forms'
// hop rates both come from here.
double link_capacity(const Topology& topo, LinkId l, const CostParams& costs);

// The kernel a schedule's channels run (NCCL's point-to-point kernel, NVLSTree's split CTA, or
// an ordinary collective's), for their cap.
ChannelKernel channel_kernel(const ScheduleInfo& info);

// NCCL-sourced defaults for a GPU architecture (compute capability x10: 80, 90, 100; others
// take the nearest older one).
CostParams default_cost_params(int sm);
// The same for the cluster's GPU model.
CostParams default_cost_params(const Topology& topo);
// The cluster's parameters: the defaults for its GPU with its config's `costs:` overrides applied
// (ConfigError, located in the config, on a bad override). What the simulator uses by default.
CostParams cost_params(const Topology& topo);
// Parameters with nothing but the links: efficiency 1, no latency beyond the links, no channel
// cap, no launch, free reductions and copies. The simulator then computes exactly the α-β
// closed forms (tests compare the two).
CostParams ideal_cost_params();

// One field of the `costs:` schema (topology/cost_schema.hpp) in CostParams, in the units of
// CostSetting::value: picoseconds, bytes per second (0: none / free), or a fraction.
double cost_value(const CostParams& params, const CostField& field);
void set_cost_value(CostParams& params, const CostField& field, double value);
// Applies settings read from `costs:` mappings, in order, on top of `params`.
void apply_cost_settings(const CostSettings& settings, CostParams& params);

std::string_view to_string(RouteClass c);

}  // namespace collsim
