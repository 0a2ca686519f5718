// NCCL's tuning model, restated from docs/nccl-model.md §1.2-§1.6 (src/graph/tuning.cc:
// ncclTopoTuneModel and ncclTopoGetAlgoTime). Each rule names the section it follows.
#include "algorithms/models/nccl_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "algorithms/models/nccl_constants.hpp"
#include "topology/error.hpp"

namespace collsim {

namespace {

using detail::kHwNet;
using detail::kHwNvlink;
using detail::kHwPci;

constexpr std::array<std::string_view, kNcclAlgoCount> kAlgoNames = {
    "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
constexpr std::array<std::string_view, kNcclAlgoCount> kCollsimNames = {
    "dbtree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"};

// NCCL's collective order in the tables: Broadcast, Reduce, AllGather, ReduceScatter, AllReduce.
constexpr std::array<Collective, 5> kModelled = {Collective::kBroadcast, Collective::kReduce,
                                                 Collective::kAllGather, Collective::kReduceScatter,
                                                 Collective::kAllReduce};

int log2i(std::uint64_t n) {
  int r = -1;
  while (n > 0) {
    n >>= 1;
    ++r;
  }
  return r;
}

int arch_index(int sm) {
  if (sm >= 100) return detail::kBlackwell;
  if (sm >= 90) return detail::kHopper;
  if (sm >= 80) return detail::kAmpere;
  return detail::kVolta;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string_view to_string(NcclAlgo a) { return kAlgoNames[static_cast<int>(a)]; }
std::string_view collsim_algorithm(NcclAlgo a) { return kCollsimNames[static_cast<int>(a)]; }
bool is_nvls_family(NcclAlgo a) { return a == NcclAlgo::kNvls || a == NcclAlgo::kNvlsTree; }

NcclVersion nccl_constants_for(NcclRelease v) {
  return v.at_least(27)   ? NcclVersion::k2_30
         : v.at_least(23) ? NcclVersion::k2_26
                          : NcclVersion::k2_22;
}

NcclVersion parse_nccl_version(std::string_view text) {
  return nccl_constants_for(parse_nccl_release(text));
}

std::string_view to_string(NcclVersion v) {
  return v == NcclVersion::k2_22 ? "2.22.3" : v == NcclVersion::k2_26 ? "2.26.2" : "2.30.7";
}

std::string nccl_release_text(const NcclModelInput& in) {
  const std::string constants(to_string(in.version));
  const std::string release = to_string(in.release);
  // From 2.27 the newest set is each release's own (nccl_constants walks it back).
  if (in.version == NcclVersion::k2_30 && in.release.at_least(27)) return release;
  if (release == constants || constants.starts_with(release + ".")) return constants;
  return fmt::format("{} with {}'s constants", to_string(in.release), constants);
}

std::string_view to_string(CpuVendor c) {
  return c == CpuVendor::kIntel ? "intel" : c == CpuVendor::kAmd ? "amd" : "other";
}

bool nccl_nvls_reduces(ReduceOp op, DataType type) {
  switch (type) {
    case DataType::kI32:
    case DataType::kU32:
    case DataType::kI64:
    case DataType::kU64:
    case DataType::kF16:
    case DataType::kBf16:
      return op == ReduceOp::kSum || op == ReduceOp::kMin || op == ReduceOp::kMax;
    case DataType::kF32:
    case DataType::kF64:
      return op == ReduceOp::kSum;
    case DataType::kU8:
    case DataType::kI8:
    case DataType::kF8E4M3:
    case DataType::kF8E5M2:
      return false;
  }
  return false;
}

NcclFilter parse_nccl_filter(std::string_view algo_list, std::string_view proto_list) {
  NcclFilter f;
  auto apply = [](std::string_view list, auto& enabled, auto&& index_of) {
    if (list.empty()) return;
    const bool negate = list.front() == '^';
    if (negate) list.remove_prefix(1);
    std::fill(enabled.begin(), enabled.end(), negate);
    std::size_t start = 0;
    while (start <= list.size()) {
      const std::size_t end = std::min(list.find(',', start), list.size());
      const std::string name = lower(list.substr(start, end - start));
      enabled[index_of(name)] = !negate;
      start = end + 1;
    }
  };
  apply(algo_list, f.algos, [](const std::string& name) {
    std::vector<std::string> accepted;
    for (int a = 0; a < kNcclAlgoCount; ++a) {
      if (name == lower(kAlgoNames[a]) || name == kCollsimNames[a]) return a;
      accepted.push_back(lower(kAlgoNames[a]));
    }
    if (name == "tree") return static_cast<int>(NcclAlgo::kTree);
    throw RequestError(
        fmt::format("unknown NCCL algorithm \"{}\": {}", name, expected_one_of(name, accepted)));
  });
  apply(proto_list, f.protos,
        [](const std::string& name) { return static_cast<int>(parse_protocol(name)); });
  return f;
}

int NcclModel::coll_index(Collective c) {
  for (int i = 0; i < kColls; ++i) {
    if (kModelled[i] == c) return i;
  }
  return -1;
}

NcclModel::Entry& NcclModel::at(int coll, NcclAlgo a, Protocol p) {
  return table_[(coll * kNcclAlgoCount + static_cast<int>(a)) * kProtocolCount +
                static_cast<int>(p)];
}

const NcclModel::Entry& NcclModel::entry(Collective c, NcclAlgo a, Protocol p) const {
  static const Entry kDisabled{};
  const int coll = coll_index(c);
  if (coll < 0) return kDisabled;
  return table_[(coll * kNcclAlgoCount + static_cast<int>(a)) * kProtocolCount +
                static_cast<int>(p)];
}

namespace {

// What every entry of the model reads: the constant set, the cluster's shape and the rows of
// NCCL's tables that apply to it.
struct Setting {
  detail::NcclConstants k;  // as the release had them (nccl_constants)
  const NcclModelInput& in;
  bool since_2_23;  // the rules 2.23 brought (§1.8): 2.26's set and 2.30's
  bool since_2_27;  // 2.27's: NVLS AllGather and ReduceScatter get their own bandwidth
  // 2.28.3's NVLS formula: nvlsEfficiency, one channel in n held back, AllReduce's two pipelined
  // operations, NVLSTree's per-channel cap, two channels at least, the ring's ratio.
  bool nvls_2_28;
  int arch;
  int nodes, ranks;
  double ppn;
  double ll_max_bw, per_ch_tree, per_ch_ring_ll128, per_ch_tree_ll128, per_ch_nvls_tree;
  double net_overhead;
  bool pat;
};

Setting setting_of(const NcclModelInput& in) {
  const detail::NcclConstants k = detail::nccl_constants(in.version, in.release);
  const int arch = arch_index(in.sm);
  const int index2 = in.nodes <= 2 ? in.nodes - 1 : 2;
  // llMaxBw row: by architecture on one node, by CPU vendor otherwise (§1.4).
  const int index1 = in.nodes == 1 ? arch : (in.cpu == CpuVendor::kAmd ? 1 : 0);
  const bool since_2_27 = in.version == NcclVersion::k2_30;
  const bool since_2_23 = in.version != NcclVersion::k2_22;
  return {k,
          in,
          since_2_23,
          since_2_27,
          since_2_27 && in.release.at_least(28),
          arch,
          in.nodes,
          in.ranks,
          static_cast<double>(in.ranks) / in.nodes,
          k.ll_max_bw[index1][index2],
          k.per_ch_max_tree_bw[arch][index2],
          k.per_ch_max_ring_ll128_bw[arch][index2],
          k.per_ch_max_tree_ll128_bw[arch][index2],
          k.per_ch_max_nvls_tree_bw[arch][index2],
          in.cpu == CpuVendor::kAmd ? 2.0 : 1.0,  // §1.5
          in.pat.value_or(since_2_23 && in.nodes == in.ranks)};
}

const std::optional<NcclGraph>& graph_of(const NcclModelInput& in, NcclAlgo a) {
  static const std::optional<NcclGraph> kNone;
  switch (a) {
    case NcclAlgo::kRing:
      return in.ring;
    case NcclAlgo::kTree:
    case NcclAlgo::kPat:
      return in.tree;  // PAT reuses the Tree graph (§1.1)
    case NcclAlgo::kNvls:
    case NcclAlgo::kNvlsTree:
      return in.nvls;
    case NcclAlgo::kCollNetDirect:
      return in.collnet_direct;
    case NcclAlgo::kCollNetChain:
      return in.collnet_chain;
    default:
      return kNone;
  }
}

bool is_ag_rs(Collective c) {
  return c == Collective::kAllGather || c == Collective::kReduceScatter;
}

// Whether NCCL runs `a` for `coll` here at all (§1.6).
bool algorithm_available(const Setting& s, Collective coll, NcclAlgo a, const NcclGraph& g) {
  const bool ar = coll == Collective::kAllReduce;
  if ((coll == Collective::kBroadcast || coll == Collective::kReduce) && a != NcclAlgo::kRing) {
    return false;
  }
  if (is_ag_rs(coll) && a != NcclAlgo::kRing && a != NcclAlgo::kPat && a != NcclAlgo::kNvls &&
      a != NcclAlgo::kCollNetDirect) {
    return false;
  }
  // CollNetDirect's AllGather and ReduceScatter (2.23+) need the SHARP plugin's iallgather /
  // ireducescatter, which its current releases have (nccl-rdma-sharp-plugins, sharp_plugin.c:
  // unless NCCL_SHARP_DISABLE_ALLGATHER / _REDUCE_SCATTER), and a head (a GPU with its own NIC)
  // for every GPU of a node (tuning.cc: ppn > collNetHeadsNum gives no bandwidth).
  if (a == NcclAlgo::kCollNetDirect && is_ag_rs(coll) && (!s.since_2_23 || s.ppn > g.channels)) {
    return false;
  }
  if (ar && a == NcclAlgo::kPat) return false;
  if (a == NcclAlgo::kPat && !s.pat) return false;
  // NVLS across nodes runs with CollNet only (tuning.cc: disabled without collnetEnable;
  // enqueue.cc: skipped without collNetSupport, 2.18 to 2.30); its AllGather and ReduceScatter
  // from 2.27 (refused before, enqueue.cc), with the SHARP plugin's iallgather /
  // ireducescatter and a head for every GPU of a node, as CollNetDirect's below.
  if (a == NcclAlgo::kNvls && s.nodes > 1 &&
      (!s.in.collnet_chain || (is_ag_rs(coll) && (!s.since_2_27 || !s.in.collnet_direct ||
                                                  s.ppn > s.in.collnet_direct->channels)))) {
    return false;
  }
  // More than 8 GPUs on a node (NCCL_MAX_DIRECT_ARITY + 1): before 2.23 NCCL turns CollNet off
  // altogether ("CollNet currently only supports up to 8 GPUs per node", init.cc), NVLS across
  // nodes with it; from 2.23 it skips CollNetDirect, from 2.28 CollNetChain too (enqueue.cc).
  if (s.ppn > 8) {
    const bool collnet = a == NcclAlgo::kCollNetDirect || a == NcclAlgo::kCollNetChain;
    if (!s.in.release.at_least(23) && (collnet || (a == NcclAlgo::kNvls && s.nodes > 1))) {
      return false;
    }
    if (a == NcclAlgo::kCollNetDirect) return false;
    if (a == NcclAlgo::kCollNetChain && s.in.release.at_least(28)) return false;
  }
  // NCCL_ALGO_NVLS first appears in 2.17, NCCL_ALGO_NVLS_TREE in 2.18 (src/include/devcomm.h).
  if (a == NcclAlgo::kNvls && !s.in.release.at_least(17)) return false;
  if (a == NcclAlgo::kNvlsTree && !s.in.release.at_least(18)) return false;
  if (a == NcclAlgo::kNvlsTree && s.nodes == 1) return false;
  if (a == NcclAlgo::kNvls && is_ag_rs(coll) && s.ppn > 32) return false;  // NCCL_MAX_NVLS_ARITY
  return !(is_nvls_family(a) && s.nvls_2_28 && g.channels < 2);
}

bool protocol_available(const Setting& s, NcclAlgo a, Protocol p) {
  if ((is_nvls_family(a) || a == NcclAlgo::kPat) && p != Protocol::kSimple) return false;
  if (p == Protocol::kLL && !s.in.ll) return false;
  return !(p == Protocol::kLL128 && !s.in.ll128);
}

// The algorithm bandwidth, GB/s (§1.3): the graph's bus bandwidth with NCCL's per-algorithm and
// per-protocol caps and factors, turned into algorithm bandwidth.
double algorithm_bandwidth(const Setting& s, Collective coll, NcclAlgo a, Protocol p,
                           const NcclGraph& g) {
  const bool ar = coll == Collective::kAllReduce;
  const bool nvls_family = is_nvls_family(a);
  const bool collnet = a == NcclAlgo::kCollNetDirect || a == NcclAlgo::kCollNetChain;
  double bw = s.nodes <= 2 || collnet ? g.bw_intra : g.bw_inter;
  if (nvls_family) {
    if (s.nvls_2_28) {
      double intra = g.bw_intra * s.k.nvls_efficiency[s.arch] * (g.channels - 1) / g.channels;
      intra *= ar ? 2.0 : (s.ppn - 1) / s.ppn;
      const double inter = g.bw_inter * ((a == NcclAlgo::kNvlsTree && s.nodes <= 2) ? 2.0 : 1.0);
      bw = std::min(intra, inter);
      if (a == NcclAlgo::kNvlsTree) bw = std::min(bw, s.per_ch_nvls_tree);
    } else if (a == NcclAlgo::kNvls && s.since_2_27 && is_ag_rs(coll)) {
      // 2.27 to 2.28.2: a GPU's own share does not cross the switch, and the network's 0.9.
      bw = std::min(g.bw_intra * (s.ppn - 1) / s.ppn, g.bw_inter * 0.9);
    } else {
      bw = a == NcclAlgo::kNvls ? std::min(g.bw_intra, g.bw_inter)
                                : std::min(g.bw_intra, s.nodes <= 2 ? g.bw_inter : g.bw_inter / 2);
    }
  }
  double bus = g.channels * bw;
  if (a == NcclAlgo::kRing && p == Protocol::kLL) bus = std::min(s.ll_max_bw, bus * 0.5);
  if (a == NcclAlgo::kRing && p == Protocol::kLL128) {
    const double f = (s.since_2_23 || s.ppn >= 2) ? 0.92 : 0.7;
    bus = std::min(bus * f, g.channels * s.per_ch_ring_ll128);
  }
  if (a == NcclAlgo::kTree && (ar || !s.since_2_23)) {
    bus = std::min(bus * 0.92, g.channels * s.per_ch_tree);
  }
  if (a == NcclAlgo::kTree && p == Protocol::kLL) bus = std::min(bus / 3.8, s.ll_max_bw);
  if (a == NcclAlgo::kTree && p == Protocol::kLL128) {
    bus = std::min(bus * (s.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                   g.channels * s.per_ch_tree_ll128);
  }
  if (a == NcclAlgo::kTree && s.in.tree_pattern_is_tree) bus *= 0.85;
  if (a == NcclAlgo::kPat) bus *= s.in.release.at_least(24) ? 0.75 : 0.85;  // 2.23: 0.85
  if (collnet && p != Protocol::kSimple) return 0;
  if (a == NcclAlgo::kCollNetDirect && is_ag_rs(coll)) {
    // Every GPU of a node a head: ppn of them at the graph's speed, from 2.27 at most 0.9 of
    // the network's; 2.23 to 2.26 interpolate a measured correction between 0.95 at one GPU a
    // node and 0.85 at eight.
    if (s.since_2_27) return s.ppn * std::min(g.bw_intra, g.bw_inter * 0.9);
    const double w = (s.ppn - 1) / (8 - 1);
    return s.ppn * bw * (w * 0.85 + (1 - w) * 0.95);
  }
  if (a == NcclAlgo::kCollNetDirect && ar) {
    // Full speed needs a NIC per GPU: the GPU/NIC ratio, halfway back to 1 (§1.3).
    double factor = s.ppn / g.channels;
    factor -= (factor - 1) / 2;
    bus /= factor;
    if (s.in.sm >= 90) bus *= 0.85;
  }
  // Bus -> algorithm bandwidth, skipped for non-Ring AllGather/ReduceScatter (before 2.23 for
  // CollNetDirect's only: 2.22's NVLS AllGather takes NVLS's 5/6).
  if (a != NcclAlgo::kRing && is_ag_rs(coll) && (s.since_2_23 || a == NcclAlgo::kCollNetDirect)) {
    return bus;
  }
  double ratio = 0.5;
  if (a == NcclAlgo::kRing || (s.nvls_2_28 && nvls_family)) {
    const int nsteps = ar ? 2 * (s.ranks - 1) : is_ag_rs(coll) ? s.ranks - 1 : s.ranks;
    ratio = static_cast<double>(s.ranks) / nsteps;
  } else if (nvls_family) {
    ratio = 5.0 / 6.0;
  }
  return bus * ratio;
}

// The latency, us (§1.5): baseLat plus the hardware latency of every step, by where it runs.
double latency(const Setting& s, Collective coll, NcclAlgo a, Protocol p, const NcclGraph& g) {
  const bool ar = coll == Collective::kAllReduce;
  const int ai = static_cast<int>(a), pi = static_cast<int>(p);
  const int nsteps = ar ? 2 * (s.ranks - 1) : is_ag_rs(coll) ? s.ranks - 1 : s.ranks;
  double lat = s.k.base_lat[ai][pi];
  const int intra_hw = g.nvlink ? kHwNvlink : kHwPci;
  double intra_lat = s.k.hw_lat[intra_hw][ai][pi];
  // Before 2.18 an LL hop inside a node of a multi-node communicator counted 1.8 x its hwLat
  // (src/graph/tuning.cc, 2.7 to 2.17: `if (nNodes > 1 && p == NCCL_PROTO_LL) intraLat *= 1.8`);
  // 2.18 replaced it with the ring's netOverhead floor below.
  const bool before_2_18 = !s.in.release.at_least(18);
  if (before_2_18 && s.nodes > 1 && p == Protocol::kLL) intra_lat *= 1.8;
  double inter_lat = (s.since_2_23 && s.ppn == 1)
                         ? s.k.hw_lat[kHwNet][static_cast<int>(NcclAlgo::kTree)][pi]
                         : s.k.hw_lat[kHwNet][ai][pi];
  inter_lat += g.latency_inter;
  // "Also add the flush extra latency": Simple pays the plugin's latency twice from 2.18.
  if (p == Protocol::kSimple && s.in.release.at_least(18)) inter_lat += g.latency_inter;
  const int nodes = s.nodes;
  switch (a) {
    case NcclAlgo::kRing: {
      const int hw = nodes == 1 ? intra_hw : kHwNet;
      if (coll == Collective::kBroadcast || coll == Collective::kReduce) {
        if (g.same_channels) return lat + s.k.hw_lat[hw][ai][pi];
        const int from = p == Protocol::kSimple ? static_cast<int>(NcclAlgo::kTree) : ai;
        return lat + nsteps * s.k.hw_lat[hw][from][pi];
      }
      const double overhead =
          nodes > 1 && !before_2_18 ? s.net_overhead * (p == Protocol::kSimple ? 3 : 1) : 0.0;
      const double step_lat = std::max(intra_lat, overhead);
      int inter_steps = 0;
      if (nodes > 1) {
        inter_steps =
            s.since_2_23 ? (ar ? 2 * (nodes - 1) : nodes - 1) : (ar ? 2 * nodes : nodes - 1);
      }
      return lat + (nsteps - inter_steps) * step_lat + inter_steps * inter_lat;
    }
    case NcclAlgo::kTree:
      if (ar || !s.since_2_23) {
        lat += 2 * ((s.ranks / nodes - 1) * intra_lat + log2i(nodes) * inter_lat);
      }
      return lat;
    case NcclAlgo::kCollNetDirect: {
      // Plus 0.4 us of arity serialization per other GPU of the node.
      const int others = s.ranks / nodes - 1;
      return lat + 2 * (std::min(1, others) * intra_lat + others * 0.4) + inter_lat;
    }
    case NcclAlgo::kCollNetChain:
      return lat + 2 * (s.ranks / nodes - 1) * intra_lat + inter_lat;
    case NcclAlgo::kNvls:
      return intra_lat + (nodes > 1 ? inter_lat : 0.0);
    case NcclAlgo::kNvlsTree:
      return lat + intra_lat + 2 * log2i(nodes) * inter_lat;
    case NcclAlgo::kPat:
      return lat + log2i(nodes) * (inter_lat / 3.5) + s.ranks * 2.8;
    default:
      return lat;
  }
}

}  // namespace

NcclModel::NcclModel(const NcclModelInput& input) : in_(input) {
  if (in_.runtime_channels == 0 && in_.ring) in_.runtime_channels = 2 * in_.ring->channels;
  const Setting s = setting_of(in_);
  for (int ci = 0; ci < kColls; ++ci) {
    const Collective coll = kModelled[ci];
    for (int ai = 0; ai < kNcclAlgoCount; ++ai) {
      const auto a = static_cast<NcclAlgo>(ai);
      const std::optional<NcclGraph>& g = graph_of(in_, a);
      if (!g || !algorithm_available(s, coll, a, *g)) continue;
      for (int pi = 0; pi < kProtocolCount; ++pi) {
        const auto p = static_cast<Protocol>(pi);
        if (!protocol_available(s, a, p)) continue;
        const double bus = algorithm_bandwidth(s, coll, a, p, *g);
        at(ci, a, p) = Entry{bus > 0, latency(s, coll, a, p, *g), bus};
      }
    }
  }
}

std::optional<double> NcclModel::time_us(Collective c, NcclAlgo a, Protocol p,
                                         std::uint64_t bytes) const {
  const Entry& e = entry(c, a, p);
  if (!e.enabled) return std::nullopt;
  double bw = e.bandwidth_GBps;
  double lat = e.latency_us;
  // Trees stray from the model at medium sizes: NCCL's static correction (§1.2).
  const int idx = log2i(bytes >> 6);
  if (a == NcclAlgo::kTree && c == Collective::kAllReduce && idx >= 0 && idx < 23) {
    bw *= detail::kTreeCorrection[static_cast<int>(p)][idx];
  }
  // From 2.29 the same correction, to 512 MiB, for NVLSTree on Blackwell behind x86 hosts
  // (`src/graph/tuning.cc` ncclTopoGetAlgoTime, minCompCap >= 100 and NCCL_TOPO_CPU_ARCH_X86).
  if (a == NcclAlgo::kNvlsTree && c == Collective::kAllReduce && idx >= 0 && idx < 24 &&
      in_.sm >= 100 && in_.cpu_x86 && in_.release.at_least(29)) {
    bw *= detail::kTreeCorrection[static_cast<int>(p)][idx];
  }
  // Ring plateau effect for multi-node Ring/Simple AllReduce (§1.2).
  if (a == NcclAlgo::kRing && p == Protocol::kSimple && c == Collective::kAllReduce &&
      in_.nodes > 1 && in_.runtime_channels > 0 &&
      static_cast<double>(bytes) / (static_cast<double>(in_.runtime_channels) * in_.ranks) >= 64) {
    lat *= in_.sm < 80 ? 1.9 : 1.4;
  }
  return lat + static_cast<double>(bytes) / (1000.0 * bw);
}

std::optional<NcclModel::Choice> NcclModel::best(Collective c, std::uint64_t bytes,
                                                 const NcclFilter& f) const {
  std::optional<Choice> best;
  for (int ai = 0; ai < kNcclAlgoCount; ++ai) {
    if (!f.algos[ai]) continue;
    for (int pi = 0; pi < kProtocolCount; ++pi) {
      if (!f.protos[pi]) continue;
      const auto a = static_cast<NcclAlgo>(ai);
      const auto p = static_cast<Protocol>(pi);
      const auto t = time_us(c, a, p, bytes);
      if (t && (!best || *t < best->time_us)) best = Choice{a, p, *t};
    }
  }
  return best;
}

}  // namespace collsim
