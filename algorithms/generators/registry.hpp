// The algorithms collsim knows, what each implements, and plan(): request in, validated
// schedule out.
//
//   for (const AlgorithmInfo& a : algorithms()) std::cout << a.name << ": " << a.description;
//   Request r;  r.algorithm = "dbtree";  r.count = 1 << 20;  r.comm = Communicator::grid(4, 8);
//   Schedule s = plan(r);        // RequestError for unknown names / unsupported pairs,
//                                // ScheduleError if the generated schedule is invalid
//
// Every algorithm but NCCL's NVLS family and PAT (Simple only, as in NCCL) supports every
// protocol (the protocol sets the slot geometry and the default chunking). `auto` is resolved by
// the selector before plan(); plan() rejects it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "algorithms/ir/request.hpp"
#include "algorithms/ir/schedule.hpp"
#include "algorithms/ir/validate.hpp"
#include "algorithms/models/estimate.hpp"

namespace collsim {

// The NCCL kernel family an algorithm's schedule belongs to: what its trace's kernel is named
// after and, for rings, NCCL's step chunking of Simple (request.cpp).
// kNvls, kNvlsTree: the NVSwitch reduces (NVLS; NVLSTree, with a tree of the nodes), with NCCL's
// NVLS chunking (request.cpp), a channel's part cut into a block per GPU of a node (one head
// each).
// kPat: NCCL's PAT kernel, with its own chunking (request.cpp).
// kCollNetDirect, kCollNetChain: the network's switches reduce (InfiniBand SHARP), with NCCL's
// CollNet chunking (request.cpp); a channel's part is cut into a block per GPU of a node
// (direct) or pipelined whole (chain).
enum class Family { kRing, kTree, kNvls, kNvlsTree, kPat, kCollNetDirect, kCollNetChain, kOther };

// The NVLS family, either schedule: the NVSwitch reduces and multicasts.
constexpr bool is_nvls(Family f) { return f == Family::kNvls || f == Family::kNvlsTree; }

// CollNet, either schedule: the network's switches reduce (InfiniBand SHARP).
constexpr bool is_collnet(Family f) {
  return f == Family::kCollNetDirect || f == Family::kCollNetChain;
}

// Everything collsim knows of an algorithm, so that no code elsewhere compares its name.
struct AlgorithmInfo {
  std::string name;
  std::string description;
  std::vector<Collective> collectives;
  std::vector<Protocol> protocols;
  Schedule (*generate)(const Request&) = nullptr;
  ClosedForm closed_form = nullptr;  // its α-β form (estimate.hpp); none: --model alpha-beta
                                     // says so
  Family family = Family::kOther;
  // Costed per level by the closed forms: an intra-node and an inter-node hop (alpha_beta_cost).
  bool hierarchical = false;
  // Needs the same number of ranks on every node (block b or local rank b of every node meets
  // its peers): predict does not offer it on a communicator of unequal nodes.
  bool equal_nodes = false;
  // The pairs of ranks one channel of its schedule for `r` connects, where they grow faster than
  // the ranks (every rank with every other); none: a few per rank.
  std::uint64_t (*connected_pairs)(const Request&) = nullptr;

  bool implements(Collective c) const;
};

// The most pairs of ranks a simulation connects on one channel (connected_pairs): those of an
// AllToAll on 2,048 ranks. Each pair is a connection with its route and FIFO, about 730 bytes;
// that AllToAll, 4,192,256 pairs, took 3.1 GB and 67 s on the 2-core development machine
// (docs/scale.md), and both grow with the square of the ranks. Beyond it the simulation is
// refused, the closed form named, rather than run for many minutes or exhaust the memory.
inline constexpr std::uint64_t kMaxAllPairsRanks = 2048;
inline constexpr std::uint64_t kMaxConnectedPairs = kMaxAllPairsRanks * (kMaxAllPairsRanks - 1);
// `r`'s algorithm's connected_pairs, 0 where it has none.
std::uint64_t connected_pairs(const Request& r);

// In the order `collsim list` prints them.
const std::vector<AlgorithmInfo>& algorithms();
// Throws RequestError for an unknown name (listing the known ones, with "did you mean").
const AlgorithmInfo& find_algorithm(std::string_view name);
// nullptr for a name collsim does not generate (NCCL's NVLS, PAT, ... or a typo).
const AlgorithmInfo* find_algorithm_or_null(std::string_view name);
// Names of the algorithms implementing `c`.
std::vector<std::string> algorithms_for(Collective c);

// Checks the request (RequestError: unknown or unsupported algorithm, channels < 1, root out of
// range, count too large), generates the schedule and validates it (ScheduleError).
Schedule plan(const Request& r, const ValidateOptions& validation = {});
// The same without validation (for benchmarks and for tests of the validator itself).
Schedule generate(const Request& r);

// The `collsim list` matrix: one row per algorithm, one column per collective, each cell the
// protocols supported ("ll ll128 simple") or "-". With `only`, just that collective's column.
std::string format_algorithm_matrix(std::optional<Collective> only = std::nullopt);

}  // namespace collsim
