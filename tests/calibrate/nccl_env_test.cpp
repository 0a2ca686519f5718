// NCCL's environment variables in a measured run (calibrate/nccl_env.hpp): which ones collsim
// acts on, which it says it does not model, and what acting on the NVLS ones and on
// NCCL_COLLNET_ENABLE=0 does to the rows' requests (calibrate/row_model.cpp).
#include "calibrate/nccl_env.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "algorithms/generators/registry.hpp"
#include "calibrate/nccl_tests_reader.hpp"
#include "calibrate/row_model.hpp"
#include "topology/loader.hpp"

namespace collsim {
namespace {

TEST(NcclEnv, EveryVariableHasItsRole) {
  const auto role = [](std::string_view name) {
    const NcclEnvVar* v = find_nccl_env(name);
    EXPECT_NE(v, nullptr) << name;
    return v != nullptr ? v->role : NcclEnvRole::kNoCost;
  };
  EXPECT_EQ(role("NCCL_ALGO"), NcclEnvRole::kActs);
  EXPECT_EQ(role("NCCL_NVLS_CHUNKSIZE"), NcclEnvRole::kActs);
  EXPECT_EQ(role("NCCL_COLLNET_ENABLE"), NcclEnvRole::kActs);
  EXPECT_EQ(role("NCCL_IB_HCA"), NcclEnvRole::kConfig);
  EXPECT_EQ(role("NCCL_NET_GDR_LEVEL"), NcclEnvRole::kConfig);
  EXPECT_EQ(role("NCCL_DEBUG"), NcclEnvRole::kNoCost);
  EXPECT_EQ(role("NCCL_IB_GID_INDEX"), NcclEnvRole::kNoCost);
  EXPECT_EQ(role("NCCL_BUFFSIZE"), NcclEnvRole::kNotModelled);
  EXPECT_EQ(role("NCCL_IB_QPS_PER_CONNECTION"), NcclEnvRole::kNotModelled);
  EXPECT_EQ(find_nccl_env("NCCL_NO_SUCH_THING"), nullptr);
}

// Every variable NCCL reads, by the name its NCCL_PARAM or ncclGetEnv gives (src/ of v2.30.4, and
// of v2.12.12 and v2.18.3 for those since removed), is in the catalogue: none of them is called
// unknown.
TEST(NcclEnv, EveryVariableNcclReadsIsKnown) {
  const std::string names =
      "AGG_ALLOC_MODE AGG_CHANNEL_SIZE ALGO ALLGATHERV_ENABLE ALLOC_P2P_NET_LL_BUFFERS BUFFSIZE "
      "CGA_CLUSTER_SIZE CHECK_MODE CHECK_POINTERS CHUNK_SIZE COLLNET_ENABLE "
      "COLLNET_NODE_THRESHOLD COMM_BLOCKING COMM_ID COMM_SHRINK_SHARE_RESOURCES "
      "COMM_SPLIT_SHARE_RESOURCES CONF_FILE CONNECT_ROUND_MAX_PEERS CREATE_THREAD_CONTEXT "
      "CROSS_NIC CTA_POLICY CUDA_PATH CUMEM_ENABLE CUMEM_HOST_ENABLE DEBUG DEBUG_FILE "
      "DEBUG_SUBSYS DEBUG_TIMESTAMP_FORMAT DEBUG_TIMESTAMP_LEVELS DISABLE_MEM_MANAGER "
      "DMABUF_ENABLE ELASTIC_BUFFER_REGISTER ENABLE_VERSION_CHECK ENV_PLUGIN "
      "GDAKI_USE_RELIABLE_DB GDRCOPY_ENABLE GDRCOPY_FIFO_ENABLE GDRCOPY_FLUSH_ENABLE "
      "GDRCOPY_SYNC_ENABLE GDR_FLUSH_DISABLE GIN_ENABLE GIN_ERROR_QUERY_SEC "
      "GIN_GDAKI_MAX_DEST_RD_ATOMIC GIN_GDAKI_MAX_QP_RD_ATOMIC GIN_GDAKI_NIC_HANDLER "
      "GIN_GDAKI_QP_DEPTH GIN_NCONNECTIONS GIN_PLUGIN GIN_PLUGIN_REF_COUNT GIN_PROXY_QUEUE_SIZE "
      "GIN_TYPE GRAPH_DUMP_FILE GRAPH_DUMP_FILE_RANK GRAPH_FILE GRAPH_HELPER_DISABLE "
      "GRAPH_MIXING_SUPPORT GRAPH_REGISTER GROUP_CUDA_STREAM HOSTID IBVERBS_LIB "
      "IB_ADAPTIVE_ROUTING IB_ADDR_FAMILY IB_ADDR_RANGE IB_AR_THRESHOLD IB_DATA_DIRECT "
      "IB_DEVICE_PCI_ORDER IB_DISABLE IB_ECE_ENABLE IB_FIFO_TC IB_GID_INDEX IB_HCA IB_MERGE_NICS "
      "IB_MERGE_VFS IB_MQP_RETRY_ALL IB_MQP_RETRY_CNT IB_MQP_RETRY_SLEEP_MSEC IB_OOO_RQ "
      "IB_PCI_RELAXED_ORDERING IB_PKEY IB_PREPOST_RECEIVE_WORK_REQUESTS IB_QPS_PER_CONNECTION "
      "IB_RECEIVER_SIDE_MATCHING_SCHEME IB_RESILIENCY_PORT_FAILOVER "
      "IB_RESILIENCY_PORT_FAILOVER_MAX_ATTEMPTS IB_RESILIENCY_PORT_FAILOVER_PROBE_DELAY "
      "IB_RESILIENCY_PORT_RECOVERY IB_RESILIENCY_PORT_RECOVERY_ACK_TIMEOUT "
      "IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_BATCH_INTERVAL "
      "IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_BATCH_SIZE "
      "IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_SEQUENCE_SIZE "
      "IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_TIMEOUT IB_RESILIENCY_PORT_RECOVERY_ATTEMPTS_MAX "
      "IB_RESILIENCY_PORT_RECOVERY_START_DELAY IB_RETRY_CNT IB_RETURN_ASYNC_EVENTS "
      "IB_ROCE_VERSION_NUM IB_ROUTABLE_FLID_GID_INDEX IB_SL IB_SPLIT_DATA_ON_QPS IB_TC IB_TIMEOUT "
      "IB_USE_INLINE IB_WARN_RAIL_LOCAL IGNORE_COLLNET_MISMATCH IGNORE_CPU_AFFINITY "
      "IGNORE_DISABLED_P2P IGNORE_NET_MISMATCH IPC_USE_ABSTRACT_SOCKET L1_SHARED_MEMORY_CARVEOUT "
      "LAUNCH_MODE LAUNCH_ORDER_IMPLICIT LAUNCH_RACE_FATAL LEGACY_CUDA_REGISTER LL128_BUFFSIZE "
      "LL128_C2C LL128_NTHREADS LL_BUFFSIZE LOCAL_REGISTER LSA_TEAM_SIZE MAX_CTAS MAX_NCHANNELS "
      "MAX_NRINGS MAX_P2P_NCHANNELS MEM_SYNC_DOMAIN MIN_CTAS MIN_NCHANNELS MIN_NRINGS "
      "MIN_P2P_NCHANNELS MNNVL_CLIQUE_ID MNNVL_CROSS_CLIQUE MNNVL_ENABLE MNNVL_RAIL_PER_HOST "
      "MNNVL_SCATTER_NETS_ENABLE MNNVL_UUID MULTI_RANK_GPU_ENABLE MULTI_SEGMENT_REGISTER "
      "NCHANNELS_PER_NET_PEER NET NETDEVS_POLICY NET_DISABLE_INTRA NET_FORCE_FLUSH "
      "NET_FORCE_MERGE NET_GDR_C2C NET_GDR_LEVEL NET_GDR_READ NET_MERGE_LEVEL "
      "NET_OPTIONAL_RECV_COMPLETION NET_OVERHEAD NET_PLUGIN NET_PLUGIN_REF_COUNT "
      "NET_SHARED_BUFFERS NET_SHARED_COMMS NO_CACHE NSOCKS_PERTHREAD NTHREADS NUM_RMA_CTX "
      "NVB_DISABLE NVB_PRECONNECT NVLINK_UTIL_CENTRIC_SCHED_ENABLE NVLSTREE_MAX_CHUNKSIZE "
      "NVLS_CHUNKSIZE NVLS_ENABLE NVLS_NCHANNELS NVTX_DISABLE OOB_NET_ENABLE OOB_NET_IFNAME "
      "P2P_DIRECT_DISABLE P2P_DISABLE P2P_EPOCH_ENABLE P2P_LEVEL P2P_LL_THRESHOLD P2P_MAX_PEERS "
      "P2P_NET_CHUNKSIZE P2P_NVL_CHUNKSIZE P2P_PCI_CHUNKSIZE P2P_PER_CHANNEL_NET_BW P2P_PXN_LEVEL "
      "P2P_READ_ENABLE P2P_SCHEDULE_GROUP_SIZE P2P_USE_CUDA_MEMCPY PARAM_DUMP_ALL PAT_ENABLE "
      "PROFILER_PLUGIN PROGRESS_APPENDOP_FREQ PROTO PROXY_APPEND_BATCH_SIZE PROXY_CPUSET "
      "PROXY_DUMP_SIGNAL PROXY_PROFILE PXN_C2C PXN_DISABLE RAS_ADDR RAS_ENABLE RAS_TIMEOUT_FACTOR "
      "REPORT_CONNECT_PROGRESS RMA_PROXY_DUMP_SIGNAL RMA_PROXY_QUEUE_SIZE RUNTIME_CONNECT "
      "SET_CPU_STACK_SIZE SET_STACK_SIZE SET_THREAD_NAME SHM_DISABLE SHM_LOCALITY SHM_MEMCPY_MODE "
      "SHM_USE_CUDA_MEMCPY SINGLE_PROC_MEM_REG_ENABLE SOCKET_FAMILY SOCKET_IFNAME SOCKET_INLINE "
      "SOCKET_MIN_TASKSIZE SOCKET_NTHREADS SOCKET_POLL_TIMEOUT_MSEC SOCKET_RCVBUF "
      "SOCKET_RETRY_CNT SOCKET_RETRY_SLEEP_MSEC SOCKET_SNDBUF SYM_CE_THRESHOLD SYM_CTAS "
      "SYM_GIN_KERNELS_ENABLE SYM_KERNEL SYM_NOWIN_ENABLE SYM_REUSE_SYSMEM_HANDLES SYM_TMA_ENABLE "
      "THREAD_THRESHOLDS TOPO_DUMP_FILE TOPO_DUMP_FILE_RANK TOPO_FILE TUNER_PLUGIN "
      "UID_STAGGER_RATE UID_STAGGER_THRESHOLD UNPACK_DOUBLE_NCHANNELS USE_CMAKE "
      "WARN_ENABLE_DEBUG_INFO WIN_ENABLE WIN_STRIDE WORK_ARGS_BYTES WORK_FIFO_BYTES "
      "WORK_FIFO_DEPTH ";
  int known = 0;
  for (std::size_t at = 0, end; (end = names.find(' ', at)) != std::string::npos; at = end + 1) {
    const std::string name = "NCCL_" + names.substr(at, end - at);
    EXPECT_NE(find_nccl_env(name), nullptr) << name;
    ++known;
  }
  EXPECT_EQ(known, 238);
  // A family stands for the variables it begins, not for itself.
  EXPECT_EQ(find_nccl_env("NCCL_IB_RESILIENCY_PORT_FAILOVER")->role, NcclEnvRole::kNoCost);
  EXPECT_EQ(find_nccl_env("NCCL_GIN_TYPE")->role, NcclEnvRole::kNotModelled);
  EXPECT_EQ(find_nccl_env("NCCL_GDRCOPY_ENABLE")->default_value, "0");  // its own entry first
}

TEST(NcclEnv, WhatCollsimDoesNotModelIsSaidWithItsValue) {
  const NcclRelease v230 = parse_nccl_release("2.30");
  const std::map<std::string, std::string> gb200 = {{"NCCL_DEBUG", "WARN"},
                                                    {"NCCL_MNNVL_ENABLE", "1"},
                                                    {"NCCL_BUFFSIZE", "16777216"},
                                                    {"NCCL_IB_QPS_PER_CONNECTION", "4"},
                                                    {"NCCL_IB_SPLIT_DATA_ON_QPS", "0"},
                                                    {"NCCL_NVLS_ENABLE", "0"},
                                                    {"UCX_NET_DEVICES", "mlx5_0:1"},
                                                    {"NCCL_FUTURE_KNOB", "7"}};
  EXPECT_EQ(
      unmodelled_nccl_env(gb200, Collective::kAllReduce, true, v230),
      (std::vector<std::string>{"NCCL_BUFFSIZE=16777216", "NCCL_FUTURE_KNOB=7 (unknown to collsim)",
                                "NCCL_IB_QPS_PER_CONNECTION=4"}));
  // The network's variables say nothing of a run on one node.
  EXPECT_EQ(unmodelled_nccl_env(gb200, Collective::kAllReduce, false, v230),
            (std::vector<std::string>{"NCCL_BUFFSIZE=16777216",
                                      "NCCL_FUTURE_KNOB=7 (unknown to collsim)"}));
  // NCCL's default is no change: 4 MiB written either way, one queue pair; before 2.20 NCCL split
  // the data over its queue pairs by default, so 0 then is a change.
  const std::map<std::string, std::string> defaults = {{"NCCL_BUFFSIZE", "4194304"},
                                                       {"NCCL_IB_QPS_PER_CONNECTION", "1"},
                                                       {"NCCL_IB_SPLIT_DATA_ON_QPS", "0"}};
  EXPECT_TRUE(unmodelled_nccl_env(defaults, Collective::kAllReduce, true, v230).empty());
  EXPECT_EQ(unmodelled_nccl_env(defaults, Collective::kAllReduce, true, parse_nccl_release("2.19")),
            (std::vector<std::string>{"NCCL_IB_SPLIT_DATA_ON_QPS=0"}));
  // A point-to-point variable matters to NCCL's p2p kernel only.
  const std::map<std::string, std::string> p2p = {{"NCCL_P2P_NET_CHUNKSIZE", "524288"}};
  EXPECT_TRUE(unmodelled_nccl_env(p2p, Collective::kAllReduce, true, v230).empty());
  EXPECT_EQ(unmodelled_nccl_env(p2p, Collective::kAllToAll, true, v230),
            (std::vector<std::string>{"NCCL_P2P_NET_CHUNKSIZE=524288"}));
}

TEST(NcclEnv, SizesAsNcclTakesThem) {
  EXPECT_EQ(nccl_env_bytes("131072"), 131072u);
  EXPECT_EQ(nccl_env_bytes(" 65536 "), 65536u);
  EXPECT_EQ(nccl_env_bytes("512KiB"), 524288u);    // a curated file's notation
  EXPECT_FALSE(nccl_env_bytes("-2").has_value());  // NCCL_NVLSTREE_MAX_CHUNKSIZE's default
  EXPECT_FALSE(nccl_env_bytes("0").has_value());
  EXPECT_FALSE(nccl_env_bytes("big").has_value());
  EXPECT_FALSE(nccl_env_bytes("").has_value());
}

// One AllReduce row of `bytes` on all of `topo`'s GPUs (300 us, its algbw and busbw to match),
// run under `env`.
FilePlan allreduce_row(const Topology& topo, const std::string& env, std::uint64_t bytes) {
  const int n = topo.rank_count();
  const double algbw = static_cast<double>(bytes) / 300e-6 / 1e9;
  const double busbw = algbw * 2 * (n - 1) / n;
  const std::string row = fmt::format(
      "  {}  {}  float  sum  -1  300.00  {:.2f}  {:.2f}  0  300.00  "
      "{:.2f}  {:.2f}  0\n",
      bytes, bytes / 4, algbw, busbw, algbw, busbw);
  return plan_measurements(
      topo, parse_measurements((env.empty() ? "" : "# env: " + env + "\n") +
                                   "# Collective test starting: all_reduce_perf\n" + row,
                               "row.txt"));
}

TEST(NcclEnv, NvlsChunkAndChannelsAreTheRunsOwn) {
  const Topology topo = load_topology("dgx-h100");
  const FilePlan plain = allreduce_row(topo, "", 64 << 20);
  ASSERT_EQ(plain.cases.size(), 1u);
  ASSERT_EQ(plain.cases[0].request.algorithm, "nvls");
  EXPECT_EQ(plain.cases[0].request.nvls_chunk_bytes, 131072u);  // NCCL_NVLS_CHUNKSIZE's default
  EXPECT_EQ(plain.cases[0].request.channels, 16);               // Hopper's NVLS channels

  const FilePlan set =
      allreduce_row(topo, "NCCL_NVLS_CHUNKSIZE=65536 NCCL_NVLS_NCHANNELS=8", 64 << 20);
  ASSERT_EQ(set.cases.size(), 1u);
  const Request& r = set.cases[0].request;
  EXPECT_EQ(r.algorithm, "nvls");
  EXPECT_EQ(r.nvls_chunk_bytes, 65536u);
  EXPECT_EQ(r.channels, 8);
  EXPECT_LE(chunking(r).chunk_bytes, 65536u);
  // NCCL_MIN_CTAS still bounds the NVLS channels from below (transport/nvls.cc).
  const FilePlan bounded = allreduce_row(topo, "NCCL_NVLS_NCHANNELS=8 NCCL_MIN_CTAS=12", 64 << 20);
  ASSERT_EQ(bounded.cases.size(), 1u);
  EXPECT_EQ(bounded.cases[0].request.channels, 12);
}

TEST(NcclEnv, CollNetDisabledLeavesTheSharpSwitchesIdle) {
  // h100-16node-sharp: SHARP switches, NCCL's CollNet on (network.sharp). A 1 GiB AllReduce
  // there runs NVLS across the nodes, which NCCL runs only with CollNet; NCCL_COLLNET_ENABLE=0
  // leaves NCCL NVLSTree, Tree or Ring.
  const Topology topo = load_topology("h100-16node-sharp");
  const auto algo = [&](const std::string& env) {
    const FilePlan p = allreduce_row(topo, env, std::uint64_t{1} << 30);
    EXPECT_EQ(p.cases.size(), 1u);
    return p.cases.empty() ? std::string() : p.cases[0].request.algorithm;
  };
  const std::string on = algo("");
  const std::string off = algo("NCCL_COLLNET_ENABLE=0");
  EXPECT_TRUE(on == "nvls" || is_collnet(find_algorithm(on).family)) << on;
  EXPECT_FALSE(off == "nvls" || is_collnet(find_algorithm(off).family)) << off;
  EXPECT_EQ(algo("NCCL_COLLNET_ENABLE=1"), on);
}

}  // namespace
}  // namespace collsim
