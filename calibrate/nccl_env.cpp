#include "calibrate/nccl_env.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>

#include "topology/units.hpp"

namespace collsim {

namespace {

using R = NcclEnvRole;
using S = NcclEnvScope;

// The variables NCCL reads (its NCCL_PARAM declarations and ncclGetEnv calls, src/ of v2.12 to
// v2.30.4), and the NCCL_-prefixed ones PyTorch reads, by name. Defaults are NCCL's NCCL_PARAM
// values (BUFFSIZE's -2 is DEFAULT_BUFFSIZE, 4 MiB, src/init.cc; LL_BUFFSIZE and LL128_BUFFSIZE
// are DEFAULT_LL_BUFFSIZE and DEFAULT_LL128_BUFFSIZE, the FIFO sizes of algorithms/ir/types.hpp).
// Where a default moved: IB_SPLIT_DATA_ON_QPS 1 to 0 in 2.20, NET_FORCE_FLUSH 1 to 0 in 2.19
// (src/transport/net_ib.cc, src/transport/net.cc of v2.18.3, v2.19.3 and v2.20.3).
constexpr std::array kVars = std::to_array<NcclEnvVar>({
    // What collsim does as NCCL does (calibrate/row_model.cpp, calibrate/nccl_tests_resolve.cpp).
    {"NCCL_ALGO", R::kActs},
    {"NCCL_COLLNET_ENABLE", R::kActs},  // 0 turns CollNet off; 1 needs network.sharp
    {"NCCL_MAX_CTAS", R::kActs},
    {"NCCL_MAX_NCHANNELS", R::kActs},
    {"NCCL_MIN_CTAS", R::kActs},
    {"NCCL_MIN_NCHANNELS", R::kActs},
    {"NCCL_NVLSTREE_MAX_CHUNKSIZE", R::kActs},
    {"NCCL_NVLS_CHUNKSIZE", R::kActs},
    {"NCCL_NVLS_ENABLE", R::kActs},
    {"NCCL_NVLS_NCHANNELS", R::kActs},
    {"NCCL_PROTO", R::kActs},

    // What the cluster's config says instead: the NICs used and their transport (node.nics),
    // GPUDirect RDMA (network.gdr), PXN (network.pxn), the fabric's routing (network.routing),
    // PCIe peer-to-peer (node.pcie.p2p), the NVLink domain (node.nvlink.domain_nodes).
    {"NCCL_IB_ADAPTIVE_ROUTING", R::kConfig, S::kAcrossNodes},
    {"NCCL_IB_HCA", R::kConfig, S::kAcrossNodes},
    {"NCCL_IB_MERGE_NICS", R::kConfig, S::kAcrossNodes},
    {"NCCL_IB_MERGE_VFS", R::kConfig, S::kAcrossNodes},
    {"NCCL_IBEXT_DISABLE", R::kConfig, S::kAcrossNodes},
    {"NCCL_MNNVL_ENABLE", R::kConfig},
    {"NCCL_NET", R::kConfig, S::kAcrossNodes},
    {"NCCL_NET_FORCE_MERGE", R::kConfig, S::kAcrossNodes},
    {"NCCL_NET_GDR_C2C", R::kConfig, S::kAcrossNodes},
    {"NCCL_NET_GDR_LEVEL", R::kConfig, S::kAcrossNodes},
    {"NCCL_NET_MERGE_LEVEL", R::kConfig, S::kAcrossNodes},
    {"NCCL_NET_PLUGIN", R::kConfig, S::kAcrossNodes},
    {"NCCL_P2P_LEVEL", R::kConfig},
    {"NCCL_PXN_DISABLE", R::kConfig, S::kAcrossNodes},

    // Nothing a collective costs: logging, naming, addressing, fault handling, registration
    // mechanisms, PyTorch's own.
    {"NCCL_ASYNC_ERROR_HANDLING", R::kNoCost},
    {"NCCL_BLOCKING_WAIT", R::kNoCost},
    {"NCCL_CHECK_MODE", R::kNoCost},
    {"NCCL_COMM_BLOCKING", R::kNoCost},
    {"NCCL_COMM_ID", R::kNoCost},
    {"NCCL_CONF_FILE", R::kNoCost},
    {"NCCL_CUMEM_ENABLE", R::kNoCost},
    {"NCCL_CUMEM_HOST_ENABLE", R::kNoCost},
    {"NCCL_DEBUG", R::kNoCost},
    {"NCCL_DEBUG_FILE", R::kNoCost},
    {"NCCL_DEBUG_SUBSYS", R::kNoCost},
    {"NCCL_DEBUG_TIMESTAMP_FORMAT", R::kNoCost},
    {"NCCL_DEBUG_TIMESTAMP_LEVELS", R::kNoCost},
    {"NCCL_DMABUF_ENABLE", R::kNoCost},
    {"NCCL_ENABLE_VERSION_CHECK", R::kNoCost},
    {"NCCL_GRAPH_DUMP_FILE", R::kNoCost},
    {"NCCL_GRAPH_DUMP_FILE_RANK", R::kNoCost},
    {"NCCL_HOSTID", R::kNoCost},
    {"NCCL_IBVERBS_LIB", R::kNoCost},
    {"NCCL_IB_ADDR_FAMILY", R::kNoCost},
    {"NCCL_IB_ADDR_RANGE", R::kNoCost},
    {"NCCL_IB_FIFO_TC", R::kNoCost},
    {"NCCL_IB_GID_INDEX", R::kNoCost},
    {"NCCL_IB_PKEY", R::kNoCost},
    {"NCCL_IB_RETRY_CNT", R::kNoCost},
    {"NCCL_IB_RETURN_ASYNC_EVENTS", R::kNoCost},
    {"NCCL_IB_ROCE_VERSION_NUM", R::kNoCost},
    {"NCCL_IB_ROUTABLE_FLID_GID_INDEX", R::kNoCost},
    {"NCCL_IB_SL", R::kNoCost},
    {"NCCL_IB_TC", R::kNoCost},
    {"NCCL_IB_TIMEOUT", R::kNoCost},
    {"NCCL_IB_WARN_RAIL_LOCAL", R::kNoCost},
    {"NCCL_IGNORE_COLLNET_MISMATCH", R::kNoCost},
    {"NCCL_IGNORE_NET_MISMATCH", R::kNoCost},
    {"NCCL_IPC_USE_ABSTRACT_SOCKET", R::kNoCost},
    {"NCCL_MNNVL_CLIQUE_ID", R::kNoCost},
    {"NCCL_MNNVL_UUID", R::kNoCost},
    {"NCCL_NVTX_DISABLE", R::kNoCost},
    {"NCCL_OOB_NET_ENABLE", R::kNoCost},
    {"NCCL_OOB_NET_IFNAME", R::kNoCost},
    {"NCCL_PARAM_DUMP_ALL", R::kNoCost},
    {"NCCL_PROXY_DUMP_SIGNAL", R::kNoCost},
    {"NCCL_REPORT_CONNECT_PROGRESS", R::kNoCost},
    {"NCCL_SET_CPU_STACK_SIZE", R::kNoCost},
    {"NCCL_SET_STACK_SIZE", R::kNoCost},
    {"NCCL_SET_THREAD_NAME", R::kNoCost},
    {"NCCL_SOCKET_FAMILY", R::kNoCost},
    {"NCCL_SOCKET_IFNAME", R::kNoCost},
    {"NCCL_SOCKET_POLL_TIMEOUT_MSEC", R::kNoCost},
    {"NCCL_SOCKET_RETRY_CNT", R::kNoCost},
    {"NCCL_SOCKET_RETRY_SLEEP_MSEC", R::kNoCost},
    {"NCCL_TOPO_DUMP_FILE", R::kNoCost},
    {"NCCL_TOPO_DUMP_FILE_RANK", R::kNoCost},
    {"NCCL_UID_STAGGER_RATE", R::kNoCost},
    {"NCCL_UID_STAGGER_THRESHOLD", R::kNoCost},
    {"NCCL_WARN_ENABLE_DEBUG_INFO", R::kNoCost},
    {"NCCL_COMM_SHRINK_SHARE_RESOURCES", R::kNoCost},
    {"NCCL_COMM_SPLIT_SHARE_RESOURCES", R::kNoCost},
    {"NCCL_CONNECT_ROUND_MAX_PEERS", R::kNoCost},
    {"NCCL_CREATE_THREAD_CONTEXT", R::kNoCost},
    {"NCCL_CUDA_PATH", R::kNoCost},
    {"NCCL_ENV_PLUGIN", R::kNoCost},
    {"NCCL_IB_MQP_RETRY_", R::kNoCost},  // a family: every variable the name begins
    {"NCCL_IB_RESILIENCY_", R::kNoCost},
    {"NCCL_IGNORE_DISABLED_P2P", R::kNoCost},
    {"NCCL_LAUNCH_RACE_FATAL", R::kNoCost},
    {"NCCL_NET_PLUGIN_REF_COUNT", R::kNoCost},
    {"NCCL_NO_CACHE", R::kNoCost},
    {"NCCL_NVB_PRECONNECT", R::kNoCost},
    {"NCCL_PROXY_PROFILE", R::kNoCost},
    {"NCCL_RAS_", R::kNoCost},
    {"NCCL_RMA_PROXY_DUMP_SIGNAL", R::kNoCost},
    {"NCCL_RUNTIME_CONNECT", R::kNoCost},
    {"NCCL_USE_CMAKE", R::kNoCost},  // NCCL's build, not its run

    // What NCCL does differently, and collsim does not model: buffers and threads, the network
    // transport's queue pairs and flushes, transports turned off, topology and tuner overrides.
    {"NCCL_BUFFSIZE", R::kNotModelled, S::kAll, "4194304"},
    {"NCCL_CGA_CLUSTER_SIZE", R::kNotModelled},
    {"NCCL_CHECK_POINTERS", R::kNotModelled, S::kAll, "0"},
    {"NCCL_CHUNK_SIZE", R::kNotModelled},
    {"NCCL_COLLNET_NODE_THRESHOLD", R::kNotModelled, S::kAcrossNodes},
    {"NCCL_CROSS_NIC", R::kNotModelled, S::kAcrossNodes, "2"},
    {"NCCL_CTA_POLICY", R::kNotModelled},
    {"NCCL_GDRCOPY_ENABLE", R::kNotModelled, S::kAcrossNodes, "0"},
    {"NCCL_GDR_FLUSH_DISABLE", R::kNotModelled, S::kAcrossNodes, "0"},
    {"NCCL_GRAPH_FILE", R::kNotModelled},
    {"NCCL_GRAPH_REGISTER", R::kNotModelled},
    {"NCCL_IB_AR_THRESHOLD", R::kNotModelled, S::kAcrossNodes, "8192"},
    {"NCCL_IB_DISABLE", R::kNotModelled, S::kAcrossNodes, "0"},
    {"NCCL_IB_PCI_RELAXED_ORDERING", R::kNotModelled, S::kAcrossNodes, "2"},
    {"NCCL_IB_QPS_PER_CONNECTION", R::kNotModelled, S::kAcrossNodes, "1"},
    {"NCCL_IB_SPLIT_DATA_ON_QPS", R::kNotModelled, S::kAcrossNodes, "1", 20, "0"},
    {"NCCL_IB_USE_INLINE", R::kNotModelled, S::kAcrossNodes, "0"},
    {"NCCL_IGNORE_CPU_AFFINITY", R::kNotModelled, S::kAll, "0"},
    {"NCCL_LAUNCH_MODE", R::kNotModelled, S::kAll, "PARALLEL"},
    {"NCCL_LL128_BUFFSIZE", R::kNotModelled, S::kAll, "4915200"},
    {"NCCL_LL128_NTHREADS", R::kNotModelled},
    {"NCCL_LL_BUFFSIZE", R::kNotModelled, S::kAll, "524288"},
    {"NCCL_LL_THRESHOLD", R::kNotModelled},
    {"NCCL_LOCAL_REGISTER", R::kNotModelled},
    {"NCCL_MAX_NRINGS", R::kNotModelled},
    {"NCCL_MAX_P2P_NCHANNELS", R::kNotModelled, S::kPointToPoint},
    {"NCCL_MIN_NRINGS", R::kNotModelled},
    {"NCCL_MIN_P2P_NCHANNELS", R::kNotModelled, S::kPointToPoint},
    {"NCCL_NCHANNELS_PER_NET_PEER", R::kNotModelled, S::kPointToPoint},
    {"NCCL_NET_FORCE_FLUSH", R::kNotModelled, S::kAcrossNodes, "1", 19, "0"},
    {"NCCL_NET_GDR_READ", R::kNotModelled, S::kAcrossNodes},
    {"NCCL_NET_OVERHEAD", R::kNotModelled, S::kAcrossNodes},
    {"NCCL_NET_SHARED_BUFFERS", R::kNotModelled, S::kAcrossNodes},
    {"NCCL_NET_SHARED_COMMS", R::kNotModelled, S::kAcrossNodes},
    {"NCCL_NSOCKS_PERTHREAD", R::kNotModelled, S::kAcrossNodes},
    {"NCCL_NTHREADS", R::kNotModelled},
    {"NCCL_NVB_DISABLE", R::kNotModelled, S::kAll, "0"},
    {"NCCL_P2P_DIRECT_DISABLE", R::kNotModelled, S::kAll, "0"},
    {"NCCL_P2P_DISABLE", R::kNotModelled, S::kAll, "0"},
    {"NCCL_P2P_LL_THRESHOLD", R::kNotModelled, S::kPointToPoint, "16384"},
    {"NCCL_P2P_NET_CHUNKSIZE", R::kNotModelled, S::kPointToPoint, "131072"},
    {"NCCL_P2P_NVL_CHUNKSIZE", R::kNotModelled, S::kPointToPoint, "524288"},
    {"NCCL_P2P_PCI_CHUNKSIZE", R::kNotModelled, S::kPointToPoint, "131072"},
    {"NCCL_P2P_PXN_LEVEL", R::kNotModelled, S::kAcrossNodes},
    {"NCCL_P2P_READ_ENABLE", R::kNotModelled},
    {"NCCL_P2P_USE_CUDA_MEMCPY", R::kNotModelled, S::kAll, "0"},
    {"NCCL_PAT_ENABLE", R::kNotModelled},
    {"NCCL_PROFILER_PLUGIN", R::kNotModelled},
    {"NCCL_PROXY_CPUSET", R::kNotModelled, S::kAcrossNodes},
    {"NCCL_PXN_C2C", R::kNotModelled, S::kAcrossNodes},
    {"NCCL_SHM_DISABLE", R::kNotModelled, S::kAll, "0"},
    {"NCCL_SHM_USE_CUDA_MEMCPY", R::kNotModelled, S::kAll, "0"},
    {"NCCL_SINGLE_RING_THRESHOLD", R::kNotModelled},
    {"NCCL_SOCKET_NTHREADS", R::kNotModelled, S::kAcrossNodes},
    {"NCCL_THREAD_THRESHOLDS", R::kNotModelled},
    {"NCCL_TOPO_FILE", R::kNotModelled},
    {"NCCL_TREE_THRESHOLD", R::kNotModelled},
    {"NCCL_TUNER_PLUGIN", R::kNotModelled},
    {"NCCL_WORK_ARGS_BYTES", R::kNotModelled},
    {"NCCL_WORK_FIFO_BYTES", R::kNotModelled},
    {"NCCL_AGG_ALLOC_MODE", R::kNotModelled},
    {"NCCL_AGG_CHANNEL_SIZE", R::kNotModelled},
    {"NCCL_ALLGATHERV_ENABLE", R::kNotModelled},
    {"NCCL_ALLOC_P2P_NET_LL_BUFFERS", R::kNotModelled, S::kPointToPoint, "0"},
    {"NCCL_DISABLE_MEM_MANAGER", R::kNotModelled},
    {"NCCL_ELASTIC_BUFFER_REGISTER", R::kNotModelled},
    {"NCCL_GDAKI_", R::kNotModelled, S::kAcrossNodes},
    {"NCCL_GDRCOPY_", R::kNotModelled, S::kAcrossNodes},
    {"NCCL_GIN_", R::kNotModelled, S::kAcrossNodes},
    {"NCCL_GRAPH_HELPER_DISABLE", R::kNotModelled},
    {"NCCL_GRAPH_MIXING_SUPPORT", R::kNotModelled},
    {"NCCL_GROUP_CUDA_STREAM", R::kNotModelled},
    {"NCCL_IB_DATA_DIRECT", R::kNotModelled, S::kAcrossNodes},
    {"NCCL_IB_DEVICE_PCI_ORDER", R::kNotModelled, S::kAcrossNodes},
    {"NCCL_IB_ECE_ENABLE", R::kNotModelled, S::kAcrossNodes},
    {"NCCL_IB_OOO_RQ", R::kNotModelled, S::kAcrossNodes},
    {"NCCL_IB_PREPOST_RECEIVE_WORK_REQUESTS", R::kNotModelled, S::kAcrossNodes},
    {"NCCL_IB_RECEIVER_SIDE_MATCHING_SCHEME", R::kNotModelled, S::kAcrossNodes},
    {"NCCL_L1_SHARED_MEMORY_CARVEOUT", R::kNotModelled},
    {"NCCL_LAUNCH_ORDER_IMPLICIT", R::kNotModelled},
    {"NCCL_LEGACY_CUDA_REGISTER", R::kNotModelled},
    {"NCCL_LL128_C2C", R::kNotModelled},
    {"NCCL_LSA_TEAM_SIZE", R::kNotModelled},
    {"NCCL_MEM_SYNC_DOMAIN", R::kNotModelled},
    {"NCCL_MNNVL_CROSS_CLIQUE", R::kNotModelled},
    {"NCCL_MNNVL_RAIL_PER_HOST", R::kNotModelled},
    {"NCCL_MNNVL_SCATTER_NETS_ENABLE", R::kNotModelled},
    {"NCCL_MULTI_RANK_GPU_ENABLE", R::kNotModelled},
    {"NCCL_MULTI_SEGMENT_REGISTER", R::kNotModelled},
    {"NCCL_NETDEVS_POLICY", R::kNotModelled, S::kAcrossNodes},
    {"NCCL_NET_DISABLE_INTRA", R::kNotModelled},
    {"NCCL_NET_OPTIONAL_RECV_COMPLETION", R::kNotModelled, S::kAcrossNodes},
    {"NCCL_NUM_RMA_CTX", R::kNotModelled},
    {"NCCL_NVLINK_UTIL_CENTRIC_SCHED_ENABLE", R::kNotModelled},
    {"NCCL_P2P_EPOCH_ENABLE", R::kNotModelled, S::kPointToPoint},
    {"NCCL_P2P_MAX_PEERS", R::kNotModelled, S::kPointToPoint},
    {"NCCL_P2P_PER_CHANNEL_NET_BW", R::kNotModelled, S::kPointToPoint},
    {"NCCL_P2P_SCHEDULE_GROUP_SIZE", R::kNotModelled, S::kPointToPoint},
    {"NCCL_PROGRESS_APPENDOP_FREQ", R::kNotModelled, S::kAcrossNodes},
    {"NCCL_PROXY_APPEND_BATCH_SIZE", R::kNotModelled, S::kAcrossNodes},
    {"NCCL_RMA_PROXY_QUEUE_SIZE", R::kNotModelled},
    {"NCCL_SHM_LOCALITY", R::kNotModelled},
    {"NCCL_SHM_MEMCPY_MODE", R::kNotModelled},
    {"NCCL_SINGLE_PROC_MEM_REG_ENABLE", R::kNotModelled},
    {"NCCL_SOCKET_INLINE", R::kNotModelled, S::kAcrossNodes},
    {"NCCL_SOCKET_MIN_TASKSIZE", R::kNotModelled, S::kAcrossNodes},
    {"NCCL_SOCKET_RCVBUF", R::kNotModelled, S::kAcrossNodes},
    {"NCCL_SOCKET_SNDBUF", R::kNotModelled, S::kAcrossNodes},
    {"NCCL_SYM_", R::kNotModelled},
    {"NCCL_UNPACK_DOUBLE_NCHANNELS", R::kNotModelled},
    {"NCCL_WIN_", R::kNotModelled},
    {"NCCL_WORK_FIFO_DEPTH", R::kNotModelled},
});

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Whether `value` is `def`: the same integer (NCCL reads them with strtoll), else the same word.
bool same_value(std::string_view value, std::string_view def) {
  value = trimmed(value);
  long long a = 0, b = 0;
  const auto [pa, ea] = std::from_chars(value.data(), value.data() + value.size(), a);
  const auto [pb, eb] = std::from_chars(def.data(), def.data() + def.size(), b);
  if (ea == std::errc() && eb == std::errc() && pa == value.data() + value.size() &&
      pb == def.data() + def.size()) {
    return a == b;
  }
  return upper(value) == upper(def);
}

bool in_scope(const NcclEnvVar& v, Collective c, bool across_nodes) {
  switch (v.scope) {
    case S::kAll:
      return true;
    case S::kAcrossNodes:
      return across_nodes;
    case S::kPointToPoint:
      return is_nccl_p2p(c);
  }
  return true;
}

}  // namespace

const NcclEnvVar* find_nccl_env(std::string_view name) {
  const auto it =
      std::find_if(kVars.begin(), kVars.end(), [&](const NcclEnvVar& v) { return v.name == name; });
  if (it != kVars.end()) return &*it;
  // An entry ending in '_' stands for every variable it begins (NCCL_IB_RESILIENCY_...): no
  // variable's own name ends so.
  const auto family = std::find_if(kVars.begin(), kVars.end(), [&](const NcclEnvVar& v) {
    return v.name.ends_with('_') && name.starts_with(v.name) && name.size() > v.name.size();
  });
  return family == kVars.end() ? nullptr : &*family;
}

std::vector<std::string> unmodelled_nccl_env(const std::map<std::string, std::string>& env,
                                             Collective c, bool across_nodes, NcclRelease release) {
  std::vector<std::string> out;
  for (const auto& [name, value] : env) {
    if (!name.starts_with("NCCL_")) continue;  // the launcher's, CUDA's, the network plugin's
    const NcclEnvVar* v = find_nccl_env(name);
    if (v == nullptr) {
      out.push_back(name + "=" + value + " (unknown to collsim)");
      continue;
    }
    if (v->role != R::kNotModelled || !in_scope(*v, c, across_nodes)) continue;
    const std::string_view def =
        v->changed_in != 0 && release.at_least(v->changed_in) ? v->default_from : v->default_value;
    if (!def.empty() && same_value(value, def)) continue;
    out.push_back(name + "=" + value);
  }
  return out;
}

namespace {

std::optional<int> positive(const std::map<std::string, std::string>& env, const char* key) {
  const auto it = env.find(key);
  if (it == env.end()) return std::nullopt;
  return nccl_env_count(trimmed(it->second));
}

std::optional<std::uint64_t> bytes(const std::map<std::string, std::string>& env, const char* key) {
  const auto it = env.find(key);
  return it == env.end() ? std::nullopt : nccl_env_bytes(it->second);
}

bool is_zero(const std::map<std::string, std::string>& env, const char* key) {
  const auto it = env.find(key);
  return it != env.end() && trimmed(it->second) == "0";
}

}  // namespace

NcclEnvSettings nccl_env_settings(const std::map<std::string, std::string>& env) {
  NcclEnvSettings s;
  s.min_nchannels = positive(env, "NCCL_MIN_NCHANNELS");
  s.max_nchannels = positive(env, "NCCL_MAX_NCHANNELS");
  s.min_ctas = positive(env, "NCCL_MIN_CTAS");
  s.max_ctas = positive(env, "NCCL_MAX_CTAS");
  s.nvls_nchannels = positive(env, "NCCL_NVLS_NCHANNELS");
  s.nvls_chunk = bytes(env, "NCCL_NVLS_CHUNKSIZE");
  s.nvls_tree_max_chunk = bytes(env, "NCCL_NVLSTREE_MAX_CHUNKSIZE");
  s.nvls_off = is_zero(env, "NCCL_NVLS_ENABLE");
  s.collnet_off = is_zero(env, "NCCL_COLLNET_ENABLE");
  return s;
}

int NcclEnvSettings::comm_channels(int nccl, int most) const {
  const int lo = std::min(std::max(min_nchannels.value_or(1), min_ctas.value_or(1)), most);
  const int hi = std::min({max_nchannels.value_or(most), max_ctas.value_or(most), most});
  return std::clamp(nccl, lo, std::max(lo, hi));
}

int NcclEnvSettings::nvls_channels(int nccl, int most) const {
  return std::max(min_ctas.value_or(1),
                  std::min(max_ctas.value_or(most), nvls_nchannels.value_or(nccl)));
}

void NcclEnvSettings::apply(NcclModelInput& in, int most) const {
  if (nvls_off) in.nvls.reset();
  if (collnet_off) {
    in.collnet_direct.reset();
    in.collnet_chain.reset();
  }
  in.nvls_channels = nvls_channels(in.nvls_channels, most);
  if (nvls_chunk) in.nvls_chunk = *nvls_chunk;
  if (nvls_tree_max_chunk) in.nvls_tree_max_chunk = *nvls_tree_max_chunk;
}

std::optional<int> nccl_env_count(std::string_view value) {
  int n = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc() || end != value.data() + value.size() || n < 1) return std::nullopt;
  return n;
}

std::optional<std::uint64_t> nccl_env_bytes(std::string_view value) {
  value = trimmed(value);
  if (value.empty()) return std::nullopt;
  try {
    const std::uint64_t b = parse_bytes(value).count();
    if (b == 0) return std::nullopt;
    return b;
  } catch (const UnitError&) {
    return std::nullopt;
  }
}

}  // namespace collsim
