// The cluster: devices, directed links, ranks, routes.
//
// A Topology is an immutable graph of devices (GPUs, NVSwitch fabrics, PCIe switches, CPUs, NICs,
// network switches) joined by directed links; a physical full-duplex cable is two links, one per
// direction, each with its own bandwidth. Ranks map to GPUs (node-major by default). Other
// modules refer to everything by id (DeviceId, LinkId, Rank); the Boost.Graph representation
// stays inside this module.
//
//   Topology topo = load_topology("configs/dgx-h100.yaml");     // or a preset name
//   Route r = topo.route(topo.gpu_of(0), topo.gpu_of(7));        // GPU -> NVSwitch -> GPU
//   for (LinkId l : r.links) std::cout << topo.link(l).bandwidth.gbyte_per_second();
//
// Routes are deterministic: the same topology gives the same route for the same pair, always.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "topology/cost_schema.hpp"
#include "topology/device.hpp"
#include "topology/units.hpp"

namespace collsim {

// A route is the ordered list of directed links a transfer crosses.
struct Route {
  std::vector<LinkId> links;
  bool empty() const { return links.empty(); }
};

// What the network between nodes looks like, for summaries and for routing decisions.
enum class NetworkKind { kNone, kSingleSwitch, kFatTree, kRailOptimized, kExplicit };
std::string_view to_string(NetworkKind k);

// How a fabric picks among equally short next hops (leaf -> spine, spine -> core):
//  kDmodK     the (d mod k)-th, d the destination NIC's index: static, destination-based, what
//             InfiniBand subnet managers' fat-tree routing computes (Zahavi 2010);
//  kEcmp      a hash of (source NIC, destination NIC, flow): static per flow, so flows collide
//             on uplinks by chance, as on Ethernet/RoCE ECMP fabrics;
//  kAdaptive  every flow spread evenly over all of them (the fluid limit of adaptive routing):
//             the parallel switches of a tier are built as one carrying all their capacity.
enum class Routing { kDmodK, kEcmp, kAdaptive };
std::string_view to_string(Routing r);  // "dmodk", "ecmp", "adaptive"

class TopologyBuilder;
class ConfigNode;

class Topology {
 public:
  ~Topology();
  Topology(Topology&&) noexcept;
  Topology& operator=(Topology&&) noexcept;

  const std::string& name() const { return name_; }
  NetworkKind network_kind() const { return network_kind_; }
  // PXN (NCCL >= 2.12, NCCL_PXN_DISABLE=0): a GPU sends to another node through the NIC on the
  // destination's rail, reaching it over NVLink through the GPU that owns that NIC, so that
  // cross-rail traffic stays off the spines (docs/theory.md §2.3 item 3, [S19]).
  bool pxn() const { return pxn_; }
  // GPUDirect RDMA (network.gdr, default on): the NIC reads and writes GPU memory directly. Off
  // (no nvidia-peermem / dmabuf, or NCCL_NET_GDR_LEVEL below the GPU-NIC distance), NCCL's proxy
  // stages every network transfer in host memory, so its route climbs to the GPU's host CPU and
  // back down to the NIC (route.cpp, rule 5).
  bool gdr() const { return gdr_; }
  // SHARP (network.sharp, default off): the InfiniBand switches reduce what the NICs send them,
  // and NCCL runs its CollNet algorithms over them (NCCL_COLLNET_ENABLE=1 with the SHARP plugin;
  // both are needed, so a fabric of SHARP-capable switches without the plugin says false). A
  // CollNet schedule's switch actors sit on the network switch their anchor's NIC plugs into.
  bool sharp() const { return sharp_; }
  // Whether the NICs deliver every aligned 128-byte block of a message in order (node.nics.
  // in_order). LL and LL128 rely on it: their flags ride in the data, so a block that lands
  // out of order reads as valid too early. InfiniBand, RoCE and NCCL's sockets do; the first EFA
  // generation does not, and there aws-ofi-nccl sets NCCL_PROTO=simple for the whole process
  // when it starts (src/platform-aws.cpp), single-node communicators included.
  bool in_order() const { return in_order_; }
  // The latency the network plugin reports to NCCL (ncclNetProperties_t::latency), which NCCL's
  // tuning model adds to every network step from 2.12, twice for Simple from 2.18
  // (`src/graph/tuning.cc`, latencyInter); NCCL's own IB and socket transports report 0,
  // aws-ofi-nccl 75 us on most EFA platforms (node.nics.plugin_latency). A tuning input only: the
  // simulation's network steps do not pay it.
  Time plugin_latency() const { return plugin_latency_; }
  Routing routing() const { return routing_; }
  // How the templated form grew the fabric ("2 tiers: 4 leaves of 32 nodes, 4 spines"); empty
  // for other networks.
  const std::string& fabric() const { return fabric_; }
  // The cost settings to apply over the simulator's defaults, in order: the config's own
  // `costs:`, then each calibration overlay loaded with it (LoadOptions::cost_files), read and
  // checked once at load (cost_schema.hpp). The simulator applies them
  // (simulator/cost_params.hpp, cost_params(const Topology&)).
  const CostSettings& cost_settings() const { return cost_settings_; }
  // The cost files that were layered on, as given (for provenance in reports).
  const std::vector<std::string>& cost_files() const { return cost_files_; }

  // Devices and links, indexed by their ids (dense, from 0).
  const std::vector<Device>& devices() const { return devices_; }
  const std::vector<Link>& links() const { return links_; }
  const Device& device(DeviceId id) const { return devices_.at(id.value); }
  const Link& link(LinkId id) const { return links_.at(id.value); }
  // The link in the opposite direction of the same cable.
  LinkId reverse(LinkId id) const { return links_.at(id.value).reverse; }
  std::vector<LinkId> out_links(DeviceId d) const;
  std::vector<LinkId> in_links(DeviceId d) const;

  // Nodes (hosts / trays). Node n's GPUs in local order.
  int node_count() const { return static_cast<int>(node_gpus_.size()); }
  const std::vector<DeviceId>& gpus_of_node(int node) const { return node_gpus_.at(node); }
  // All GPUs in rank order (rank r runs on gpus()[r]).
  const std::vector<DeviceId>& gpus() const { return rank_gpu_; }
  int rank_count() const { return static_cast<int>(rank_gpu_.size()); }
  DeviceId gpu_of(Rank r) const { return rank_gpu_.at(r.value); }
  int node_of(Rank r) const { return device(gpu_of(r)).node; }
  int local_rank(Rank r) const { return device(gpu_of(r)).local_index; }
  // The GPU model of rank 0 (clusters are homogeneous unless the explicit form says otherwise).
  const GpuModel& gpu_model() const;

  // The NICs this GPU's channels reach the network through, taken in turn by channel (NCCL
  // gives each channel a network device and spreads a GPU's channels over the devices near it):
  // its rail NIC when the node has one per GPU; otherwise the NICs closest to it (sharing its
  // PCIe switch), split evenly among the GPUs that share them, so a node with 16 NICs for 8
  // GPUs gives each GPU two and one with 4 for 8 gives two GPUs the same one. Empty on a node
  // without NICs.
  const std::vector<DeviceId>& nics_of(DeviceId gpu) const;
  // The first of them (the one channel 0 uses); nullopt on a node without NICs.
  std::optional<DeviceId> nic_of(DeviceId gpu) const;
  // Whether `gpu` reaches `nic` through PCIe switches alone, no CPU and no other GPU on the way
  // (NCCL's path types PIX and PXB, `src/graph/paths.cc`): a NIC it sends to directly with
  // GPUDirect RDMA, as a ring leaving a node does (route.cpp, rule 4).
  bool nic_at_pxb(DeviceId gpu, DeviceId nic) const;
  // The flow a channel's connections are routed as (route()): under ECMP the channel itself
  // (each channel is its own queue pair, hashed apart); otherwise the channel's turn among its
  // GPU's NICs. The generators cross between nodes on local rank c mod g for channel c
  // (ring_order, dbtree), so a GPU carries channels c, c + g, c + 2g, ...; the j-th of them takes
  // the GPU's NIC j: flow (c / g) mod the most NICs any GPU has (0 where every GPU has one).
  std::uint32_t route_flow(int channel) const;

  // Shortest route between two devices (see route.cpp for the rules: rail-local NICs, no peer
  // traffic through a PCIe switch with P2P off, spine spreading in fat trees). Throws
  // ConfigError if `to` is unreachable from `from`. Memoised; safe to call from several threads.
  const Route& route(DeviceId from, DeviceId to) const { return route(from, to, 0); }
  // The route of one flow (route_flow): it picks the NIC among a GPU's NICs (flow mod their
  // count, at both ends) and, under ECMP routing, is part of the hash that places it on the
  // spines.
  const Route& route(DeviceId from, DeviceId to, std::uint32_t flow) const;

  // Sum of the latencies of a route's links, and its narrowest link's bandwidth.
  Time route_latency(const Route& r) const;
  Bandwidth route_bandwidth(const Route& r) const;

  // Bandwidth a GPU can inject into the inter-node network (its share of the NICs it can reach,
  // limited by the links on the way); zero on a single node without NICs.
  Bandwidth injection_bandwidth(DeviceId gpu) const;
  // Maximum flow between the first and second half of the GPUs in rank order (node-major, so for
  // several nodes this cuts between nodes), per direction.
  Bandwidth bisection_bandwidth() const;

 private:
  friend class TopologyBuilder;
  Topology();
  void assign_nics();  // fills gpu_nics_ (see nics_of)
  // Takes failed NICs out of every GPU's list, giving a GPU left without one the nearest working
  // NICs of its node; RequestError where a node of a multi-node cluster has none left.
  void drop_nics(const std::vector<DeviceId>& failed);
  std::optional<DeviceId> nic_for_flow(DeviceId gpu, std::uint32_t flow) const;
  // BFS over non-network links: hops from `from` to each device reached, by device id.
  std::unordered_map<std::int32_t, int> node_local_hops(DeviceId from) const;
  Route find_route(DeviceId from, DeviceId to, std::uint32_t flow) const;  // uncached; route.cpp
  // Inside an island (route.cpp): cached, and empty at once between islands.
  const Route& intra_route(DeviceId from, DeviceId to) const;
  Route find_intra_route(DeviceId from, DeviceId to) const;  // uncached
  // Per device id, the smallest device id connected to it by non-network links.
  std::vector<std::int32_t> islands() const;
  Route network_route(DeviceId from_nic, DeviceId to_nic, std::uint32_t flow) const;
  Route pxn_first_leg(DeviceId gpu, DeviceId own_nic, DeviceId dst_nic, DeviceId& via_nic) const;
  // The CPU nearest a GPU (fewest hops inside its node, then the lower id): where its host
  // memory is; nullopt on a node without CPUs.
  std::optional<DeviceId> host_cpu(DeviceId gpu) const;
  // Appends to `r` the GPU-NIC leg inside a node from `from` to `to` (`gpu` one of them): direct
  // with GPUDirect RDMA, through host_cpu without. False where there is none.
  bool append_nic_leg(Route& r, DeviceId from, DeviceId to, DeviceId gpu) const;

  struct Graph;  // Boost.Graph adjacency list, private to topology/
  struct RouteCache;

  std::string name_;
  NetworkKind network_kind_ = NetworkKind::kNone;
  bool pxn_ = false;
  bool gdr_ = true;
  bool sharp_ = false;
  bool in_order_ = true;
  Time plugin_latency_;
  Routing routing_ = Routing::kDmodK;
  std::string fabric_;
  CostSettings cost_settings_;
  std::vector<std::string> cost_files_;
  std::vector<Device> devices_;
  std::vector<Link> links_;
  std::vector<GpuModel> models_;  // indexed by Device::model
  std::vector<std::vector<DeviceId>> node_gpus_;
  std::vector<DeviceId> rank_gpu_;
  std::vector<std::vector<DeviceId>> gpu_nics_;  // indexed by device id (GPUs only)
  std::uint32_t nic_ways_ = 1;                   // the most NICs one GPU has
  std::vector<int> nic_index_;  // indexed by device id: position among all NICs (-1 otherwise)
  std::vector<std::vector<DeviceId>> node_nics_;    // per node, by local index
  std::vector<std::optional<DeviceId>> nic_owner_;  // per device id (NICs): the GPU it serves
  std::unique_ptr<Graph> graph_;
  std::unique_ptr<RouteCache> routes_;
};

}  // namespace collsim
