#include "algorithms/models/selection.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>

#include "algorithms/generators/registry.hpp"
#include "algorithms/models/nccl_p2p.hpp"
#include "topology/error.hpp"

namespace collsim {

namespace {

constexpr NcclAlgo kAllNcclAlgos[] = {
    NcclAlgo::kTree,         NcclAlgo::kRing, NcclAlgo::kCollNetDirect,
    NcclAlgo::kCollNetChain, NcclAlgo::kNvls, NcclAlgo::kNvlsTree,
    NcclAlgo::kPat};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

// Every name --algo knows: collsim's registry, which holds each of NCCL's algorithms.
std::vector<std::string> universe() {
  std::vector<std::string> names;
  for (const AlgorithmInfo& a : algorithms()) names.push_back(a.name);
  return names;
}

// A name inside an NCCL-style list: NCCL's spelling (any case; "tree" is NCCL's Tree) or
// collsim's.
std::string list_name(std::string_view word, const std::vector<std::string>& all) {
  const std::string w = lower(word);
  if (w == "tree") return "dbtree";
  for (NcclAlgo a : kAllNcclAlgos) {
    if (w == lower(to_string(a))) return std::string(collsim_algorithm(a));
  }
  if (std::find(all.begin(), all.end(), w) != all.end()) return w;
  std::vector<std::string> accepted = all;
  for (NcclAlgo a : kAllNcclAlgos) {
    const std::string n = lower(to_string(a));
    if (std::find(accepted.begin(), accepted.end(), n) == accepted.end()) accepted.push_back(n);
  }
  throw RequestError(
      fmt::format("--algo: unknown algorithm \"{}\": {}", word, expected_one_of(w, accepted)));
}

std::vector<std::string_view> split_list(std::string_view list) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t end = std::min(list.find(',', start), list.size());
    out.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace

std::string canonical_algorithm(std::string_view name) {
  if (simulable(name)) return std::string(name);
  return list_name(name, universe());
}

std::string_view nccl_protocol_name(Protocol p) {
  return p == Protocol::kLL ? "LL" : p == Protocol::kLL128 ? "LL128" : "Simple";
}

SelectPolicy parse_select_policy(std::string_view text) {
  if (text == "best") return SelectPolicy::kBest;
  if (text == "nccl") return SelectPolicy::kNccl;
  throw RequestError(fmt::format("--select: unknown policy \"{}\": {}", text,
                                 expected_one_of(text, {"best", "nccl"})));
}

std::string_view to_string(SelectPolicy p) { return p == SelectPolicy::kBest ? "best" : "nccl"; }

std::string to_string(const Candidate& c) {
  return fmt::format("{}/{}", c.algorithm, to_string(c.protocol));
}

std::optional<NcclAlgo> nccl_algo_of(std::string_view algorithm) {
  for (NcclAlgo a : kAllNcclAlgos) {
    if (collsim_algorithm(a) == algorithm) return a;
  }
  return std::nullopt;
}

bool simulable(std::string_view algorithm) { return find_algorithm_or_null(algorithm) != nullptr; }

AlgoChoice parse_algo_choice(std::string_view algo, std::string_view proto) {
  AlgoChoice out;
  const std::vector<std::string> all = universe();
  if (algo.empty() || algo == "auto") {
    out.algorithms = all;
  } else if (simulable(algo)) {
    out.algo_auto = false;
    out.algorithms = {std::string(algo)};
  } else {
    if (algo == "^" || algo.find(",,") != std::string_view::npos) {
      throw RequestError(fmt::format("--algo: empty name in \"{}\"", algo));
    }
    const bool negate = algo.front() == '^';
    std::vector<bool> on(all.size(), negate);
    for (std::string_view word : split_list(negate ? algo.substr(1) : algo)) {
      if (word.empty()) throw RequestError(fmt::format("--algo: empty name in \"{}\"", algo));
      const std::string n = list_name(word, all);
      on[std::find(all.begin(), all.end(), n) - all.begin()] = !negate;
    }
    for (std::size_t i = 0; i < all.size(); ++i) {
      if (on[i]) out.algorithms.push_back(all[i]);
    }
    out.algo_auto = out.algorithms.size() != 1;
    if (out.algorithms.empty()) {
      throw RequestError(fmt::format("--algo \"{}\" leaves no algorithm", algo));
    }
  }
  for (NcclAlgo a : kAllNcclAlgos) {
    const std::string n(collsim_algorithm(a));
    out.nccl.algos[static_cast<int>(a)] =
        std::find(out.algorithms.begin(), out.algorithms.end(), n) != out.algorithms.end();
  }

  if (proto.empty() || proto == "auto") {
    out.protocols = all_protocols();
  } else {
    try {
      out.nccl.protos = parse_nccl_filter("", proto).protos;
    } catch (const RequestError& e) {
      throw RequestError(fmt::format("--proto: {}", e.what()));
    }
    for (Protocol p : all_protocols()) {
      if (out.nccl.protos[static_cast<int>(p)]) out.protocols.push_back(p);
    }
    if (out.protocols.empty()) {
      throw RequestError(fmt::format("--proto \"{}\" leaves no protocol", proto));
    }
    out.proto_auto = out.protocols.size() != 1;
  }
  return out;
}

std::vector<Candidate> candidates(Collective c, const AlgoChoice& allowed) {
  std::vector<Candidate> out;
  std::vector<std::string> rejected;
  for (const std::string& name : allowed.algorithms) {
    const AlgorithmInfo& a = find_algorithm(name);
    if (!a.implements(c)) {
      rejected.push_back(name);
      continue;
    }
    for (Protocol p : allowed.protocols) {
      if (std::find(a.protocols.begin(), a.protocols.end(), p) != a.protocols.end()) {
        out.push_back({name, p});
      }
    }
  }
  if (out.empty()) {
    const std::string what = allowed.algorithms.size() == 1
                                 ? fmt::format("algorithm \"{}\"", allowed.algorithms.front())
                                 : fmt::format("none of {}", fmt::join(rejected, ", "));
    throw RequestError(fmt::format("{} does not implement {}; algorithms that do: {}", what,
                                   to_string(c), fmt::join(algorithms_for(c), ", ")));
  }
  return out;
}

std::optional<Selection> select_best(const std::vector<Candidate>& cs,
                                     const CostFunction& time_us) {
  std::optional<Selection> best;
  for (const Candidate& c : cs) {
    const std::optional<double> t = time_us(c);
    if (!t) continue;
    if (!best || *t < best->time_us) best = Selection{c, *t, "", ""};
  }
  return best;
}

Selection select_nccl(const NcclModel& m, Collective c, std::uint64_t bytes,
                      const AlgoChoice& allowed, NcclOperands operands) {
  if (c == Collective::kBarrier) {
    throw RequestError("--select nccl: NCCL has no barrier collective; use --select best");
  }
  if (c == Collective::kAllToAll || c == Collective::kGather || c == Collective::kScatter ||
      c == Collective::kSendRecv) {
    // Point-to-point: one message per peer; LL while it fits NCCL_P2P_LL_THRESHOLD (16 KiB) per
    // channel, and only where the NICs deliver in order (collsim runs one protocol for the whole
    // collective, and refuses LL on such NICs; NCCL itself keeps network peers on Simple unless
    // NCCL_ALLOC_P2P_NET_LL_BUFFERS is set, which is not restated here). Which channels
    // (src/enqueue.cc): before 2.29 the most a peer may use, p2pnChannelsPerPeer; from 2.29 the
    // ones this send is split over, one per 64 KiB part, so that no send beyond 16 KiB stays LL.
    const NcclModelInput& in = m.input();
    const std::uint64_t per_peer = nccl_p2p_peer_bytes(c, bytes, in.ranks);
    constexpr std::uint64_t kP2pLlThreshold = 16384;
    const std::uint64_t ll_most =
        in.release.at_least(29)
            ? kP2pLlThreshold
            : static_cast<std::uint64_t>(std::max(1, in.p2p_per_peer)) * kP2pLlThreshold;
    const bool ll = in.ll && per_peer <= ll_most;
    Selection s{{"direct", ll ? Protocol::kLL : Protocol::kSimple},
                0,
                ll ? "P2P/LL" : "P2P/Simple",
                "NCCL runs this as point-to-point sends"};
    const auto& protos = allowed.protocols;
    if (std::find(protos.begin(), protos.end(), s.chosen.protocol) == protos.end()) {
      s.chosen.protocol = protos.back();
      s.note += fmt::format("; --proto excludes {}, using {}", ll ? "LL" : "Simple",
                            to_string(s.chosen.protocol));
    }
    return s;
  }
  NcclFilter filter = allowed.nccl;
  const bool nvls_reduces =
      c == Collective::kAllGather || nccl_nvls_reduces(operands.redop, operands.dtype);
  if (!nvls_reduces) {
    filter.algos[static_cast<int>(NcclAlgo::kNvls)] = false;
    filter.algos[static_cast<int>(NcclAlgo::kNvlsTree)] = false;
  }
  const auto pick = m.best(c, bytes, filter);
  if (!pick) {
    const bool any_nccl = std::any_of(allowed.algorithms.begin(), allowed.algorithms.end(),
                                      [](const std::string& a) { return nccl_algo_of(a); });
    if (!any_nccl) {
      throw RequestError(fmt::format(
          "--select nccl: NCCL runs none of the allowed algorithms ({}): they are collsim's own; "
          "--select best gives the fastest of them",
          fmt::join(allowed.algorithms, ", ")));
    }
    if (allowed.algorithms.size() == 1) {
      const std::string& only = allowed.algorithms.front();
      const std::optional<NcclAlgo> only_nccl = nccl_algo_of(only);
      if (!nvls_reduces && only_nccl && is_nvls_family(*only_nccl)) {
        throw RequestError(fmt::format(
            "--select nccl: NCCL's NVLS kernels do not reduce {} on {} (only sum, and min or max "
            "on integer and 16-bit floating types), so NCCL does not run {} for {}; --proto runs "
            "it anyway (NCCL could not)",
            to_string(operands.redop), to_string(operands.dtype), only, to_string(c)));
      }
      // NCCL's enable rules (docs/nccl-model.md §1.6) rule it out here: say how to run it anyway.
      throw RequestError(fmt::format(
          "--select nccl: NCCL does not run {} for {} on this cluster{}; --proto runs it anyway "
          "(NCCL could not), --select best picks the fastest",
          allowed.algorithms.front(), to_string(c),
          allowed.algorithms.front() == collsim_algorithm(NcclAlgo::kPat)
              ? " (NCCL runs PAT with one GPU per node only)"
              : ""));
    }
    const NcclModelInput& in = m.input();
    const bool some_protocol =
        std::any_of(allowed.protocols.begin(), allowed.protocols.end(), [&](Protocol p) {
          return p == Protocol::kSimple || (p == Protocol::kLL && in.ll) ||
                 (p == Protocol::kLL128 && in.ll128);
        });
    if (!some_protocol) {
      std::vector<std::string_view> names;
      for (Protocol p : allowed.protocols) names.push_back(to_string(p));
      throw RequestError(fmt::format(
          "--select nccl: NCCL runs none of the allowed protocols ({}) on this cluster: {}",
          fmt::join(names, ", "),
          in.ll ? "LL128 needs NVLink between the GPUs; --algo with --proto ll128 runs it "
                  "anyway (NCCL could not)"
                : "its NICs do not deliver each 128-byte block in order, so its network plugin "
                  "leaves NCCL Simple only"));
    }
    throw RequestError(fmt::format(
        "--select nccl: NCCL's model enables none of the allowed algorithms and protocols for {}",
        to_string(c)));
  }
  Selection s;
  s.nccl_pick = fmt::format("{}/{}", to_string(pick->algo), nccl_protocol_name(pick->proto));
  s.chosen = {std::string(collsim_algorithm(pick->algo)), pick->proto};
  s.time_us = pick->time_us;
  return s;
}

std::string human_bytes(std::uint64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  std::string num = fmt::format("{:.2f}", v);
  while (num.back() == '0') num.pop_back();
  if (num.back() == '.') num.pop_back();
  return fmt::format("{} {}", num, kUnits[u]);
}

std::string describe_best_ranges(const std::vector<SizedWinner>& w) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < w.size();) {
    std::size_t j = i;
    while (j + 1 < w.size() && w[j + 1].winner == w[i].winner) ++j;
    const std::string& name = w[i].winner;
    if (i == 0 && j + 1 == w.size()) {
      parts.push_back(fmt::format("{} is best at every size", name));
    } else if (i == 0) {
      parts.push_back(fmt::format("{} is best up to {}", name, human_bytes(w[j].bytes)));
    } else if (j + 1 == w.size()) {
      parts.push_back(fmt::format("{} from {}", name, human_bytes(w[i].bytes)));
    } else if (i == j) {
      parts.push_back(fmt::format("{} at {}", name, human_bytes(w[i].bytes)));
    } else {
      parts.push_back(
          fmt::format("{} from {} to {}", name, human_bytes(w[i].bytes), human_bytes(w[j].bytes)));
    }
    i = j + 1;
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

std::vector<std::string> describe_crossovers(const std::vector<SizedWinner>& w) {
  std::vector<std::string> out;
  for (std::size_t i = 1; i < w.size(); ++i) {
    if (w[i].winner == w[i - 1].winner) continue;
    out.push_back(
        fmt::format("{} beats {} below {}", w[i - 1].winner, w[i].winner, human_bytes(w[i].bytes)));
  }
  return out;
}

}  // namespace collsim
