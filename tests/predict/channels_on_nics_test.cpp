// Channels onto NICs: NCCL gives each channel its own network device and runs the channel's
// inter-node traffic through it, for trees as for rings (its graph search assigns
// graph->inter[] per channel), and a GPU with several NICs near it takes them in turn. On a node with one NIC per GPU, every NIC must then carry traffic
// of every algorithm that crosses nodes; with all channels on one NIC a 16-node double binary tree
// was predicted at 38 GB/s busbw where NCCL's model gives 279.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "algorithms/generators/registry.hpp"
#include "algorithms/models/nccl_channels.hpp"
#include "algorithms/models/nccl_model.hpp"
#include "algorithms/models/selection.hpp"
#include "predict/predict.hpp"
#include "topology/loader.hpp"

namespace collsim {
namespace {

// The NICs (by device name) that put bytes on the network, per node.
std::map<int, std::set<std::string>> busy_nics(const Topology& topo, const Result& res) {
  std::map<int, std::set<std::string>> out;
  for (const LinkUsage& u : res.links) {
    const Link& l = topo.link(u.link);
    const Device& src = topo.device(l.src);
    if (u.bytes == 0 || src.kind != DeviceKind::kNic) continue;
    out[src.node].insert(src.name);
  }
  return out;
}

// Every NIC of every node carries traffic of each algorithm at NCCL's channel count.
void expect_every_nic_busy(const std::string& preset, int nodes, std::size_t nics_per_node,
                           const std::vector<std::string>& algos) {
  LoadOptions o;
  o.nodes = nodes;
  const Topology topo = load_topology(preset, o);
  const CostParams costs = cost_params(topo);
  const Communicator comm = Communicator::from_topology(topo);
  const int channels = nccl_model_input(topo, comm, NcclVersion::k2_30).runtime_channels;
  std::size_t nics = 0;
  for (const Device& d : topo.devices()) nics += d.kind == DeviceKind::kNic && d.node == 0;
  ASSERT_EQ(nics, nics_per_node);
  ASSERT_GE(static_cast<std::size_t>(channels), nics_per_node);
  for (const std::string& algo : algos) {
    Request r;
    r.collective = Collective::kAllReduce;
    r.algorithm = algo;
    r.protocol = Protocol::kSimple;
    r.channels = channels;
    r.channels =
        nccl_launched_channels(algo, r.protocol, comm.size(), std::uint64_t{64} << 20, channels);
    r.comm = comm;
    r.count = count_for_bytes(r.collective, Bytes(std::uint64_t{64} << 20), r.dtype, comm.size());
    Result res;
    PredictOptions po;
    po.result = &res;
    po.symmetry = false;  // every node's links, not one period's
    ASSERT_TRUE(predict(r, topo, costs, Model::kContentionFree, po));
    const auto busy = busy_nics(topo, res);
    ASSERT_EQ(busy.size(), static_cast<std::size_t>(nodes)) << preset << " " << algo;
    for (const auto& [node, used] : busy) {
      EXPECT_EQ(used.size(), nics_per_node) << preset << " " << algo << " node " << node;
    }
  }
}

TEST(ChannelsOnNics, EveryNicOfARailNodeCarriesEveryMultiNodeAlgorithm) {
  // One NIC per GPU. NVLSTree: each GPU heads one NVLS block and drives it through its own NIC.
  expect_every_nic_busy("h100-16node-ib", 4, 8, {"ring", "dbtree", "ring2d", "nvls_tree"});
}

TEST(ChannelsOnNics, EveryNicFeedsTheSharpSwitches) {
  // CollNet: every GPU heads a block through its own NIC (direct), each channel's head is local
  // rank c mod 8 (chain); NVLS across nodes: every GPU heads one NVLS block and hands its node's
  // sum to the network through its own NIC. Every NIC feeds its rail's SHARP aggregation.
  expect_every_nic_busy("h100-16node-sharp", 4, 8, {"collnet_direct", "collnet_chain", "nvls"});
}

TEST(ChannelsOnNics, AGpuWithTwoNicsUsesBoth) {
  // OCI BM.GPU4.8: 16 x 100G RoCE for 8 GPUs; NCCL spreads each GPU's channels over its two.
  expect_every_nic_busy("a100-2node-roce", 2, 16, {"ring", "dbtree", "ring2d"});
}

}  // namespace
}  // namespace collsim
