// Loading a cluster description: a YAML file, or a preset name from configs/.
//
//   Topology t = load_topology("dgx-h100");                       // configs/dgx-h100.yaml
//   Topology big = load_topology("h100-16node-ib", {.nodes = 64});  // same fabric, 64 nodes
//   Topology custom = load_topology("my-cluster.yaml");
//
// Two forms are accepted (docs/config.md describes every key):
//  - templated: `nodes:`, a `node:` template (GPUs, NVLink fabric, PCIe tree, CPUs, NICs) and a
//    `network:` (single_switch, fat_tree or rail_optimized);
//  - explicit: `devices:` and `links:` listed one by one, with an optional `ranks:` order.
// Every mistake is a ConfigError "file:line:col: key.path: what was expected".
#pragma once

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "topology/topology.hpp"

namespace collsim {

class ConfigNode;

struct LoadOptions {
  // Overrides a templated config's node count (the fabric grows with it); an error on an
  // explicit config.
  std::optional<int> nodes = std::nullopt;
  // Calibration overlays (written by `collsim calibrate`) layered over the config's own `costs:`,
  // in order: YAML files with a required `costs:` mapping and an optional `calibration:` record
  // of how it was fitted. Every `costs:` mapping is read and checked at load (cost_schema.hpp).
  std::vector<std::string> cost_files = {};
  // Leaves out the config's own `costs:` block (it is still read and checked): the simulator's
  // NCCL-sourced defaults, as a calibration starts from (`collsim calibrate --default-costs`).
  bool default_costs = false;
  // Overrides a templated config's network.routing (fat_tree and rail_optimized networks only;
  // an error elsewhere), so one preset compares routing schemes.
  std::optional<Routing> routing = std::nullopt;
  // The most GPUs a templated config may describe: 2^20 by default, the same bound as the node
  // count's, so that nodes x gpus (up to 2^20 x 4096 in the YAML) and rank x channel products
  // stay far inside an int. A fuzzer lowers it so every input loads in bounded time.
  long long max_gpus = kMaxGpus;
  static constexpr long long kMaxGpus = 1 << 20;
};

// A stream's whole text, or nullopt once it passes `limit` bytes (what every reader of a
// user-named file uses, so that /dev/zero fails at once instead of filling memory).
std::optional<std::string> read_at_most(std::istream& in, std::size_t limit);

// The largest config or overlay file read (a ConfigError beyond it).
inline constexpr std::size_t kMaxConfigBytes = std::size_t{16} << 20;

// `config` is a path to a YAML file, the name of a preset (a file in the preset directory), or
// "-" for standard input.
Topology load_topology(const std::string& config, const LoadOptions& options = {});
// Parses YAML text; `file` is only used in error messages and as the default cluster name.
Topology parse_topology(const std::string& text, const std::string& file,
                        const LoadOptions& options = {});

// Where presets live: $COLLSIM_CONFIG_DIR if set, else the source tree's configs/ (compiled in).
std::string preset_directory();

// Reads one calibration overlay (see LoadOptions::cost_files): its `costs:` settings, located for
// errors ("cal.yaml:3:5: costs.protocols.simpel: unknown key; ...").
CostSettings load_cost_overlay(const std::string& file);
std::vector<std::string> preset_names();

}  // namespace collsim
