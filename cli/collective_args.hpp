// What `predict`, `trace`, `sweep` and `compare` share: the options that name one collective on
// one cluster, and turning them into a topology, a request and the allowed algorithm x protocol
// choices (docs/cli.md).
//
//   CollectiveArgs a;                 // filled by add_collective_options(cmd, a)
//   Prepared p = prepare(a);          // RequestError for bad names, sizes, combinations
//   Predictor ev(predict_setup(p, model_args));   // predict/predictor.hpp: resolves `auto`
//   Choice c = ev.choose(p.request.count);
//
// --algo and --proto default to auto and take NCCL_ALGO / NCCL_PROTO-style lists too
// (algorithms/models/selection.hpp); --channels defaults to the runtime channel count NCCL would
// use on this cluster (twice its ring search's channels, 24 on a DGX-H100; docs/nccl-model.md
// §1.7). Cost parameters are resolved once per command: the NCCL-sourced defaults of the cluster's
// GPU architecture, the config's `costs:` and every --costs overlay (simulator/cost_params.hpp).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "algorithms/generators/registry.hpp"
#include "algorithms/models/selection.hpp"
#include "cli/model_options.hpp"
#include "cli/request_options.hpp"
#include "predict/predictor.hpp"
#include "topology/topology.hpp"

namespace collsim {

// The shared request options (request_options.hpp) with --algo and --proto defaulting to auto
// and --channels to NCCL's count. Without `with_bytes`, no --bytes (sweeps take -b/-e/-f).
struct CollectiveArgs {
  RequestOptions req;
  CLI::Option* channels = nullptr;
};

void add_collective_options(CLI::App* cmd, CollectiveArgs& a, bool with_bytes = true);

// The cluster and its costs, the request (its algorithm and protocol placeholders until a
// choice is made; its count from --bytes, 0 without) and what --algo/--proto allow.
struct Prepared {
  Topology topo;
  CostParams costs;
  Request request;
  AlgoChoice choice;
  bool nccl_channels = false;  // request.channels is NCCL's channel count, not --channels
};
// RequestError for unknown names, a size that is not a whole number of elements, or (with
// --bytes) a size that gives no element to move (0 B, or less than one element per rank for
// AllGather-like collectives), except for Barrier.
Prepared prepare(const CollectiveArgs& a);

// What the predictor needs for this request under these --model/--select/--nccl-* options.
// RequestError for a malformed --nccl-* option, whether or not NCCL's model is used.
PredictSetup predict_setup(const Prepared& p, const ModelArgs& m);

}  // namespace collsim
