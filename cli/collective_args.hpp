// What `predict` and `trace` share: the options that name one collective on one cluster, and
// turning them into a topology, a request and a schedule (CLI.md).
//
//   CollectiveArgs a;                 // filled by add_collective_options(cmd, a)
//   Planned p = plan_collective(a, Protocol::kSimple);
//   Result r = simulate(p.schedule, p.topo, p.sim);
//
// Defaults: --algo auto is ring until issue 5 brings selection; --proto auto picks the fastest
// protocol for the chosen model (predict) or Simple (trace); --channels defaults to the runtime
// channel count NCCL would use on this cluster (twice its ring search's channels, 24 on a
// DGX-H100; nccl_model.md §1.7). Cost parameters are the NCCL-sourced defaults of the cluster's
// GPU architecture (simulator/cost_params.hpp).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "algorithms/registry.hpp"
#include "cli/request_options.hpp"
#include "simulator/simulate.hpp"
#include "topology/topology.hpp"

namespace collsim {

// The shared request options (request_options.hpp) with --algo and --proto defaulting to auto
// and --channels to NCCL's count.
struct CollectiveArgs {
  RequestOptions req;
  CLI::Option* channels = nullptr;
};

void add_collective_options(CLI::App* cmd, CollectiveArgs& a);

// The cluster and the request, before the protocol is fixed.
struct Prepared {
  Topology topo;
  Request request;        // protocol still to be set
  std::string algo_note;  // e.g. "auto: ring until algorithm selection arrives (issue 5)"
  bool proto_auto = false;
};
Prepared prepare(const CollectiveArgs& a);

// Options for simulate() on this request: placement from the communicator, default costs.
SimOptions sim_options(const Prepared& p, SimNetwork network);

}  // namespace collsim
