// Channels onto NICs: NCCL gives each channel its own network device and runs the channel's
// inter-node traffic through it, for trees as for rings (its graph search assigns
// graph->inter[] per channel). On a node with one NIC per GPU, every NIC must then carry traffic
// of every algorithm that crosses nodes; with all channels on one NIC a 16-node double binary tree
// was predicted at 38 GB/s busbw where NCCL's model gives 279.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "algorithms/generators/registry.hpp"
#include "algorithms/models/nccl_model.hpp"
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

TEST(ChannelsOnNics, EveryNicCarriesEveryMultiNodeAlgorithm) {
  LoadOptions o;
  o.nodes = 4;
  const Topology topo = load_topology("h100-16node-ib", o);
  const CostParams costs = cost_params(topo);
  const Communicator comm = Communicator::from_topology(topo);
  const int channels = nccl_model_input(topo, comm, NcclVersion::k2_30).runtime_channels;
  ASSERT_GE(channels, 8);
  std::size_t nics_per_node = 0;
  for (const Device& d : topo.devices()) nics_per_node += d.kind == DeviceKind::kNic && d.node == 0;
  ASSERT_EQ(nics_per_node, 8u);
  for (const std::string algo : {"ring", "dbtree", "ring2d"}) {
    Request r;
    r.collective = Collective::kAllReduce;
    r.algorithm = algo;
    r.protocol = Protocol::kSimple;
    r.channels = channels;
    r.comm = comm;
    r.count = count_for_bytes(r.collective, Bytes(std::uint64_t{64} << 20), r.dtype, comm.size());
    Result res;
    PredictOptions po;
    po.result = &res;
    po.symmetry = false;  // every node's links, not one period's
    ASSERT_TRUE(predict(r, topo, costs, Model::kContentionFree, po));
    const auto busy = busy_nics(topo, res);
    ASSERT_EQ(busy.size(), 4u) << algo;
    for (const auto& [node, nics] : busy) {
      EXPECT_EQ(nics.size(), nics_per_node) << algo << " node " << node;
    }
  }
}

}  // namespace
}  // namespace collsim
