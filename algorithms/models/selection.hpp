// Automatic algorithm and protocol selection: what `--algo` / `--proto` allow, and the two
// policies that pick among them (docs/cli.md, `--algo auto --proto auto --select best|nccl`).
//
//   AlgoChoice allowed = parse_algo_choice("auto", "^LL128");     // NCCL_PROTO syntax
//   std::vector<Candidate> cs = candidates(Collective::kAllReduce, allowed);
//   // best: the fastest by a cost the caller supplies (collsim's simulator, in cli/)
//   auto s = select_best(cs, [&](const Candidate& c) { return my_time_us(c); });
//   // nccl: what NCCL's tuning model picks, mapped onto an algorithm collsim can run
//   NcclModel m(input);
//   Selection n = select_nccl(m, Collective::kAllReduce, 1 << 20, allowed, true);
//   // n.chosen == {"ring", kLL}; n.nccl_pick == "Ring/LL"
//
// What --algo accepts: "auto"; one algorithm name; or an NCCL_ALGO-style list: comma-separated,
// optionally negated by a leading '^' ("ring,tree", "^tree", "NVLS"). Every algorithm has one
// name (`collsim list`: ring, dbtree, bintree, ring2d, rhd, direct, binomial, nvls, nvls_tree,
// pat, and NCCL's collnet_direct, collnet_chain), and NCCL's spellings in any case are aliases
// of exactly one of them, alone as in a list: Tree is dbtree, NVLSTree nvls_tree,
// CollNetDirect collnet_direct. --proto: "auto", one protocol, or an
// NCCL_PROTO-style list ("LL,LL128", "^LL128"). Unknown names throw RequestError listing the
// accepted ones.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/ir/types.hpp"
#include "algorithms/models/nccl_model.hpp"

namespace collsim {

enum class SelectPolicy {
  kBest,  // the fastest by collsim's own model (whichever --model is in use)
  kNccl,  // what NCCL would pick, by NCCL's tuning model
};
SelectPolicy parse_select_policy(std::string_view text);  // "best" | "nccl"
std::string_view to_string(SelectPolicy p);

struct Candidate {
  std::string algorithm;  // collsim's name ("ring", "dbtree", ..., or "nvls" under --model nccl)
  Protocol protocol = Protocol::kSimple;
  bool operator==(const Candidate&) const = default;
};
std::string to_string(const Candidate& c);  // "ring/ll"

// What --algo and --proto allow.
struct AlgoChoice {
  bool algo_auto = true;  // --algo auto (or a list: still a choice to make)
  bool proto_auto = true;
  std::vector<std::string> algorithms;  // allowed collsim names, in `collsim list` order, then
                                        // NCCL-only ones (collnet_*)
  std::vector<Protocol> protocols;      // allowed, in ll, ll128, simple order
  NcclFilter nccl;                      // the same, in NCCL's terms
  // Exactly one algorithm and one protocol: nothing to select.
  bool fixed() const { return algorithms.size() == 1 && protocols.size() == 1; }
};
AlgoChoice parse_algo_choice(std::string_view algo, std::string_view proto);
// The one name of the algorithm `name` stands for: a collsim name as is, NCCL's spellings in any
// case ("Tree" -> "dbtree"). RequestError listing the names otherwise.
std::string canonical_algorithm(std::string_view name);

// Whether `algorithm` is one of collsim's algorithms (its registry's names). Every NCCL
// algorithm is one (collsim_algorithm maps each to its generator).
bool simulable(std::string_view algorithm);

// The allowed algorithm x protocol pairs that implement `c`, algorithms in the order of
// `allowed.algorithms`, protocols ll, ll128, simple. Throws RequestError when none is left,
// saying which algorithms implement `c`.
std::vector<Candidate> candidates(Collective c, const AlgoChoice& allowed);

struct Selection {
  Candidate chosen;
  double time_us = 0;     // by the policy's model: collsim's cost for best, NCCL's for nccl
  std::string nccl_pick;  // nccl policy: NCCL's own choice, "Ring/LL" (may differ from chosen)
  std::string note;       // why chosen differs from NCCL's pick, or how NCCL decides here
};

// The policy `best`: the arg-min of `time_us` over `cs` (nullopt entries are skipped; ties keep
// the first). nullopt when no candidate has a time.
using CostFunction = std::function<std::optional<double>(const Candidate&)>;
std::optional<Selection> select_best(const std::vector<Candidate>& cs, const CostFunction& time_us);

// The policy `nccl`: NCCL's arg-min for `bytes` (nccl-tests' size column) under `allowed`.
//  - AllReduce, AllGather, ReduceScatter, Broadcast, Reduce: NcclModel::best, which collsim
//    simulates as it is (every NCCL algorithm has a generator).
//  - AllToAll, Gather, Scatter, SendRecv: NCCL runs these as point-to-point sends, LL up to
//    16 KiB per peer message and channel (NCCL_P2P_LL_THRESHOLD, docs/nccl-model.md §1.1): up to
//    p2pnChannelsPerPeer x 16 KiB a peer before 2.29, 16 KiB from it; Simple above: chosen =
//    direct with that protocol; time_us = 0 (NCCL has no cost model for p2p).
//  - Barrier: NCCL has none; RequestError.
// A reducing collective whose operator or type NVLS cannot reduce (nccl_nvls_reduces) runs
// neither NVLS nor NVLSTree, as in NCCL.
// RequestError when the filter leaves NCCL nothing it would run.
struct NcclOperands {
  ReduceOp redop = ReduceOp::kSum;
  DataType dtype = DataType::kF32;
};
Selection select_nccl(const NcclModel& m, Collective c, std::uint64_t bytes,
                      const AlgoChoice& allowed, NcclOperands operands = {});

// NCCL's spelling of a protocol, as NCCL_PROTO and its logs write it: LL, LL128, Simple.
std::string_view nccl_protocol_name(Protocol p);

// The NCCL algorithm of a collsim name, if NCCL has one (ring -> Ring, dbtree -> Tree, ...).
std::optional<NcclAlgo> nccl_algo_of(std::string_view algorithm);

// Crossovers: given the winner at each size of a sweep (ascending sizes), the size ranges over
// which each candidate wins, in words:
//   "ring/ll is best up to 512 KiB; dbtree/ll128 from 1 MiB to 16 MiB; ring/simple from 32 MiB"
// and one sentence per change of winner, in the form of the issue:
//   "dbtree/ll128 beats ring/ll from 1 MiB (ring/ll best below)".
struct SizedWinner {
  std::uint64_t bytes = 0;
  std::string winner;  // e.g. "ring/ll"
};
std::string describe_best_ranges(const std::vector<SizedWinner>& winners);
std::vector<std::string> describe_crossovers(const std::vector<SizedWinner>& winners);

// Sizes for messages: "512 B", "64 KiB", "1.5 MiB", "8 GiB" (binary units, at most 3 digits
// before the point, trailing zeros dropped).
std::string human_bytes(std::uint64_t bytes);

}  // namespace collsim
