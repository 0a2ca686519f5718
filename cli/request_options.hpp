// The options every schedule-building command shares (CLI.md): CONFIG, --op, --bytes, --algo,
// --proto, --channels, --dtype, --redop, --root, --nodes, and how they become a Request.
//
//   auto opts = std::make_shared<RequestOptions>();
//   add_request_options(*cmd, *opts);              // registers the options on a subcommand
//   ... in the callback:
//   const Topology topo = opts->load();            // CONFIG with --nodes applied
//   Request r = opts->request(topo);               // RequestError on a bad size or name
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "algorithms/request.hpp"
#include "topology/topology.hpp"

namespace collsim {

// Loads CONFIG (a file or preset) with --nodes applied and checks its `costs:` overrides at
// once, so every mistake in the file surfaces when it is loaded, whatever the command.
Topology load_cluster(const std::string& config, std::optional<int> nodes);

struct RequestOptions {
  std::string config;
  std::optional<int> nodes;
  std::string op;
  std::string bytes;
  std::string algo = "ring";
  std::string proto = "simple";
  int channels = 1;
  std::string dtype = "f32";
  std::string redop = "sum";
  int root = 0;

  Topology load() const;
  // The request over all of the topology's GPUs. `--bytes` is nccl-tests' size column; it must be
  // a multiple of the element size (and, for the blocked collectives, of ranks x element size).
  Request request(const Topology& topo) const;
};

// Registers CONFIG, --nodes, --op (required), --dtype, --redop, --root, --channels, and, if
// `with_bytes`, --bytes (required); --algo and --proto with the given defaults.
void add_request_options(CLI::App& cmd, RequestOptions& opts, bool with_bytes = true);

}  // namespace collsim
