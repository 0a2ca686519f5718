// Small hand-built clusters and requests shared by the simulator tests.
#pragma once

#include "algorithms/generators/registry.hpp"
#include "simulator/cost_params.hpp"
#include "topology/builder.hpp"
#include "topology/topology.hpp"

namespace collsim::test {

// p GPUs on one NVSwitch, each by a cable of `bw` and `latency` per direction: every GPU pair is
// two links apart (route latency 2 x latency), and no two GPUs share a directed link.
Topology star(int p, Bandwidth bw, Time latency);

// issue 17's speed cluster (bench/flat-switch.yaml) at `nodes`: single-GPU nodes on one
// non-blocking switch, so every GPU's downlink carries one ring channel from the rank before and
// another from the rank after.
Topology flat_switch(int nodes);

// A request on a flat communicator of `ranks`, 1-byte elements, one channel, Simple protocol.
Request request(Collective c, const std::string& algo, int ranks, std::uint64_t bytes,
                std::uint64_t chunk, int slices);

// Only the links: efficiency 1, no protocol latency, no caps, no launch; reductions at
// `reduce` (zero: free), copies free.
CostParams ideal(Bandwidth reduce = Bandwidth());

}  // namespace collsim::test
