// Line forwarding (CostParams::line_forwarding, docs/theory.md §2.5): LL and LL128 carry a flag in
// every line, so an op that receives a piece and sends it on over NVLink or PCIe forwards its
// lines as they come, one pass of the channel's threads at a time (ProtocolGeometry::pass_bytes:
// LL 8 KiB, LL128 40 KiB of wire; NCCL src/device/prims_ll.h, prims_ll128.h); a forward onto the
// network waits for the whole step, which NCCL's proxy sends at once (src/transport/net.cc). What
// that changes on a chain of forwards, exactly, and what it leaves alone.
#include <gtest/gtest.h>

#include "algorithms/generators/registry.hpp"
#include "simulator/cost_params.hpp"
#include "simulator/simulate.hpp"
#include "topology/loader.hpp"

namespace collsim {
namespace {

// `bytes` of f32 in `c` by `algorithm`/`p` on `channels`, over `subset` of the cluster's GPUs (all
// when empty).
Request request(const Topology& topo, Collective c, const char* algorithm, Protocol p,
                std::uint64_t bytes, int channels, const std::vector<Rank>& subset = {}) {
  Request q;
  q.collective = c;
  q.algorithm = algorithm;
  q.protocol = p;
  q.dtype = DataType::kF32;
  q.count = bytes / 4;
  q.channels = channels;
  q.comm = Communicator::from_topology(topo, subset);
  return q;
}

// A one-channel ring Broadcast: root, then forwards along the ring, then the last receive.
Request broadcast(const Topology& topo, Protocol p, std::uint64_t bytes,
                  const std::vector<Rank>& subset = {}) {
  return request(topo, Collective::kBroadcast, "ring", p, bytes, 1, subset);
}

Time run(const Topology& topo, const Schedule& s, bool lines, SimNetwork net,
         const Communicator& comm) {
  SimOptions o;
  for (int r = 0; r < comm.size(); ++r) o.placement.push_back(comm.gpu(r));
  o.network = net;
  o.costs = cost_params(topo);
  o.costs->line_forwarding = lines;
  return simulate(s, topo, o).total;
}

// One LL piece broadcast along the 8 GPUs of a DGX H100 on one channel: 7 hops, 6 of them forwards.
// Piece by piece each forward waits for the whole piece, (tx + latency) a hop; pass by pass a
// forward starts once the first of the piece's four 8 KiB passes is in and ends one pass after the
// piece's last: the piece pays its transmission once and each hop its latency and one pass, 6 x
// (tx - pass) less. Both network models agree, as nothing shares a link.
TEST(LineForwarding, AChainOfForwardsPaysThePieceOnceAndAPassAHop) {
  const Topology topo = load_topology("dgx-h100", {.default_costs = true});
  const CostParams d = cost_params(topo);
  const std::uint64_t payload = 16384;  // within one LL slot: 32 KiB of wire, four passes
  const Request q = broadcast(topo, Protocol::kLL, payload);
  const Schedule s = plan(q);
  const double cap = d.protocol(Protocol::kLL).channel_bandwidth.bytes_per_second();
  const double tx_ps = static_cast<double>(payload) / cap * 1e12;
  const double pass_ps = static_cast<double>(geometry(Protocol::kLL).pass_bytes) / 2 / cap * 1e12;
  ASSERT_DOUBLE_EQ(pass_ps * 4, tx_ps);
  for (SimNetwork net : {SimNetwork::kContentionFree, SimNetwork::kMaxMin}) {
    const Time pieces = run(topo, s, false, net, q.comm);
    const Time lines = run(topo, s, true, net, q.comm);
    // wire_time() rounds the transmission and the pass up to whole picoseconds: the saving is
    // 6 x (ceil(tx) - ceil(pass)), within 6 ps of 6 x (tx - pass).
    EXPECT_NEAR(static_cast<double>((pieces - lines).ps()), 6 * (tx_ps - pass_ps), 6.0);
  }
  EXPECT_EQ(run(topo, s, true, SimNetwork::kContentionFree, q.comm),
            run(topo, s, true, SimNetwork::kMaxMin, q.comm));
}

// A piece no larger than one pass arrives in one pass and is forwarded whole: the same time as
// store and forward to the picosecond, and the latency lattice still answers (it models store
// and forward only).
TEST(LineForwarding, PiecesWithinOnePassAreForwardedWhole) {
  const Topology topo = load_topology("dgx-h100", {.default_costs = true});
  for (Protocol p : {Protocol::kLL, Protocol::kLL128}) {
    const std::uint64_t payload = 4096;  // 8 KiB of LL wire: one pass; far below LL128's
    const Request q = broadcast(topo, p, payload);
    const Schedule s = plan(q);
    for (SimNetwork net : {SimNetwork::kContentionFree, SimNetwork::kMaxMin}) {
      EXPECT_EQ(run(topo, s, false, net, q.comm), run(topo, s, true, net, q.comm)) << to_string(p);
    }
    // A small ring AllReduce, which the lattice takes.
    const Request small = request(topo, Collective::kAllReduce, "ring", p, 8, 4);
    SimOptions o;
    for (int r = 0; r < small.comm.size(); ++r) o.placement.push_back(small.comm.gpu(r));
    o.costs = cost_params(topo);
    o.costs->line_forwarding = true;
    EXPECT_GT(simulate(plan(small), topo, o).lattice_cells, 0u) << to_string(p);
  }
}

// Simple's flag follows a whole slice: the switch changes nothing there.
TEST(LineForwarding, SimpleStaysStoreAndForward) {
  const Topology topo = load_topology("dgx-h100", {.default_costs = true});
  const Request q = broadcast(topo, Protocol::kSimple, std::uint64_t{4} << 20);
  const Schedule s = plan(q);
  EXPECT_EQ(run(topo, s, false, SimNetwork::kMaxMin, q.comm),
            run(topo, s, true, SimNetwork::kMaxMin, q.comm));
}

// A forward onto the network is sent by the proxy once the GPU has written the whole step: no
// gain there. A forward off the network onto NVLink gains the piece's transmission.
TEST(LineForwarding, AForwardOntoTheNetworkWaitsForTheWholePiece) {
  const Topology topo = load_topology("h100-2node-ib", {.default_costs = true});
  const std::uint64_t payload = 16384;
  const Rank n0g0{0}, n0g1{1}, n1g0{8}, n1g1{9};  // 8 GPUs a node
  const auto saved = [&](const std::vector<Rank>& ranks) {
    const Request q = broadcast(topo, Protocol::kLL, payload, ranks);
    const Schedule s = plan(q);
    return run(topo, s, false, SimNetwork::kMaxMin, q.comm) -
           run(topo, s, true, SimNetwork::kMaxMin, q.comm);
  };
  EXPECT_EQ(saved({n0g0, n0g1, n1g0}), Time());  // rank 1 forwards onto the network
  EXPECT_GT(saved({n0g0, n1g0, n1g1}), Time());  // rank 1 forwards onto NVLink
}

// A double binary tree across two DGX H100 nodes, LL128, 8 channels: the chains through each
// node are NVLink forwards, so the run gains, under both network models. (It also takes the
// engine through its chained finishes while connections are still being opened.)
TEST(LineForwarding, ATreeAcrossNodesGainsOnItsNvlinkChains) {
  const Topology topo = load_topology("h100-2node-ib", {.default_costs = true});
  const Request q =
      request(topo, Collective::kAllReduce, "dbtree", Protocol::kLL128, std::uint64_t{16} << 20, 8);
  const Schedule s = plan(q);
  for (SimNetwork net : {SimNetwork::kContentionFree, SimNetwork::kMaxMin}) {
    const Time pieces = run(topo, s, false, net, q.comm);
    const Time lines = run(topo, s, true, net, q.comm);
    EXPECT_LT(lines, pieces) << to_string(net);
    EXPECT_GT(lines, cost_params(topo).protocol(Protocol::kLL128).launch) << to_string(net);
  }
}

}  // namespace
}  // namespace collsim
