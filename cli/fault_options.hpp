// The what-if options every predicting command shares (docs/cli.md, "What-if faults"):
//   --degrade TARGET:FRACTION[+LATENCY]   a link or class of links at a fraction of its rate
//   --straggler TARGET:FACTOR             a GPU or node FACTOR times slower
//   --fail NIC                            a NIC gone; its GPUs move to the node's other NICs
//   --faults FILE                         a YAML `faults:` list (topology/faults.hpp)
//   --gdr on|off, --pxn on|off            GPUDirect RDMA and PXN, over the config's setting
//
//   FaultArgs f;  add_fault_options(cmd, f);
//   f.apply(topo);                       // RequestError / ConfigError on bad input
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "topology/faults.hpp"

namespace collsim {

struct FaultArgs {
  std::vector<std::string> degrade;
  std::vector<std::string> straggler;
  std::vector<std::string> fail;
  std::vector<std::string> files;
  std::string gdr;  // "", "on" or "off"
  std::string pxn;

  // The files' faults first, then --degrade, --straggler and --fail in the order given.
  std::vector<Fault> faults() const;
  // Applies the faults, then --gdr and --pxn, to a loaded cluster.
  void apply(Topology& topo) const;
};

void add_fault_options(CLI::App& cmd, FaultArgs& f);

}  // namespace collsim
