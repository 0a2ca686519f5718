// The what-if options every predicting command shares (docs/cli.md, "What-if faults"):
//   --degrade TARGET:FRACTION[+LATENCY]   a link or class of links at a fraction of its rate
//   --straggler TARGET:FACTOR             a GPU or node FACTOR times slower
//   --fail NIC                            a NIC gone; its GPUs move to the node's other NICs
//   --faults FILE                         a YAML `faults:` list (topology/faults.hpp)
//
//   FaultArgs f;  add_fault_options(cmd, f);
//   apply_faults(topo, f.faults());      // RequestError / ConfigError on bad input
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

  // The files' faults first, then --degrade, --straggler and --fail in the order given.
  std::vector<Fault> faults() const;
};

void add_fault_options(CLI::App& cmd, FaultArgs& f);

}  // namespace collsim
