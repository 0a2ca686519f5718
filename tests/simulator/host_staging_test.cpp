// Host staging (simulator/cost_params.hpp, link_capacity): data NCCL stages in host memory, which
// is everything that crosses the root port of a host whose GPUs attach over PCIe, moves at
// host_staging of the root port's links. Which links stage, and what that does to a transfer
// between two GPUs without P2P: a bandwidth-bound AllReduce takes 1 / host_staging as long.
#include <gtest/gtest.h>

#include "algorithms/generators/registry.hpp"
#include "simulator/cost_params.hpp"
#include "simulator/simulate.hpp"
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

// 256 MiB ring AllReduce between the two GPUs, Simple: both GPUs' traffic climbs the one uplink,
// so its time is the bytes over that link's staged rate. Halving host_staging nearly doubles it
// (the launch and the per-piece latencies do not scale): with a fixed part F of the full-rate
// time, the ratio is (2 - F) / 1, so 1.97 allows F up to 3 %, twice what the bound below allows.
TEST(HostStaging, AStagedRingRunsAtTheStagedRate) {
  const Topology topo = load_topology("pcie-2gpu", {.default_costs = true});
  Request q;
  q.collective = Collective::kAllReduce;
  q.algorithm = "ring";
  q.protocol = Protocol::kSimple;
  q.dtype = DataType::kF32;
  q.count = (std::uint64_t{256} << 20) / 4;
  q.channels = 2;
  q.comm = Communicator::from_topology(topo);
  const Schedule s = plan(q);
  const auto time_at = [&](double staging) {
    SimOptions o;
    o.costs = cost_params(topo);
    o.costs->host_staging = staging;
    return simulate(s, topo, o).total.seconds();
  };
  const double full = time_at(1.0), half = time_at(0.5);
  EXPECT_LT(half / full, 2.0);
  EXPECT_GT(half / full, 1.97);
  // Each GPU sends the 256 MiB once (2 (p - 1) / p of it, p = 2) and both cross the uplink:
  // 512 MiB over the uplink at 15.75 GB/s x PCIe efficiency x host_staging, plus the launch and
  // the pipeline's fill and drain (0.9 % here).
  const CostParams d = cost_params(topo);
  const double uplink = 15.75e9 * d.efficiency(LinkKind::kPcie) * d.host_staging;
  const double bound = 2.0 * (256 << 20) / uplink;
  const double t = time_at(d.host_staging);
  EXPECT_GT(t, bound);
  EXPECT_LT(t, 1.015 * bound);
}

}  // namespace
}  // namespace collsim
