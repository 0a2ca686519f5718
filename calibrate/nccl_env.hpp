// NCCL's environment variables as collsim reads a measured run's (a log's "# env:" line, the
// launcher's -x, an NCCL_DEBUG=INFO echo, or --env): for each variable NCCL reads, whether collsim
// does what NCCL does with it, whether the cluster's config describes it instead, whether it
// changes nothing a collective costs, or whether it changes what NCCL does in a way collsim does
// not model. A run that set one of the last kind is said to the user, with its value: its rows are
// predicted as NCCL runs with that variable's default.
//
//   const NcclEnvVar* v = find_nccl_env("NCCL_BUFFSIZE");          // kNotModelled, "4194304"
//   std::vector<std::string> said = unmodelled_nccl_env(file.env, Collective::kAllReduce,
//                                                       /*across_nodes=*/true, release);
//   // {"NCCL_BUFFSIZE=16777216", "NCCL_IB_QPS_PER_CONNECTION=4"}
//
// Defaults are NCCL's own (its NCCL_PARAM declarations, src/ of each release, cited per entry in
// nccl_env.cpp); a variable set to the default of the run's release is not reported.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/ir/types.hpp"
#include "algorithms/models/nccl_model.hpp"
#include "algorithms/models/nccl_release.hpp"

namespace collsim {

enum class NcclEnvRole {
  kActs,         // collsim does what NCCL does with it (NCCL_ALGO, NCCL_NVLS_CHUNKSIZE, ...)
  kConfig,       // the cluster's config describes what it selects (NCCL_IB_HCA: node.nics)
  kNoCost,       // it changes nothing a collective costs (NCCL_DEBUG, NCCL_SOCKET_IFNAME, ...)
  kNotModelled,  // it changes what NCCL does; collsim predicts NCCL's default instead
};

// Which collectives a variable can change at all.
enum class NcclEnvScope {
  kAll,
  kAcrossNodes,  // the network transport: only a run whose ranks span nodes
  kPointToPoint  // NCCL's p2p kernel: AllToAll, Gather, Scatter, SendRecv
};

struct NcclEnvVar {
  std::string_view name;
  NcclEnvRole role;
  NcclEnvScope scope = NcclEnvScope::kAll;
  // NCCL's default value as the variable is written ("" where NCCL computes it); from
  // `changed_in` (a minor release, 0: never changed) the default is `default_from` instead.
  std::string_view default_value = "";
  int changed_in = 0;
  std::string_view default_from = "";
};

// The catalogue entry of an NCCL_* variable, nullptr for one collsim does not know.
const NcclEnvVar* find_nccl_env(std::string_view name);

// The variables of a run's environment whose effect on `c` collsim does not model, each as
// "NAME=VALUE" in name order: those of kind kNotModelled within their scope and set to other than
// the release's default, and NCCL_* names collsim does not know (with " (unknown to collsim)").
std::vector<std::string> unmodelled_nccl_env(const std::map<std::string, std::string>& env,
                                             Collective c, bool across_nodes, NcclRelease release);

// What the variables collsim acts on (besides NCCL_ALGO and NCCL_PROTO, which narrow the choice)
// say of a communicator; unset where the environment does not set them or sets a value NCCL
// would not take.
struct NcclEnvSettings {
  std::optional<int> min_nchannels, max_nchannels, min_ctas, max_ctas, nvls_nchannels;
  std::optional<std::uint64_t> nvls_chunk, nvls_tree_max_chunk;
  bool nvls_off = false;     // NCCL_NVLS_ENABLE=0
  bool collnet_off = false;  // NCCL_COLLNET_ENABLE=0

  // comm->nChannels from NCCL's own count: within NCCL_MIN/MAX_NCHANNELS and NCCL_MIN/MAX_CTAS,
  // all held to MAXCHANNELS `most` (`src/graph/connect.cc`, "limiting to").
  int comm_channels(int nccl, int most) const;
  // comm->nvlsChannels: max(minCTAs, min(maxCTAs, NCCL_NVLS_NCHANNELS or NCCL's `nccl`))
  // (`src/transport/nvls.cc`, `src/init.cc`); NCCL_MIN_NCHANNELS leaves it alone.
  int nvls_channels(int nccl, int most) const;
  // NCCL's model input as the variables set it: NVLS (and NVLSTree) off, CollNet off (and NVLS
  // across nodes with it), NVLS's channels, chunk and NVLSTree's largest chunk (NCCL_NVLS_CHUNKSIZE
  // and NCCL_NVLSTREE_MAX_CHUNKSIZE override Blackwell's tuning, `ncclNvlsTuning` in v2.30.4).
  void apply(NcclModelInput& in, int most) const;
};
NcclEnvSettings nccl_env_settings(const std::map<std::string, std::string>& env);

// A channel count as NCCL's count variables take it (NCCL_MIN_NCHANNELS=32): the whole value a
// positive integer, nullopt otherwise.
std::optional<int> nccl_env_count(std::string_view value);

// A byte count as NCCL's size variables take it (NCCL_NVLS_CHUNKSIZE=131072); a curated file's
// "512KiB" is read as collsim's sizes are (topology/units.hpp). nullopt for anything else or 0.
std::optional<std::uint64_t> nccl_env_bytes(std::string_view value);

}  // namespace collsim
