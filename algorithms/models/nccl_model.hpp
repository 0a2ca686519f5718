// NCCL's own tuning model: the latency/bandwidth table NCCL builds at init and the per-size
// arg-min it uses to pick an algorithm and protocol.
//
// This restates src/graph/tuning.cc (ncclTopoTuneModel, ncclTopoGetAlgoTime) of NCCL 2.22.3 and
// 2.30.7 from docs/nccl-model.md §1, in our own code. It is a reference to compare against, not
// collsim's predictor: NCCL's model ignores contention, launch overhead and channel-count
// reduction for small messages, and is known to be tens of percent off in places
// (docs/nccl-model.md §5).
//
//   NcclModelInput in;
//   in.version = NcclVersion::k2_22; in.sm = 90; in.nodes = 3; in.ranks = 24;
//   in.ring = in.tree = NcclGraph{8, 24.0, 24.0};
//   in.tree_pattern_is_tree = true;
//   NcclModel m(in);
//   m.time_us(Collective::kAllReduce, NcclAlgo::kTree, Protocol::kLL, 64);   // 25.207382
//   m.best(Collective::kAllReduce, 64);                                     // Tree/LL
//
// Sizes are nccl-tests' size column (for AllGather/ReduceScatter the total buffer), as NCCL's
// nBytes. Times in microseconds, bandwidths in GB/s (1e9 B/s).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/ir/types.hpp"
#include "algorithms/models/nccl_release.hpp"

namespace collsim {

// NCCL's algorithm indices (plugin/nccl_tuner.h): Tree=0, Ring=1, CollNetDirect=2,
// CollNetChain=3, NVLS=4, NVLSTree=5, PAT=6. CollNet is costed where the input has its graphs
// (a fabric with network.sharp).
enum class NcclAlgo { kTree, kRing, kCollNetDirect, kCollNetChain, kNvls, kNvlsTree, kPat };
// NVLS and NVLSTree: the switch reduces, and they run on NCCL's NVLS channels.
bool is_nvls_family(NcclAlgo a);
inline constexpr int kNcclAlgoCount = 7;
std::string_view to_string(NcclAlgo a);          // NCCL's spelling: "Tree", "Ring", "NVLS", ...
std::string_view collsim_algorithm(NcclAlgo a);  // ours: "dbtree", "ring", "nvls", ...

// The three sets of tuning constants collsim restates (docs/nccl-model.md §1.8): 2.22.3's, taken
// for every release before 2.23; 2.26.2's, for 2.23 to 2.26 (Tree/Simple's latencies, PAT, the
// rules of 2.23); and 2.30.7's, from 2.27 on, walked back to each release's own Blackwell rows,
// NVLSTree constants and NVLS formula (nccl_constants, NcclModel).
enum class NcclVersion { k2_22, k2_26, k2_30 };
// The set a release tuned with: k2_22 before 2.23, k2_26 to 2.26, k2_30 from 2.27.
NcclVersion nccl_constants_for(NcclRelease v);
// Any release parse_nccl_release reads ("2.26.2", "head"), to its constant set; RequestError
// otherwise.
NcclVersion parse_nccl_version(std::string_view text);
std::string_view to_string(NcclVersion v);  // the release the set was read from: "2.22.3", "2.30.7"

enum class CpuVendor { kIntel, kAmd, kOther };
std::string_view to_string(CpuVendor c);  // "intel", "amd", "other" (--nccl-cpu)

// One search result of ncclTopoCompute ("Pattern p, nChannels n, bw intra/inter" in NCCL's
// GRAPH log): channels before the runtime doubling, per-channel GB/s.
struct NcclGraph {
  int channels = 0;
  double bw_intra = 0;
  double bw_inter = 0;
  bool nvlink = true;        // typeIntra == LINK_NVL (else PCI latencies)
  double latency_inter = 0;  // the net plugin's NIC latency, us (built-in IB reports 0), from 2.12
  bool same_channels = true;
};

struct NcclModelInput {
  NcclVersion version = NcclVersion::k2_30;
  NcclRelease release = kNewestNccl;  // how the collective is divided among channels
  int sm = 90;                        // minimum compute capability x10
  int nodes = 1;
  int ranks = 1;
  CpuVendor cpu = CpuVendor::kIntel;
  // comm->cpuArch == NCCL_TOPO_CPU_ARCH_X86: false on a Grace node (its GPUs reach the CPU over
  // NVLink-C2C), whose Arm cores NCCL tunes apart from x86 hosts.
  bool cpu_x86 = true;
  std::optional<NcclGraph> ring, tree, nvls;
  // CollNet's graphs, where the fabric runs it (Topology::sharp): none otherwise.
  std::optional<NcclGraph> collnet_direct, collnet_chain;
  bool tree_pattern_is_tree = false;  // a tree graph fell back to pattern TREE (x0.85)
  bool ll = true;                     // LL enabled (NICs that deliver in order, Topology)
  bool ll128 = true;                  // LL128 enabled (NCCL_PROTO / the hardware rules)
  std::optional<bool> pat;            // default: enabled from 2.23 with one GPU per node
  int runtime_channels = 0;           // comm->nChannels (default: 2 x ring channels)
  int p2p_per_peer = 1;               // comm->p2pnChannelsPerPeer (nccl_p2p_shape)
  // comm->nvlsChannels before NCCL_MIN/MAX_CTAS: NCCL_NVLS_NCHANNELS's default for this
  // release, architecture and shape (nccl_nvls_channels, nccl_channels.hpp).
  int nvls_channels = 16;
  // comm->nvlsChunkSize and nvlsTreeMaxChunkSize (nccl_nvls_chunks): 128 KiB and NCCL's fallback.
  std::uint64_t nvls_chunk = 131072;
  std::uint64_t nvls_tree_max_chunk = 0;
  // NVLS across nodes (with CollNet): 32 KiB where this model gives its AllReduce less than
  // 150 GB/s, else 0 (the chunk; NvlsChunks::across_max).
  std::uint64_t nvls_across_max_chunk = 0;
};

// NCCL_ALGO / NCCL_PROTO filters with NCCL's syntax: a comma list, optionally negated with a
// leading '^' ("ring,tree", "^LL128"). Empty = everything. Names are case-insensitive; collsim's
// spellings (dbtree, simple) are accepted too.
struct NcclFilter {
  std::array<bool, kNcclAlgoCount> algos{true, true, true, true, true, true, true};
  std::array<bool, kProtocolCount> protos{true, true, true};
};
NcclFilter parse_nccl_filter(std::string_view algo_list, std::string_view proto_list);

// Whether NCCL's NVLS kernels reduce `op` on `type` (ncclNvlsSupported, src/include/device.h,
// 2.18 to 2.30): sum on every floating and integer type but 8-bit ones, min and max on integer
// and 16-bit floating types; avg (NCCL's PreMulSum or SumPostDiv) and prod on none. Where they do
// not, NCCL runs neither NVLS nor NVLSTree for a reducing collective (enqueue.cc: nvlsSupport).
bool nccl_nvls_reduces(ReduceOp op, DataType type);

// The release a model input is for, as the output names it: the release itself where collsim
// has its constants (every release from 2.27, 2.22.3 and 2.26.2, or a minor of theirs named
// without its patch), "2.19 with 2.22.3's constants" otherwise.
std::string nccl_release_text(const NcclModelInput& in);

class Communicator;
class Topology;

// The graph inputs NCCL's search would produce on this cluster, estimated from its links
// (nccl_graph.cpp says how, and which NCCL logs each rule reproduces). Users who have NCCL's own
// GRAPH log lines should prefer those numbers.
NcclModelInput nccl_model_input(const Topology& topo, const Communicator& comm, NcclRelease v,
                                CpuVendor cpu = CpuVendor::kIntel);
// NVLS across nodes (with CollNet) cuts chunks of at most 32 KiB where NCCL's model gives its
// AllReduce less than 150 GB/s (src/enqueue.cc calcCollChunking, 2.19 to 2.30): sets
// `in.nvls_across_max_chunk` from `in`'s graphs. nccl_model_input calls it; call it again after
// changing the graphs (--nccl-graph, --nccl-log).
void set_nvls_across_max_chunk(NcclModelInput& in);
// The same for the release a constant set was read from (2.22.3 or 2.30.7).
NcclModelInput nccl_model_input(const Topology& topo, const Communicator& comm, NcclVersion v,
                                CpuVendor cpu = CpuVendor::kIntel);

class NcclModel {
 public:
  explicit NcclModel(const NcclModelInput& input);

  struct Entry {
    bool enabled = false;
    double latency_us = 0;
    double bandwidth_GBps = 0;  // algorithm bandwidth, before the tree correction factor
  };
  // Only the five collectives NCCL models (Broadcast, Reduce, AllGather, ReduceScatter,
  // AllReduce); anything else is disabled.
  const Entry& entry(Collective c, NcclAlgo a, Protocol p) const;

  // ncclTopoGetAlgoTime for one operation (numPipeOps = 1, as in nccl-tests); nullopt when the
  // combination is disabled.
  std::optional<double> time_us(Collective c, NcclAlgo a, Protocol p, std::uint64_t bytes) const;

  struct Choice {
    NcclAlgo algo;
    Protocol proto;
    double time_us;
  };
  // The arg-min over enabled combinations that pass the filter; ties keep NCCL's loop order
  // (algorithm index, then protocol). nullopt if nothing is enabled.
  std::optional<Choice> best(Collective c, std::uint64_t bytes, const NcclFilter& f = {}) const;

  const NcclModelInput& input() const { return in_; }

 private:
  static constexpr int kColls = 5;
  static int coll_index(Collective c);  // -1 for the unmodelled ones
  Entry& at(int coll, NcclAlgo a, Protocol p);

  NcclModelInput in_;
  std::array<Entry, kColls * kNcclAlgoCount * kProtocolCount> table_{};
};

}  // namespace collsim
