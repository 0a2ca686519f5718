// Host staging (simulator/cost_params.hpp, link_capacity): data NCCL stages in host memory, which
// is everything that crosses the root port of a host whose GPUs attach over PCIe, moves at
// host_staging of the root port's links. Which links stage, and what that does to a transfer
// between two GPUs without P2P: a bandwidth-bound AllReduce takes 1 / host_staging as long, and
// a receive that forwards nothing reads its piece out of host memory while its channel waits.
#include <gtest/gtest.h>

#include "algorithms/generators/registry.hpp"
#include "simulator/cost_params.hpp"
#include "simulator/simulate.hpp"
#include "tests/preset_with.hpp"
#include "topology/loader.hpp"

namespace collsim {
namespace {

bool touches(const Topology& topo, const Link& l, DeviceKind k) {
  return topo.device(l.src).kind == k || topo.device(l.dst).kind == k;
}

// pcie-2gpu: two GPUs under one switch with P2P off. The switch's two links to the CPU stage; the
// GPUs' own links to the switch do not.
TEST(HostStaging, TheRootPortLinksOfAPcieHostStage) {
  const Topology topo = load_topology("pcie-2gpu", {.default_costs = true});
  int staged = 0;
  for (std::size_t i = 0; i < topo.links().size(); ++i) {
    const LinkId id{static_cast<std::int32_t>(i)};
    const Link& l = topo.link(id);
    const bool root_port = l.kind == LinkKind::kPcie && touches(topo, l, DeviceKind::kCpu);
    EXPECT_EQ(stages_in_host(topo, id), root_port) << i;
    staged += root_port ? 1 : 0;
  }
  EXPECT_EQ(staged, 2);  // up and down the one uplink
}

// Where the CPU reaches its GPUs over C2C (Grace) or NVLink (POWER9), NCCL's GPUDirect RDMA goes
// through it directly (NCCL_NET_GDR_C2C): its PCIe root ports to the NICs do not stage.
TEST(HostStaging, ACpuOnTheGpusFabricDoesNotStage) {
  for (const char* name : {"gb200-nvl72", "summit"}) {
    const Topology topo = load_topology(name, {.nodes = 2, .default_costs = true});
    for (std::size_t i = 0; i < topo.links().size(); ++i) {
      EXPECT_FALSE(stages_in_host(topo, LinkId{static_cast<std::int32_t>(i)})) << name << " " << i;
    }
  }
}

// Who reads out of host memory: the receiver of an SHM transfer, and of a network transfer
// without GPUDirect RDMA (the NIC wrote it into host memory there); no one where the data goes
// GPU to GPU over NVLink or straight between a GPU and its NIC.
TEST(HostStaging, TheReceiverReadsHostMemoryWhereItsSideIsStaged) {
  const Topology pcie = load_topology("pcie-2gpu", {.default_costs = true});
  EXPECT_TRUE(receiver_reads_host(pcie, pcie.route(pcie.gpu_of(Rank{0}), pcie.gpu_of(Rank{1}))));

  const Topology gdr = load_topology("h100-2node-ib", {.default_costs = true});
  const Topology staged =
      parse_topology(test::preset_with("h100-2node-ib", "gdr: false"), "no-gdr.yaml");
  for (const Topology* t : {&gdr, &staged}) {
    const auto reads = [&](int from, int to) {
      return receiver_reads_host(*t, t->route(t->gpu_of(Rank{from}), t->gpu_of(Rank{to})));
    };
    EXPECT_FALSE(reads(0, 5)) << "NVLink inside a node";
    EXPECT_EQ(reads(3, 11), t == &staged) << "across nodes, gdr " << t->gdr();
  }
}

TEST(HostStaging, ScalesTheCapacityOfStagingLinksOnly) {
  const Topology topo = load_topology("pcie-2gpu", {.default_costs = true});
  CostParams c = cost_params(topo);
  c.host_staging = 0.5;
  for (std::size_t i = 0; i < topo.links().size(); ++i) {
    const LinkId id{static_cast<std::int32_t>(i)};
    const Link& l = topo.link(id);
    const double rate = l.bandwidth.bytes_per_second() * c.efficiency(l.kind);
    EXPECT_DOUBLE_EQ(link_capacity(topo, id, c), stages_in_host(topo, id) ? rate / 2 : rate);
  }
}

Request two_gpu_ring(const Topology& topo, Collective c, std::uint64_t bytes) {
  Request q;
  q.collective = c;
  q.algorithm = "ring";
  q.protocol = Protocol::kSimple;
  q.dtype = DataType::kF32;
  q.count = bytes / 4;
  q.channels = 2;
  q.comm = Communicator::from_topology(topo);
  return q;
}

double seconds(const Topology& topo, const Schedule& s, double staging) {
  SimOptions o;
  o.costs = cost_params(topo);
  o.costs->host_staging = staging;
  return simulate(s, topo, o).total.seconds();
}

// 256 MiB ring AllReduce between the two GPUs, Simple: both GPUs' traffic climbs the one uplink,
// so its time is the bytes over that link's staged rate. Halving host_staging nearly doubles it
// (the launch and the per-piece latencies do not scale): with a fixed part F of the full-rate
// time, the ratio is (2 - F) / 1, so 1.97 allows F up to 3 %, twice what the bound below allows.
TEST(HostStaging, AStagedRingRunsAtTheStagedRate) {
  const Topology topo = load_topology("pcie-2gpu", {.default_costs = true});
  const Schedule s = plan(two_gpu_ring(topo, Collective::kAllReduce, std::uint64_t{256} << 20));
  const double full = seconds(topo, s, 1.0), half = seconds(topo, s, 0.5);
  EXPECT_LT(half / full, 2.0);
  EXPECT_GT(half / full, 1.97);
}

// What a channel does per chunk of a 2-GPU ring, each step at the uplink's share (both GPUs write
// through it, then both read back down it): the AllReduce sends, receives-reduces-and-sends
// (the read overlapped with the push), then only receives, reading the peer's piece out of host
// memory while its channel waits: 3 piece-times for the 2 pieces it sent. The AllGather sends
// and then only receives: 2 piece-times for 1. Against the bytes over the uplink (each GPU's
// sends, both GPUs on it), the AllReduce takes 3/2 as long and the AllGather twice, plus the
// launch and the pipeline's fill and drain (under 1.5 % here).
TEST(HostStaging, AReceiveThatForwardsNothingHoldsItsChannelWhileItReads) {
  const Topology topo = load_topology("pcie-2gpu", {.default_costs = true});
  const CostParams d = cost_params(topo);
  const double uplink = 15.75e9 * d.efficiency(LinkKind::kPcie) * d.host_staging;
  const std::uint64_t n = std::uint64_t{256} << 20;
  struct Case {
    Collective c;
    double sent_per_gpu;  // bytes each GPU sends, over n (AllGather: n is each rank's block)
    double steps_per_piece;
  };
  for (const Case& k :
       {Case{Collective::kAllReduce, 1.0, 1.5}, Case{Collective::kAllGather, 1.0, 2.0}}) {
    const Schedule s = plan(two_gpu_ring(topo, k.c, n));
    const double bound = k.steps_per_piece * 2.0 * k.sent_per_gpu * static_cast<double>(n) / uplink;
    const double t = seconds(topo, s, d.host_staging);
    EXPECT_GT(t, bound) << to_string(k.c);
    EXPECT_LT(t, 1.015 * bound) << to_string(k.c);
  }
}

// NCCL's point-to-point kernel gives a channel's sends and receives warps of their own
// (src/device/sendrecv.h), so a sendrecv between the two GPUs reads each piece back out of host
// memory while its sends go on: each GPU's n bytes take about one piece-time per piece, half the
// two of a ring AllGather that sends the same n per GPU and then only receives. Neither can
// beat the uplink, which carries both GPUs' writes: 2n over its rate. With the read holding the
// whole channel, as a collective's does, the sendrecv took as long as the AllGather.
TEST(HostStaging, APointToPointReceiveReadsWithItsOwnWarps) {
  const Topology topo = load_topology("pcie-2gpu", {.default_costs = true});
  const CostParams d = cost_params(topo);
  const double uplink = 15.75e9 * d.efficiency(LinkKind::kPcie) * d.host_staging;
  const std::uint64_t n = std::uint64_t{64} << 20;
  Request q = two_gpu_ring(topo, Collective::kSendRecv, n);
  q.algorithm = "direct";
  const double sendrecv = seconds(topo, plan(q), d.host_staging);
  const double allgather =
      seconds(topo, plan(two_gpu_ring(topo, Collective::kAllGather, n)), d.host_staging);
  EXPECT_GT(sendrecv, 2.0 * static_cast<double>(n) / uplink);
  EXPECT_LT(sendrecv, 0.6 * allgather);
}

}  // namespace
}  // namespace collsim
