// The options every schedule-building command shares (docs/cli.md): CONFIG, --op, --bytes, --algo,
// --proto, --channels, --dtype, --redop, --root, --nodes, and how they become a Request.
//
//   auto opts = std::make_shared<RequestOptions>();
//   add_request_options(*cmd, *opts);              // registers the options on a subcommand
//   ... in the callback:
//   const Topology topo = opts->load();            // CONFIG with --nodes applied
//   Request r = opts->request(topo);               // RequestError on a bad size or name
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/ir/request.hpp"
#include "cli/fault_options.hpp"
#include "topology/topology.hpp"

namespace collsim {

// Loads CONFIG (a file or preset) with --nodes applied and the --costs overlays (written by
// `collsim calibrate`) layered over its own `costs:`, and checks every cost override at once, so
// every mistake in the files surfaces when they are loaded, whatever the command.
Topology load_cluster(const std::string& config, std::optional<int> nodes,
                      const std::vector<std::string>& cost_files = {}, bool default_costs = false,
                      const std::string& routing = {});

// Registers `--costs FILE...`: calibration overlays to layer over CONFIG's costs.
void add_costs_option(CLI::App& cmd, std::vector<std::string>& cost_files);
// --nodes N: a templated config at another node count, within the loader's cap.
void add_nodes_option(CLI::App& cmd, std::optional<int>& nodes);

struct RequestOptions {
  std::string config;
  std::optional<int> nodes;
  std::string routing;  // --routing: "" (the config's), dmodk, ecmp, adaptive
  std::vector<std::string> cost_files;
  FaultArgs faults;  // what-if faults applied by load()
  std::string op;
  std::string bytes;
  std::string algo = "ring";
  std::string proto = "simple";
  int channels = 1;
  std::string dtype = "f32";
  std::string redop = "sum";
  int root = 0;
  HostLoop host;  // --gpus-per-thread, --cuda-graph

  Topology load() const;
  // The request over all of the topology's GPUs. `--bytes` is nccl-tests' size column; it must be
  // a multiple of the element size (and, for the blocked collectives, of ranks x element size).
  Request request(const Topology& topo) const;
};

// Registers CONFIG, --nodes, --routing, the what-if fault options, --op (required), --dtype,
// --redop, --root, --channels, --gpus-per-thread, --cuda-graph, and,
// if `with_bytes`, --bytes (required); --algo and --proto with the given defaults.
void add_request_options(CLI::App& cmd, RequestOptions& opts, bool with_bytes = true);

}  // namespace collsim
