// Faults as data: what-if changes applied to a loaded cluster before prediction (docs/cli.md,
// "What-if faults"; docs/diagnose.md).
//
//   Fault f = parse_fault(FaultKind::kDegrade, "node3/nic0:0.5");     // RequestError if malformed
//   std::vector<Fault> more = load_faults("faults.yaml");            // a `faults:` list
//   apply_faults(topo, {f});     // RequestError naming what exists for an unknown device or class
//
// Three kinds:
//  - degrade: the cables of a target keep `bandwidth` (a fraction of their rate, in (0, 1]) and
//    gain `latency` (a NIC trained down, a cable with errors, a congested uplink);
//  - straggler: a GPU, or every GPU of a node, runs `factor` times slower; collsim models it as
//    every cable of the GPU moving data `factor` times slower, since a slowed kernel (lower
//    clocks, thermal throttling) feeds and drains its links at its own pace;
//  - fail: a NIC is gone; as NCCL does, the GPUs that used it move their channels to the nearest
//    working NICs of their node; with none left the run cannot proceed (RequestError).
// Targets: a device name ("node3/nic0", "leaf2", "node0/gpu1": every cable of it), one cable
// "A--B" (both directions), or a class: "node3/nics" (every NIC of node 3), "rail2" (NIC 2 of
// every node, its network cables), "leaf0/uplinks" (a switch's cables to the switches above it),
// "node3/gpu2/nvlink" (a GPU's NVLink cables), "node3" (straggler: every GPU of node 3).
// A cluster's own YAML may carry a `faults:` list too (the loader applies it after building).
// GDR and PXN off are not faults here: the network's gdr and pxn settings own them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "topology/topology.hpp"
#include "topology/units.hpp"

namespace collsim {

class ConfigNode;

enum class FaultKind { kDegrade, kStraggler, kFail };
std::string_view to_string(FaultKind k);  // "degrade", "straggler", "fail"

struct Fault {
  FaultKind kind = FaultKind::kDegrade;
  std::string target;
  double bandwidth = 1.0;  // degrade: the fraction of the rate kept, in (0, 1]
  Time latency;            // degrade: added to every directed link of the target
  double factor = 1.0;     // straggler: how many times slower, >= 1
  bool operator==(const Fault&) const = default;
};

// "node3/nic0:0.5 (degrade)"-style text: what the command line takes back (to_flag) and the
// report prints.
std::string to_flag(const Fault& f);
std::string describe(const Fault& f);  // "node3/nic0 at 50% bandwidth, +2 us"

// The command-line forms: degrade TARGET:FRACTION, TARGET:+LATENCY or TARGET:FRACTION+LATENCY;
// straggler TARGET:FACTOR; fail TARGET. RequestError "--degrade node3/nic0:2: ..." otherwise.
Fault parse_fault(FaultKind kind, std::string_view text);

// A YAML file with a `faults:` list of {degrade: T, bandwidth: F, latency: L} |
// {straggler: T, factor: X} | {fail: T}; ConfigError at the offending node.
std::vector<Fault> load_faults(const std::string& file);
std::vector<Fault> parse_faults(const std::string& text, const std::string& file);
// The list itself, wherever it sits (a faults file, or a cluster config's `faults:` key).
std::vector<Fault> read_fault_list(const ConfigNode& list);

// The directed links a degrade or straggler target covers (both directions of each cable), in
// link-id order; RequestError naming what exists when the target does not.
std::vector<LinkId> fault_links(const Topology& topo, const Fault& f);

// Applies the faults in order. RequestError for an unknown target or a run that cannot proceed.
void apply_faults(Topology& topo, const std::vector<Fault>& faults);

}  // namespace collsim
