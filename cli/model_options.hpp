// The options that say how a collective is costed and how `auto` is resolved, shared by
// predict, sweep, compare and trace (docs/cli.md):
//   --model sim|contention-free|alpha-beta|nccl   which model gives the times
//   --select best|nccl                            the policy for --algo/--proto auto
//   --nccl-version 2.26.2                         NCCL's release: its channel division and
//   constants
//   --nccl-graph ring=8x24,tree=8x24[,nvls=8x40/60|none]
//                                                 NCCL's graph search results (channels x GB/s
//                                                 per channel, intra/inter), as NCCL's GRAPH log
//                                                 prints them; default: estimated from the links
//   --nccl-tree-pattern balanced|split|tree       "tree" = the tree graph fell back to pattern
//                                                 TREE (x0.85 in NCCL's model)
//   --nccl-cpu intel|amd|other                    the host CPU (NCCL's LL caps, net overhead)
//   --env NCCL_NVLS_ENABLE=0 ...                  NCCL's environment (calibrate/nccl_env.hpp)
//
//   ModelArgs m;  add_model_options(cmd, m, all_models());
//   NcclModel nccl(nccl_input(m, topo, comm));    // RequestError for a malformed --nccl-graph
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/ir/communicator.hpp"
#include "algorithms/models/nccl_model.hpp"
#include "algorithms/models/selection.hpp"
#include "predict/predict.hpp"
#include "topology/topology.hpp"

namespace collsim {

struct ModelArgs {
  std::string model = "sim";
  // What a user comparing with nccl-tests expects: the algorithm NCCL would run. --select best
  // asks for collsim's fastest instead.
  std::string select = "nccl";
  CLI::Option* select_option = nullptr;  // set by add_model_options: was --select given?
  std::string nccl_version = "2.30";
  std::string nccl_graph;
  std::string nccl_tree_pattern = "balanced";
  CLI::Option* tree_pattern_option = nullptr;  // given explicitly: overrides --nccl-log
  std::string nccl_log;  // NCCL_DEBUG=INFO output: its graphs (import/nccl_graph_log)
  std::string nccl_cpu = "intel";
  bool line_forwarding = false;  // --line-forwarding: CostParams::line_forwarding
  // --env VAR=VALUE: NCCL's environment for the prediction (the variables collsim acts on,
  // calibrate/nccl_env.hpp), checked as it is read.
  std::vector<std::string> env;

  SelectPolicy policy() const { return parse_select_policy(select); }
  bool select_given() const { return select_option != nullptr && select_option->count() > 0; }
};

// Registers --model (restricted to `models`, by their names in predict/predict.hpp, the first
// being the default), --select (default `select`: compare and scale time every candidate and mark
// the fastest beside NCCL's pick, so they keep best) and the --nccl-* options.
void add_model_options(CLI::App* cmd, ModelArgs& m, const std::vector<Model>& models,
                       std::string_view select = "nccl");
// --line-forwarding, for commands that register it without the rest (validate).
void add_line_forwarding_flag(CLI::App* cmd, bool& on);
// "--model sim, contention-free, ..." as the help lists them.
std::vector<std::string> model_names(const std::vector<Model>& models);

// "NCCL_MIN_NCHANNELS=32" as --env gives it, the value checked where collsim acts on the
// variable (a channel count, a size, 0 or 1, an algorithm list): RequestError otherwise.
std::pair<std::string, std::string> nccl_env_assignment(const std::string& item);
// --env as NCCL reads its environment: the last value of a variable given twice.
std::map<std::string, std::string> nccl_env(const ModelArgs& m);

// --nccl-version read (RequestError naming the option otherwise): the release whose division
// of a collective among channels, and whose tuning constants, the prediction follows.
NcclRelease nccl_release(const ModelArgs& m);

// NCCL's model inputs for this cluster: nccl_model_input() with the --nccl-* overrides applied.
NcclModelInput nccl_input(const ModelArgs& m, const Topology& topo, const Communicator& comm);

// "ring=8x24,tree=8x24,nvls=8x40/60" applied to `in` (RequestError naming the option otherwise).
void apply_nccl_graph(std::string_view text, NcclModelInput& in);

}  // namespace collsim
