// The `costs:` schema: every key a config's `costs:` block or a calibration overlay may set, with
// its unit and bounds. One table, read by the config loader (read_cost_settings), written by
// `collsim calibrate` (write_cost_settings), searched by the fit (calibrate/cost_parameters.hpp)
// and applied by the simulator (simulator/cost_params.hpp, apply_cost_settings).
//
//   costs:
//     link_efficiency:            # usable fraction of line rate, per link kind
//       nvlink: 0.824             # nvlink nvswitch pcie smp ib roce ethernet c2c
//     host_staging: 1.0           # what a root port's PCIe links keep for host-staged data
//     reduce_bandwidth: 1.1TB/s   # γ = 1 / this; "free" for none
//     copy_bandwidth: 1.6TB/s     # local copies; "free" for none
//     nvls_bandwidth: 274GB/s     # NVSwitch reduction per GPU port (NVLS); "free" for none
//     p2p_channel_bandwidth: 20.5GB/s   # one channel of a send/recv (CTA); "none" for no cap
//     nvls_tree_channel_bandwidth: 16.2GB/s   # one NVLSTree channel (CTA); "none" for no cap
//     host_launch: 4.2us          # host time to issue one collective on one GPU
//     host_channel: 0.04us        # and for each NCCL channel it runs on
//     protocols:
//       simple:                   # ll ll128 simple
//         efficiency: 1.0         # payload / wire bytes
//         channel_bandwidth: 30GB/s   # per channel (CTA); "none" for no cap
//         launch: 8.4us           # once per collective
//         hop_latency: {nvlink: 2.8us, pcie: 4.7us, network: 13.4us}   # per piece, by route
//
// What each one means for the simulation is said in simulator/cost_params.hpp; docs/config.md
// documents the schema for users. Errors are ConfigErrors at the offending node:
//   x.yaml:4:7: costs.protocols.simpel: unknown key; expected one of ll, ll128, simple; did you
//   mean "simple"?
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collsim {

class ConfigNode;

// The protocols and route classes as the schema spells them, in the order of the simulator's
// Protocol and RouteClass enums (simulator/cost_params.cpp checks the order).
inline constexpr std::string_view kCostProtocols[] = {"ll", "ll128", "simple"};
inline constexpr std::string_view kCostRouteClasses[] = {"nvlink", "pcie", "network"};

enum class CostUnit { kTime, kRate, kFraction };

struct CostField {
  enum class Kind {
    kLaunch,
    kHopLatency,
    kEfficiency,
    kChannelBandwidth,
    kLinkEfficiency,
    kReduceBandwidth,
    kCopyBandwidth,
    kNvlsBandwidth,
    kP2pChannelBandwidth,
    kNvlsTreeChannelBandwidth,
    kHostLaunch,
    kHostChannel,
    kStepOverhead,
    kHostStaging,
  };
  Kind kind = Kind::kLaunch;
  int protocol = 0;  // index into kCostProtocols (protocol fields)
  int route = 0;     // index into kCostRouteClasses (hop latencies)
  int link = 0;      // LinkKind index (link efficiencies)

  std::string path() const;  // "protocols.simple.hop_latency.network"
  CostUnit unit() const;
  // The word that writes a zero rate ("none": no channel cap; "free": reductions and copies
  // cost nothing); empty where zero is not allowed.
  std::string_view zero_word() const;
  // Bounds of a value, in the units of CostSetting::value; a zero word is allowed besides.
  double lower() const;
  double upper() const;
  bool operator==(const CostField&) const = default;
};

// One value for one field: picoseconds for times, bytes per second for rates (0: the zero word),
// a plain number for fractions.
struct CostSetting {
  CostField field;
  double value = 0;
};
using CostSettings = std::vector<CostSetting>;

// Every field, in the order an overlay is written: link efficiencies, host staging, reduce, copy
// and NVLS
// bandwidths, the p2p channel bandwidth, the host's launch, then per protocol launch,
// efficiency, channel bandwidth and hop latencies.
const std::vector<CostField>& cost_fields();
std::optional<CostField> find_cost_field(std::string_view path);

// Reads a `costs:` mapping into settings, in the order of cost_fields(); ConfigError at the node
// for unknown keys, values of the wrong unit and values out of bounds.
CostSettings read_cost_settings(const ConfigNode& costs);

// "12.500us", "28.40GB/s", "0.8240", "none": how an overlay writes a value (read back exactly as
// far as the digits go).
std::string format_cost_value(const CostField& f, double value);

// Writes `costs:` and the nested mapping of `settings` (any order; written in the table's),
// each leaf followed by "    # comment" where its comment is not empty. No setting: "costs: {}".
struct CommentedSetting {
  CostSetting setting;
  std::string comment;
};
void write_cost_settings(std::ostream& out, const std::vector<CommentedSetting>& settings);

}  // namespace collsim
