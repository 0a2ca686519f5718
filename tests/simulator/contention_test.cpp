// Max-min sharing against hand-computed answers. Costs are the links alone (efficiency 1, no
// protocol latency, no caps, no launch), so every expected time is route latency + bytes over
// the fair share. Shares like 50e9/3 are not exact in binary, so a finish may round to the
// neighbouring picosecond: those comparisons allow 1 ps.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "algorithms/ir/schedule_builder.hpp"
#include "sim_fixtures.hpp"
#include "simulator/simulate.hpp"
#include "topology/gpu_models.hpp"
#include "topology/loader.hpp"

namespace collsim {
namespace {

constexpr std::uint64_t kKiB = 1024;

SimOptions maxmin() {
  SimOptions o;
  o.network = SimNetwork::kMaxMin;
  o.costs = test::ideal();
  return o;
}

ScheduleInfo info(int ranks, int channels) {
  ScheduleInfo i;
  i.ranks = ranks;
  i.channels = channels;
  i.fifo = geometry(Protocol::kSimple);
  return i;
}

// Two GPUs joined by one 100 GB/s, 1 µs cable.
Topology pair() {
  TopologyBuilder b("pair");
  const int m = b.add_gpu_model(*find_gpu_model("H100-SXM"));
  const DeviceId a = b.add_device(DeviceKind::kGpu, "node0/gpu0", 0, m);
  const DeviceId c = b.add_device(DeviceKind::kGpu, "node0/gpu1", 0, m);
  b.add_cable(a, c, LinkKind::kNvLink, GBps(100), us(1));
  return std::move(b).build();
}

// Two channels each send 256 KiB (one piece) from rank 0 to rank 1 at once: both flows cross
// the one directed link 0 -> 1 and get 50 GB/s each, so each takes 2 x 256 KiB / 100 GB/s =
// 5.24288 µs, plus 1 µs latency. Contention-free, each would take half that.
TEST(Contention, TwoFlowsOnOneLinkGetHalfEach) {
  const Topology topo = pair();
  ScheduleBuilder b(info(2, 2));
  for (int c = 0; c < 2; ++c) {
    b.add(0, c, ops::send(1, ops::in(c * 256 * kKiB), 256 * kKiB));
    b.add(1, c, ops::recv(0, ops::out(c * 256 * kKiB), 256 * kKiB));
  }
  b.set_buffer(0, BufferKind::kInput, 512 * kKiB);
  b.set_buffer(1, BufferKind::kOutput, 512 * kKiB);
  const Schedule s = std::move(b).build();
  const Result shared = simulate(s, topo, maxmin());
  EXPECT_EQ(shared.total.ps(), 1'000'000 + 5'242'880);
  ASSERT_GE(shared.bottleneck, 0);
  EXPECT_NEAR(shared.links[shared.bottleneck].busy_fraction, 5.24288 / 6.24288, 1e-9);
  SimOptions free = maxmin();
  free.network = SimNetwork::kContentionFree;
  EXPECT_EQ(simulate(s, topo, free).total.ps(), 1'000'000 + 2'621'440);
}

// k single-GPU nodes each send 1 MiB to node 0 at once. Every route is GPU -PCIe-> NIC -IB->
// switch -IB-> NIC0 -PCIe-> GPU0; the k flows meet on switch -> NIC0 (50 GB/s), each gets
// 50/k GB/s: T = latency + k x 1 MiB / 50 GB/s.
TEST(Contention, IncastIntoOneNic) {
  for (int k : {1, 2, 3, 7}) {
    TopologyBuilder tb("incast");
    const int m = tb.add_gpu_model(*find_gpu_model("H100-SXM"));
    const DeviceId sw = tb.add_device(DeviceKind::kSwitch, "switch0", -1);
    for (int n = 0; n <= k; ++n) {
      const DeviceId g = tb.add_device(DeviceKind::kGpu, fmt::format("node{}/gpu0", n), n, m);
      const DeviceId nic = tb.add_device(DeviceKind::kNic, fmt::format("node{}/nic0", n), n);
      tb.add_cable(g, nic, LinkKind::kPcie, GBps(64), us(0.5));
      tb.add_cable(nic, sw, LinkKind::kIb, GBps(50), us(0.3));
    }
    tb.set_network_kind(NetworkKind::kSingleSwitch);
    const Topology topo = std::move(tb).build();
    ScheduleBuilder b(info(k + 1, 1));
    b.set_buffer(0, BufferKind::kOutput, k * kKiB * kKiB);
    for (int n = 1; n <= k; ++n) {
      b.set_buffer(n, BufferKind::kInput, kKiB * kKiB);
      b.add(n, 0, ops::send(0, ops::in(0), kKiB * kKiB));
      b.add(0, 0, ops::recv(n, ops::out((n - 1) * kKiB * kKiB), kKiB * kKiB));
    }
    const Schedule s = std::move(b).build();
    SimOptions o = maxmin();
    const Result r = simulate(s, topo, o);
    // 1 MiB is two 512 KiB pieces per sender; the second starts when the first has left, so
    // the k flows stay together: 2 x (k x 512 KiB / 50 GB/s) + 1.6 µs of links.
    const double expect_ps = 1.6e6 + 2.0 * k * 524288.0 * 1e12 / 50e9;
    EXPECT_NEAR(static_cast<double>(r.total.ps()), expect_ps, 2.0) << "k=" << k;
    if (k >= 2) {  // with one sender its own NIC link is just as busy
      const Link& bottleneck = topo.link(r.links[r.bottleneck].link);
      EXPECT_EQ(topo.device(bottleneck.dst).name, "node0/nic0") << "k=" << k;
    }
  }
}

// 2 nodes x 2 GPUs: NVSwitch at 400 GB/s inside a node, one 50 GB/s NIC per GPU. A 1-channel
// ring 0 -> 1 -> 2 -> 3 -> 0 crosses the network twice (1 -> 2 and 3 -> 0); in the bandwidth-
// bound steady state every step waits for the NIC hop, so T ≈ 2(p-1)/p x n / 50 GB/s
// = 1.5 n / 50 GB/s (flat ring, docs/theory.md §3.8: one NIC per ring). ring2d instead reduces
// inside the node first and sends only n/g = n/2 through each GPU's own NIC, both rails at once:
// 2(N-1)/N x n/g = n/2 per NIC, so T ≈ n/2 / 50 GB/s plus two NVSwitch phases of
// (g-1)/g x n / 400 GB/s each. The pipeline fill adds at most 2(p-1) piece times.
TEST(Contention, TwoNodeRingLimitedByNicAndRing2dByLess) {
  const Topology topo = parse_topology(R"(
name: two-by-two
nodes: 2
node:
  gpu: H100-SXM
  gpus: 2
  nvlink: {fabric: nvswitch, bandwidth: 400GB/s, latency: 0.3us}
  pcie: {bandwidth: 64GB/s, latency: 0.5us, switches: 2}
  nics: {count: 2, bandwidth: 400Gbps, latency: 0.3us, kind: ib}
network: {topology: single_switch}
)",
                                       "two-by-two.yaml");
  const std::uint64_t n = 64 * kKiB * kKiB;
  Request q = test::request(Collective::kAllReduce, "ring", 4, n, 2 * kKiB * kKiB, 2);
  q.comm = Communicator::from_topology(topo);
  const double piece_s = 524288.0 / 50e9;
  const double ring_bound = 1.5 * static_cast<double>(n) / 50e9;
  const Result ring = simulate(plan(q), topo, maxmin());
  EXPECT_GE(ring.total.seconds(), ring_bound);
  EXPECT_LE(ring.total.seconds(), ring_bound + 6 * piece_s + 20e-6);
  EXPECT_EQ(topo.link(ring.links[ring.bottleneck].link).kind, LinkKind::kIb);

  q.algorithm = "ring2d";
  const Result r2 = simulate(plan(q), topo, maxmin());
  const double nic = 0.5 * static_cast<double>(n) / 50e9;
  const double intra = 2 * 0.5 * static_cast<double>(n) / 400e9;
  EXPECT_GE(r2.total.seconds(), nic + intra);
  EXPECT_LE(r2.total.seconds(), nic + intra + 12 * piece_s + 20e-6);
  // From the two pairs of bounds: ring >= 2.01 ms, ring2d <= 0.99 ms.
  EXPECT_LT(r2.total.seconds() * 2, ring.total.seconds());
}

// Four single-GPU nodes, two per leaf, one spine. With oversubscription r the leaf uplink
// carries 2 x 50 GB/s / r. Nodes 0 -> 2 and 1 -> 3 cross it together: r = 1 leaves each flow
// its NIC's 50 GB/s; r = 2 halves the uplink, so each gets 25 GB/s and the transfer takes twice
// as long (the latency aside). Each node's GPU and NIC share a PCIe switch, so GPUDirect RDMA
// carries the data and nothing is staged in host memory.
TEST(Contention, OversubscribedSpineSlowsCrossLeafTrafficByTheRatio) {
  auto run = [](int r) {
    const Topology topo = parse_topology(fmt::format(R"(
name: ft
nodes: 4
node:
  gpu: H100-SXM
  gpus: 1
  pcie: {{bandwidth: 64GB/s, latency: 0.5us, switches: 1}}
  nics: {{count: 1, bandwidth: 400Gbps, latency: 0.3us, kind: ib}}
network: {{topology: fat_tree, nodes_per_leaf: 2, spines: 1, oversubscription: {}, latency: 0.13us}}
)",
                                                     r),
                                         "ft.yaml");
    ScheduleBuilder b(info(4, 1));
    for (int src : {0, 1}) {
      b.set_buffer(src, BufferKind::kInput, 512 * kKiB);
      b.set_buffer(src + 2, BufferKind::kOutput, 512 * kKiB);
      b.add(src, 0, ops::send(src + 2, ops::in(0), 512 * kKiB));
      b.add(src + 2, 0, ops::recv(src, ops::out(0), 512 * kKiB));
    }
    const Time lat = topo.route_latency(topo.route(topo.gpu_of(Rank{0}), topo.gpu_of(Rank{2})));
    return simulate(std::move(b).build(), topo, maxmin()).total - lat;
  };
  const Time one = run(1);
  const Time two = run(2);
  EXPECT_NEAR(static_cast<double>(one.ps()), 524288.0 * 1e12 / 50e9, 1.0);
  EXPECT_NEAR(static_cast<double>(two.ps()), 524288.0 * 1e12 / 25e9, 1.0);
}

}  // namespace
}  // namespace collsim
