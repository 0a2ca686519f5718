#include "algorithms/generators/registry.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "algorithms/generators/generator.hpp"
#include "topology/error.hpp"

namespace collsim {

namespace {

using C = Collective;

std::vector<AlgorithmInfo> build_table() {
  const std::vector<Protocol> all = all_protocols();
  return {
      {"ring",
       "NCCL's ring: reduce-scatter + all-gather; pipelined chain for broadcast/reduce",
       {C::kAllReduce, C::kReduceScatter, C::kAllGather, C::kBroadcast, C::kReduce},
       all,
       &detail::make_ring,
       &closed_form::ring,
       Family::kRing,
       false},
      {"bintree",
       "pipelined binary tree over all ranks: reduce up, broadcast down (collsim's; not "
       "NCCL's Tree, which is dbtree)",
       {C::kAllReduce, C::kBroadcast, C::kReduce},
       all,
       &detail::make_tree,
       &closed_form::tree,
       Family::kTree,
       false},
      {"dbtree",
       "NCCL's double binary tree across nodes, chain inside each node",
       {C::kAllReduce},
       all,
       &detail::make_dbtree,
       &closed_form::dbtree,
       Family::kTree,
       true},
      {"ring2d",
       "hierarchical ring: intra-node reduce-scatter, inter-node ring, intra all-gather",
       {C::kAllReduce, C::kAllGather, C::kReduceScatter},
       all,
       &detail::make_ring2d,
       &closed_form::ring2d,
       Family::kRing,
       true,
       true},
      {"rhd",
       "recursive halving-doubling (Rabenseifner), any rank count",
       {C::kAllReduce, C::kReduceScatter, C::kAllGather},
       all,
       &detail::make_rhd,
       &closed_form::rhd,
       Family::kOther,
       false},
      {"direct",
       "pairwise exchange: every pair talks directly",
       {C::kAllToAll, C::kGather, C::kScatter, C::kAllGather, C::kSendRecv},
       all,
       &detail::make_direct,
       &closed_form::direct,
       Family::kOther,
       false,
       false,
       &detail::direct_pairs},
      {"binomial",
       "binomial trees; dissemination barrier",
       {C::kBroadcast, C::kReduce, C::kGather, C::kScatter, C::kBarrier},
       all,
       &detail::make_binomial,
       &closed_form::binomial,
       Family::kOther,
       false},
      {"nvls",
       "NVLink SHARP: the NVSwitch reduces and multicasts (NCCL's NVLS; across nodes with the "
       "InfiniBand switches reducing between them)",
       {C::kAllReduce, C::kReduceScatter, C::kAllGather},
       {Protocol::kSimple},  // NCCL runs NVLS with Simple only (enqueue.cc, tuning.cc)
       &detail::make_nvls,
       &closed_form::nvls,
       Family::kNvls,
       true,
       true},
      {"nvls_tree",
       "NVLink SHARP in each node, a tree between the nodes (NCCL's NVLSTree AllReduce)",
       {C::kAllReduce},
       {Protocol::kSimple},  // NVLS family: Simple only, as NCCL
       &detail::make_nvls_tree,
       &closed_form::nvls_tree,
       Family::kNvlsTree,
       true,
       true},
      {"pat",
       "NCCL's PAT: Bruck's log-step trees, far dimensions first (one GPU per node in NCCL)",
       {C::kAllGather, C::kReduceScatter},
       {Protocol::kSimple},  // NCCL runs PAT with Simple only (tuning.cc)
       &detail::make_pat,
       &closed_form::pat,
       Family::kPat,
       false},
      {"collnet_direct",
       "InfiniBand SHARP: the switches reduce (AllGather: gather) across nodes, every GPU a head "
       "with its own NIC (NCCL's CollNetDirect)",
       {C::kAllReduce, C::kAllGather, C::kReduceScatter},
       {Protocol::kSimple},  // NCCL runs CollNet with Simple only (tuning.cc)
       &detail::make_collnet_direct,
       &closed_form::collnet_direct,
       Family::kCollNetDirect,
       true,
       true},
      {"collnet_chain",
       "InfiniBand SHARP: the switches reduce across nodes, a chain of the node's GPUs to each "
       "channel's head (NCCL's CollNetChain)",
       {C::kAllReduce},
       {Protocol::kSimple},  // CollNet: Simple only, as NCCL
       &detail::make_collnet_chain,
       &closed_form::collnet_chain,
       Family::kCollNetChain,
       true,
       true},
  };
}

std::vector<std::string> names() {
  std::vector<std::string> v;
  for (const auto& a : algorithms()) v.push_back(a.name);
  return v;
}

void check_request(const Request& r, const AlgorithmInfo& a) {
  if (!a.implements(r.collective)) {
    const std::vector<std::string> can = algorithms_for(r.collective);
    throw RequestError(fmt::format("algorithm \"{}\" does not implement {}; algorithms that do: {}",
                                   a.name, to_string(r.collective), fmt::join(can, ", ")));
  }
  if (r.channels < 1 || r.channels > 1024) {
    throw RequestError(fmt::format("channels must be between 1 and 1024, got {}", r.channels));
  }
  const ChannelSplit& sp = r.split;
  if (!sp.empty() && (sp.channels() != r.channels || sp.total() != r.count || sp.lo == 0 ||
                      (sp.mids > 0 && sp.mid == 0) || sp.mids < 0)) {
    throw RequestError(fmt::format(
        "channel split {} + {} x {} + {} elements does not give {} channels {} elements, each a "
        "non-empty part",
        sp.lo, sp.mids, sp.mid, sp.hi, r.channels, r.count));
  }
  if (r.comm.size() > (1 << 24)) {  // connection keys hold 24-bit ranks (schedule_walk.hpp)
    throw RequestError(fmt::format("at most 16777216 ranks, got {}", r.comm.size()));
  }
  if (has_root(r.collective) && (r.root < 0 || r.root >= r.comm.size())) {
    throw RequestError(
        fmt::format("root {} is not a rank of this {}-rank communicator", r.root, r.comm.size()));
  }
  const std::uint64_t per_rank = std::uint64_t{1} << 50;  // 1 PiB: keeps offsets far from overflow
  const std::uint64_t blocks = is_blocked(r.collective) ? r.comm.size() : 1;
  if (r.count > per_rank / element_size(r.dtype) / blocks) {
    throw RequestError(fmt::format("count {} is too large", r.count));
  }
  if (std::find(a.protocols.begin(), a.protocols.end(), r.protocol) == a.protocols.end()) {
    std::vector<std::string> p;
    for (Protocol pr : a.protocols) p.emplace_back(to_string(pr));
    throw RequestError(fmt::format("algorithm \"{}\" runs with protocol {} only, not {}", a.name,
                                   fmt::join(p, ", "), to_string(r.protocol)));
  }
  if (r.slices < 0) throw RequestError(fmt::format("slices must be >= 1, got {}", r.slices));
}

}  // namespace

bool AlgorithmInfo::implements(Collective c) const {
  return std::find(collectives.begin(), collectives.end(), c) != collectives.end();
}

const std::vector<AlgorithmInfo>& algorithms() {
  static const std::vector<AlgorithmInfo> table = build_table();
  return table;
}

const AlgorithmInfo* find_algorithm_or_null(std::string_view name) {
  for (const auto& a : algorithms()) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

const AlgorithmInfo& find_algorithm(std::string_view name) {
  if (const AlgorithmInfo* a = find_algorithm_or_null(name)) return *a;
  if (name == "auto") {
    throw RequestError(
        "algorithm \"auto\" must be resolved by the selector before planning; name one of " +
        fmt::format("{}", fmt::join(names(), ", ")));
  }
  throw RequestError(fmt::format("unknown algorithm \"{}\": {}", name,
                                 expected_one_of(std::string(name), names())));
}

std::vector<std::string> algorithms_for(Collective c) {
  std::vector<std::string> v;
  for (const auto& a : algorithms()) {
    if (a.implements(c)) v.push_back(a.name);
  }
  return v;
}

std::uint64_t connected_pairs(const Request& r) {
  const AlgorithmInfo& a = find_algorithm(r.algorithm);
  return a.connected_pairs != nullptr ? a.connected_pairs(r) : 0;
}

Schedule generate(const Request& r) {
  const AlgorithmInfo& a = find_algorithm(r.algorithm);
  check_request(r, a);
  return a.generate(r);
}

Schedule plan(const Request& r, const ValidateOptions& validation) {
  Schedule s = generate(r);
  validate(s, validation);
  return s;
}

std::string format_algorithm_matrix(std::optional<Collective> only) {
  std::vector<Collective> cols;
  for (Collective c : all_collectives()) {
    if (!only || *only == c) cols.push_back(c);
  }
  std::size_t width = std::string_view("algorithm").size();
  for (const auto& a : algorithms()) width = std::max(width, a.name.size());
  std::string out = fmt::format("{:<{}}", "algorithm", width);
  for (Collective c : cols) out += fmt::format(" {:<17}", to_string(c));
  while (!out.empty() && out.back() == ' ') out.pop_back();
  out += "\n";
  for (const auto& a : algorithms()) {
    if (only && !a.implements(*only)) continue;
    std::string row = fmt::format("{:<{}}", a.name, width);
    for (Collective c : cols) {
      std::string cell = "-";
      if (a.implements(c)) {
        std::vector<std::string> p;
        for (Protocol pr : a.protocols) p.emplace_back(to_string(pr));
        cell = fmt::format("{}", fmt::join(p, " "));
      }
      row += fmt::format(" {:<17}", cell);
    }
    while (!row.empty() && row.back() == ' ') row.pop_back();
    out += row + "\n";
  }
  return out;
}

}  // namespace collsim
