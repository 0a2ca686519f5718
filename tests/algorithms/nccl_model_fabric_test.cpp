// NCCL's tuning model on the fabric's own features: CollNet and NVLS across nodes where the
// switches reduce (network.sharp), CollNet's GPU limit, EFA's protocols and chunks, LL128's NIC
// placement rule.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "algorithms/ir/communicator.hpp"
#include "algorithms/models/nccl_model.hpp"
#include "topology/loader.hpp"

namespace collsim {
namespace {

// CollNet where the fabric runs it (network.sharp): tuning.cc's rules on the graphs collsim
// estimates. DGX H100 nodes, one NIC per GPU: 8 heads, so CollNetDirect keeps its full speed
// (GPU/NIC ratio 1) times Hopper's 0.85, and both are halved into algorithm bandwidth; latency
// 2 (3.7 + 7 x 0.4) + 31 us (direct) and 2 x 7 x 2.8 + 30 us (chain), the built-in IB plugin
// reporting no NIC latency.
TEST(NcclModel, CostsCollNetOnASharpFabric) {
  const Topology t = load_topology("h100-16node-sharp", LoadOptions{4});
  const NcclModelInput in = nccl_model_input(t, Communicator::from_topology(t), NcclVersion::k2_30);
  ASSERT_TRUE(in.collnet_direct.has_value());
  ASSERT_TRUE(in.collnet_chain.has_value());
  EXPECT_EQ(in.collnet_direct->channels, 8);
  EXPECT_EQ(in.collnet_chain->channels, in.ring->channels);
  EXPECT_EQ(in.collnet_chain->bw_intra, in.tree->bw_intra);  // raised as for trees
  const NcclModel m(in);
  const auto& direct = m.entry(Collective::kAllReduce, NcclAlgo::kCollNetDirect, Protocol::kSimple);
  ASSERT_TRUE(direct.enabled);
  EXPECT_NEAR(direct.latency_us, 2 * (3.7 + 7 * 0.4) + 31, 1e-9);
  EXPECT_NEAR(direct.bandwidth_GBps, 8 * in.collnet_direct->bw_intra * 0.85 * 0.5, 1e-9);
  const auto& chain = m.entry(Collective::kAllReduce, NcclAlgo::kCollNetChain, Protocol::kSimple);
  ASSERT_TRUE(chain.enabled);
  EXPECT_NEAR(chain.latency_us, 2 * 7 * 2.8 + 30, 1e-9);
  EXPECT_NEAR(chain.bandwidth_GBps, in.ring->channels * in.collnet_chain->bw_intra * 0.5, 1e-9);
  // Simple only; the chain AllReduce only.
  EXPECT_FALSE(m.entry(Collective::kAllReduce, NcclAlgo::kCollNetDirect, Protocol::kLL).enabled);
  EXPECT_FALSE(m.entry(Collective::kAllGather, NcclAlgo::kCollNetChain, Protocol::kSimple).enabled);
  // CollNetDirect's AllGather and ReduceScatter (2.23+, the SHARP plugin's iallgather /
  // ireducescatter): every GPU a head, 8 x min(bwIntra, 0.9 bwInter) from 2.27, kept as
  // algorithm bandwidth; the AllReduce's latency.
  for (Collective c : {Collective::kAllGather, Collective::kReduceScatter}) {
    const auto& e = m.entry(c, NcclAlgo::kCollNetDirect, Protocol::kSimple);
    ASSERT_TRUE(e.enabled) << to_string(c);
    EXPECT_NEAR(e.bandwidth_GBps,
                8 * std::min(in.collnet_direct->bw_intra, 0.9 * in.collnet_direct->bw_inter), 1e-9);
    EXPECT_NEAR(e.latency_us, direct.latency_us, 1e-9);
  }
  // 2.23 to 2.26: 8 x bwIntra x 0.85 (the correction interpolated at eight GPUs a node); 2.22:
  // none.
  NcclModelInput in26 =
      nccl_model_input(t, Communicator::from_topology(t), parse_nccl_release("2.26.2"));
  EXPECT_NEAR(NcclModel(in26)
                  .entry(Collective::kAllGather, NcclAlgo::kCollNetDirect, Protocol::kSimple)
                  .bandwidth_GBps,
              8 * in26.collnet_direct->bw_intra * 0.85, 1e-9);
  NcclModelInput in22 =
      nccl_model_input(t, Communicator::from_topology(t), parse_nccl_release("2.22.3"));
  EXPECT_FALSE(NcclModel(in22)
                   .entry(Collective::kAllGather, NcclAlgo::kCollNetDirect, Protocol::kSimple)
                   .enabled);
  // Without SHARP, as on the same cluster with it off, NCCL never costs CollNet.
  const Topology off = load_topology("h100-16node-ib", LoadOptions{4});
  const NcclModel m_off(
      nccl_model_input(off, Communicator::from_topology(off), NcclVersion::k2_30));
  EXPECT_FALSE(
      m_off.entry(Collective::kAllReduce, NcclAlgo::kCollNetDirect, Protocol::kSimple).enabled);
}

// NVLS across nodes runs with CollNet only (tuning.cc, enqueue.cc), AllGather and ReduceScatter
// from 2.27 (with the SHARP plugin's iallgather / ireducescatter), with NCCL's NVLS latency: the
// NVLink and network hwLat of NVLS (Simple) and no base latency. Its chunk is at most 32 KiB
// where the model gives it less than 150 GB/s (enqueue.cc, 2.19+): with two GPUs of each node,
// two heads of 48 GB/s.
TEST(NcclModel, NvlsAcrossNodesNeedsCollNet) {
  const Topology t = load_topology("h100-16node-sharp", LoadOptions{4});
  const NcclModelInput in = nccl_model_input(t, Communicator::from_topology(t), NcclVersion::k2_30);
  const NcclModel m(in);
  const auto& ar = m.entry(Collective::kAllReduce, NcclAlgo::kNvls, Protocol::kSimple);
  ASSERT_TRUE(ar.enabled);
  EXPECT_NEAR(ar.latency_us, 25.0 + 18.0, 1e-9) << "hwLat NVLINK and NET of NVLS (Simple)";
  EXPECT_GE(ar.bandwidth_GBps, 150.0);
  EXPECT_EQ(in.nvls_across_max_chunk, 0u);
  EXPECT_TRUE(m.entry(Collective::kAllGather, NcclAlgo::kNvls, Protocol::kSimple).enabled);
  EXPECT_TRUE(m.entry(Collective::kReduceScatter, NcclAlgo::kNvls, Protocol::kSimple).enabled);
  const NcclModel m26(
      nccl_model_input(t, Communicator::from_topology(t), parse_nccl_release("2.26.2")));
  EXPECT_TRUE(m26.entry(Collective::kAllReduce, NcclAlgo::kNvls, Protocol::kSimple).enabled);
  EXPECT_FALSE(m26.entry(Collective::kAllGather, NcclAlgo::kNvls, Protocol::kSimple).enabled);
  EXPECT_FALSE(m26.entry(Collective::kReduceScatter, NcclAlgo::kNvls, Protocol::kSimple).enabled);
  std::vector<Rank> two_a_node;
  for (int n = 0; n < 4; ++n) {
    for (int g = 0; g < 2; ++g) two_a_node.push_back(Rank{8 * n + g});
  }
  const NcclModelInput two =
      nccl_model_input(t, Communicator::from_topology(t, two_a_node), NcclVersion::k2_30);
  EXPECT_LT(NcclModel(two)
                .entry(Collective::kAllReduce, NcclAlgo::kNvls, Protocol::kSimple)
                .bandwidth_GBps,
            150.0);
  EXPECT_EQ(two.nvls_across_max_chunk, 32768u);
  const Topology off = load_topology("h100-16node-ib", LoadOptions{4});
  const NcclModel m_off(
      nccl_model_input(off, Communicator::from_topology(off), NcclVersion::k2_30));
  EXPECT_FALSE(m_off.entry(Collective::kAllReduce, NcclAlgo::kNvls, Protocol::kSimple).enabled);
}

// More than 8 GPUs a node (NCCL_MAX_DIRECT_ARITY + 1): before 2.23 NCCL turns CollNet off, NVLS
// across nodes with it (init.cc); 2.23 to 2.27 skip CollNetDirect, 2.28 on CollNetChain too
// (enqueue.cc). The SHARP fabric's input with 16 ranks a node.
TEST(NcclModel, CollNetStopsAtEightGpusANode) {
  const Topology t = load_topology("h100-16node-sharp", LoadOptions{4});
  const auto enabled = [&](const char* release, NcclAlgo a) {
    NcclModelInput in =
        nccl_model_input(t, Communicator::from_topology(t), parse_nccl_release(release));
    in.ranks = 4 * 16;
    return NcclModel(in).entry(Collective::kAllReduce, a, Protocol::kSimple).enabled;
  };
  for (NcclAlgo a : {NcclAlgo::kCollNetDirect, NcclAlgo::kCollNetChain, NcclAlgo::kNvls}) {
    EXPECT_FALSE(enabled("2.22.3", a)) << static_cast<int>(a);
  }
  EXPECT_FALSE(enabled("2.27.7", NcclAlgo::kCollNetDirect));
  EXPECT_TRUE(enabled("2.27.7", NcclAlgo::kCollNetChain));
  EXPECT_TRUE(enabled("2.27.7", NcclAlgo::kNvls));
  EXPECT_FALSE(enabled("2.28.3", NcclAlgo::kCollNetChain));
  EXPECT_TRUE(enabled("2.28.3", NcclAlgo::kNvls));
  // Eight a node keep all three.
  NcclModelInput eight = nccl_model_input(t, Communicator::from_topology(t), NcclVersion::k2_30);
  EXPECT_TRUE(NcclModel(eight)
                  .entry(Collective::kAllReduce, NcclAlgo::kCollNetDirect, Protocol::kSimple)
                  .enabled);
}

// EFA through aws-ofi-nccl (tests/data/configs/held-out/aws-p4d.yaml): the first EFA generation
// does not deliver 128-byte blocks in order, so the plugin leaves NCCL Simple only, and from
// 2.12 the 75 us latency it reports joins every network step of NCCL's model, twice for Simple
// from 2.18 (`src/graph/tuning.cc`, latencyInter). Two nodes' Tree pays two network steps.
TEST(NcclModel, EfaLeavesSimpleOnlyAndAddsThePluginLatency) {
  const Topology t =
      load_topology(std::string(COLLSIM_SOURCE_DIR) + "/tests/data/configs/held-out/aws-p4d.yaml");
  const Communicator comm = Communicator::from_topology(t);
  EXPECT_FALSE(t.in_order());
  EXPECT_EQ(t.plugin_latency(), us(75));
  const auto input = [&](NcclRelease v) { return nccl_model_input(t, comm, v); };
  const NcclModelInput head = input(kNewestNccl);
  EXPECT_FALSE(head.ll);
  EXPECT_FALSE(head.ll128);
  EXPECT_EQ(head.ring->latency_inter, 75.0);
  EXPECT_EQ(head.tree->latency_inter, 75.0);
  EXPECT_EQ(input(NcclRelease{11, 4}).ring->latency_inter, 0.0);  // before 2.12: not read
  // What the plugin's latency adds to Tree/Simple's latency: 2 steps x 2 x 75 from 2.18, 2 x 75
  // before.
  const auto added = [&](NcclRelease v) {
    NcclModelInput in = input(v);
    const double with =
        NcclModel(in).entry(Collective::kAllReduce, NcclAlgo::kTree, Protocol::kSimple).latency_us;
    in.tree->latency_inter = 0;
    return with - NcclModel(in)
                      .entry(Collective::kAllReduce, NcclAlgo::kTree, Protocol::kSimple)
                      .latency_us;
  };
  EXPECT_NEAR(added(kNewestNccl), 300.0, 1e-9);
  EXPECT_NEAR(added(NcclRelease{17, 1}), 150.0, 1e-9);
  const NcclModel m(head);
  EXPECT_FALSE(m.entry(Collective::kAllReduce, NcclAlgo::kRing, Protocol::kLL).enabled);
  for (std::uint64_t bytes : {std::uint64_t{8}, std::uint64_t{1} << 20, std::uint64_t{1} << 32}) {
    const auto pick = m.best(Collective::kAllReduce, bytes);
    ASSERT_TRUE(pick.has_value());
    EXPECT_EQ(pick->proto, Protocol::kSimple) << bytes;
  }
  // NCCL's own transports report no latency and deliver in order.
  const Topology ib = load_topology("h100-2node-ib");
  EXPECT_TRUE(ib.in_order());
  EXPECT_EQ(ib.plugin_latency(), Time{});
  EXPECT_EQ(nccl_model_input(ib, Communicator::from_topology(ib), kNewestNccl).ring->latency_inter,
            0.0);
}

// LL128 across nodes: NCCL enables it only where its graphs reach the NICs within PCIe switches
// (typeInter <= PATH_PXB), on sm90+ also through another GPU (PXN) and from 2.27 over C2C.
// Summit's V100s reach their NICs through the POWER9s; a GB200 tray's GPUs through Grace.
TEST(NcclModel, Ll128AcrossNodesNeedsNicsWithinPcieSwitches) {
  const auto ll128 = [](const std::string& preset, int nodes, NcclRelease v) {
    const Topology t = load_topology(preset, LoadOptions{nodes});
    return nccl_model_input(t, Communicator::from_topology(t), v).ll128;
  };
  EXPECT_TRUE(ll128("summit", 1, kNewestNccl));  // one node: no NIC in the graph
  EXPECT_FALSE(ll128("summit", 2, kNewestNccl));
  EXPECT_TRUE(ll128("h100-2node-ib", 2, kNewestNccl));
  EXPECT_TRUE(ll128("dgx-a100", 1, kNewestNccl));
  EXPECT_TRUE(ll128("gb200-nvl72", 36, kNewestNccl));
  EXPECT_FALSE(ll128("gb200-nvl72", 36, NcclRelease{26, 2}));
}

// aws-ofi-nccl sets NCCL_NVLS_CHUNKSIZE and NCCL_NVLSTREE_MAX_CHUNKSIZE to 512 KiB on its
// NVSwitch platforms (p5 on): the same nodes on EFA cut NVLS and NVLSTree in 512 KiB chunks.
TEST(NcclModel, EfaNvlsChunksAreThePluginsSetting) {
  std::ifstream in(std::string(COLLSIM_SOURCE_DIR) + "/configs/h100-2node-ib.yaml");
  std::stringstream text;
  text << in.rdbuf();
  std::string yaml = text.str();
  yaml.replace(yaml.find("kind: ib"), 8, "kind: efa\n    in_order: true");
  const Topology efa = parse_topology(yaml, "h100-2node-efa.yaml");
  const NcclModelInput e = nccl_model_input(efa, Communicator::from_topology(efa), kNewestNccl);
  EXPECT_EQ(e.nvls_chunk, 524288u);
  EXPECT_EQ(e.nvls_tree_max_chunk, 524288u);
  EXPECT_TRUE(e.ll);
  const Topology ib = load_topology("h100-2node-ib");
  const NcclModelInput i = nccl_model_input(ib, Communicator::from_topology(ib), kNewestNccl);
  EXPECT_EQ(i.nvls_chunk, 131072u);
  EXPECT_EQ(i.nvls_tree_max_chunk, 0u);  // NCCL's fallback
}

}  // namespace
}  // namespace collsim
