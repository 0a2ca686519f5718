// `collsim topo --svg FILE`: the cluster picture (topology/summary's DOT) laid out by Graphviz's
// `dot` (Debian: graphviz; scripts/install-deps.sh installs it).
//
//   write_topology_svg(topo, "cluster.svg");   // Error when dot is missing or fails
#pragma once

#include <string>

#include "topology/topology.hpp"

namespace collsim {

// Runs `dot -Tsvg` (found on PATH, no shell) on the DOT text. Error "--svg needs Graphviz's dot,
// which is not installed ..." when there is none, and dot's first error line when it fails.
void write_topology_svg(const Topology& topo, const std::string& path);

}  // namespace collsim
