// What `predict`, `trace`, `sweep` and `compare` share: the options that name one collective on
// one cluster, and turning them into a topology, a request and the allowed algorithm x protocol
// choices (docs/cli.md).
//
//   CollectiveArgs a;                 // filled by add_collective_options(cmd, a)
//   Prepared p = prepare(a);          // RequestError for bad names, sizes, combinations
//   Evaluator ev(p, model_args);      // evaluator.hpp: costs and resolves `auto`
//   Choice c = ev.choose(p.request.count);
//
// --algo and --proto default to auto and take NCCL_ALGO / NCCL_PROTO-style lists too
// (algorithms/selection.hpp); --channels defaults to the runtime channel count NCCL would use on
// this cluster (twice its ring search's channels, 24 on a DGX-H100; docs/nccl-model.md §1.7). Cost
// parameters are the NCCL-sourced defaults of the cluster's GPU architecture
// (simulator/cost_params.hpp).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "algorithms/registry.hpp"
#include "algorithms/selection.hpp"
#include "cli/request_options.hpp"
#include "simulator/simulate.hpp"
#include "topology/topology.hpp"

namespace collsim {

// The shared request options (request_options.hpp) with --algo and --proto defaulting to auto
// and --channels to NCCL's count. Without `with_bytes`, no --bytes (sweeps take -b/-e/-f).
struct CollectiveArgs {
  RequestOptions req;
  CLI::Option* channels = nullptr;
};

void add_collective_options(CLI::App* cmd, CollectiveArgs& a, bool with_bytes = true);

// The cluster, the request (its algorithm and protocol placeholders until a choice is made; its
// count from --bytes, 0 without) and what --algo/--proto allow.
struct Prepared {
  Topology topo;
  Request request;
  AlgoChoice choice;
};
// RequestError for unknown names, a size that is not a whole number of elements, or (with
// --bytes) a size that gives no element to move (0 B, or less than one element per rank for
// AllGather-like collectives), except for Barrier.
Prepared prepare(const CollectiveArgs& a);

// Options for simulate() on this request: placement from the communicator, default costs.
SimOptions sim_options(const Prepared& p, SimNetwork network);

}  // namespace collsim
