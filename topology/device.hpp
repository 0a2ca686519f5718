// Devices, links, ids and GPU models: the vocabulary of the cluster graph.
//
// Ids are small value types so that a DeviceId can never be passed where a LinkId or a Rank is
// expected. They index Topology::devices(), Topology::links() and Topology::gpus().
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "topology/units.hpp"

namespace collsim {

struct DeviceId {
  std::int32_t value = -1;
  auto operator<=>(const DeviceId&) const = default;
};
struct LinkId {
  std::int32_t value = -1;
  auto operator<=>(const LinkId&) const = default;
};
struct Rank {
  std::int32_t value = -1;
  auto operator<=>(const Rank&) const = default;
};

enum class DeviceKind { kGpu, kNvSwitch, kPcieSwitch, kCpu, kNic, kSwitch };
// kEfa: AWS's Elastic Fabric Adapter (SRD on AWS's Ethernet fabric), reached through the
// aws-ofi-nccl network plugin rather than NCCL's own IB or socket transport.
enum class LinkKind { kNvLink, kNvSwitch, kPcie, kSmp, kIb, kRoce, kEthernet, kC2c, kEfa };

std::string_view to_string(DeviceKind k);
std::string_view to_string(LinkKind k);
// Parses the YAML spellings ("gpu", "nvswitch", "pcie_switch", "cpu", "nic", "switch"; "nvlink",
// "nvswitch", "pcie", "smp", "ib", "roce", "ethernet", "c2c", "efa"); nullopt-like false on
// failure.
bool parse_device_kind(std::string_view s, DeviceKind& out);
bool parse_link_kind(std::string_view s, LinkKind& out);
// True for the kinds that cross the inter-node network.
bool is_network(LinkKind k);
// NVLink, NVSwitch and C2C: the links routing prefers inside a node or NVLink domain.
bool is_nvlink_class(LinkKind k);

// What collsim knows about a GPU model: its architecture and native links. Values come from the
// model catalogue in gpu_models.cpp, each with its datasheet citation.
struct GpuModel {
  std::string name;            // "H100-SXM"
  int sm = 0;                  // compute capability x10: 80 = Ampere, 90 = Hopper, 100 = Blackwell
  int nvlinks = 0;             // NVLink ports per GPU (0: none)
  Bandwidth nvlink_bandwidth;  // per port, per direction
  Bandwidth pcie_bandwidth;    // host interface x16, per direction
  Bandwidth memory_bandwidth;  // device memory, the datasheet's peak; 0: the architecture's
};

struct Device {
  DeviceId id;
  DeviceKind kind = DeviceKind::kGpu;
  std::string name;     // unique, e.g. "node0/gpu3", "leaf2", "spine0"
  int node = -1;        // owning node; -1 for network switches shared by nodes
  int local_index = 0;  // index among devices of this kind on its node (GPU 3 of node 0 -> 3)
  int model = -1;       // GPUs: index into the topology's GPU models
  bool p2p = true;      // PCIe switches: whether peer-to-peer traffic may turn here
};

struct Link {
  LinkId id;
  DeviceId src;
  DeviceId dst;
  LinkKind kind = LinkKind::kPcie;
  Bandwidth bandwidth;  // per direction
  Time latency;
  LinkId reverse;  // the opposite direction of the same cable
};

}  // namespace collsim
