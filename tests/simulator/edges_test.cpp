// The edges of the input space: huge sizes and element counts past 32 bits, one rank, 65,536
// ranks in the closed forms, links from 1 Mbps to 10 TB/s and latencies from 1 ns to 1 s (past
// the 1 ms a config may give a link, set on the built topology). Each result must be finite and
// positive, move the way the model says it must, or be a clear TimeRangeError where the time
// itself cannot be represented (more than 2^63 ps).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "algorithms/generators/registry.hpp"
#include "algorithms/models/estimate.hpp"
#include "simulator/simulate.hpp"
#include "topology/builder.hpp"
#include "topology/error.hpp"
#include "topology/loader.hpp"

namespace collsim {
namespace {

// Two GPUs joined by one NVLink-mesh link of the given speed (templated config form).
Topology pair(const std::string& bandwidth, const std::string& latency) {
  return parse_topology(fmt::format(R"(name: edge
nodes: 1
node:
  gpu: H100-SXM
  gpus: 2
  nvlink: {{fabric: mesh, bandwidth: {}, latency: {}}}
  pcie: {{bandwidth: 63GB/s, latency: 0.5us, switches: 1}}
)",
                                    bandwidth, latency),
                        "edge.yaml");
}

Time ring_allreduce(const Topology& topo, std::uint64_t bytes, DataType t = DataType::kU8) {
  Request r;
  r.collective = Collective::kAllReduce;
  r.dtype = t;
  r.channels = 1;
  r.comm = Communicator::from_topology(topo);
  r.count = bytes / element_size(t);
  SimOptions o;
  o.network = SimNetwork::kContentionFree;
  return simulate(plan(r), topo, o).total;
}

TEST(Edges, SizesUpTo2To40BytesAndCountsPast32Bits) {
  const Topology topo = pair("450GB/s", "0.6us");
  // 2^33 one-byte elements: the count alone overflows 32 bits.
  const Time t33 = ring_allreduce(topo, 1ull << 33);
  const Time t40 = ring_allreduce(topo, 1ull << 40);
  EXPECT_GT(t33.ps(), 0);
  // Bandwidth-bound: 128x the bytes take between 100x and 130x the time.
  const double ratio = static_cast<double>(t40.ps()) / static_cast<double>(t33.ps());
  EXPECT_GT(ratio, 100);
  EXPECT_LT(ratio, 130);
}

TEST(Edges, OneRank) {
  const Topology topo = load_topology("dgx-h100");
  Request r;
  r.collective = Collective::kAllReduce;
  r.count = 1 << 20;
  r.comm = Communicator::from_topology(topo, {Rank{0}});
  const Result res = simulate(plan(r), topo);
  // Nothing crosses a link: the launch and one local copy at most.
  EXPECT_GE(res.total.ps(), 0);
  EXPECT_LT(res.total.us(), 100);
}

TEST(Edges, SixtyFiveThousandRanksInTheClosedForms) {
  AlphaBetaCost cost;
  cost.alpha = us(1);
  cost.bandwidth = GBps(25);
  cost.launch = us(10);
  double previous = 0;
  for (int ranks : {2, 64, 4096, 65536}) {
    for (const char* algo : {"ring", "rhd"}) {
      EstimateRequest q;
      q.algorithm = algo;
      q.ranks = ranks;
      q.bytes = Bytes(1ull << 30);
      q.piece_bytes = 1 << 20;
      q.chunk_bytes = 1 << 20;
      q.cost = cost;
      const Estimate e = estimate(q);
      EXPECT_GT(e.time.ps(), 0) << algo << " " << ranks;
      EXPECT_TRUE(std::isfinite(e.time.us()));
    }
    EstimateRequest ring;
    ring.ranks = ranks;
    ring.bytes = Bytes(8);
    ring.piece_bytes = 1 << 20;
    ring.chunk_bytes = 1 << 20;
    ring.cost = cost;
    // A small ring AllReduce is 2(p-1) latency-bound steps: it grows with the ranks.
    const double t = estimate(ring).time.us();
    EXPECT_GT(t, previous) << ranks;
    previous = t;
  }
}

TEST(Edges, BandwidthsFrom1MbpsTo10TBpsAreFiniteAndMonotone) {
  double previous = INFINITY;
  for (const char* bw : {"1Mbps", "1Gbps", "100Gbps", "450GB/s", "10000GB/s"}) {
    const double t = ring_allreduce(pair(bw, "0.6us"), 1 << 20).us();
    EXPECT_TRUE(std::isfinite(t)) << bw;
    EXPECT_GT(t, 0) << bw;
    // Faster links never slow it down; past the per-channel cap (30 GB/s) they stop helping.
    EXPECT_LE(t, previous) << bw;
    if (previous < INFINITY && std::string(bw) != "10000GB/s") {
      EXPECT_LT(t, previous) << bw;
    }
    previous = t;
  }
}

TEST(Edges, LatenciesFrom1nsTo1sAreFiniteAndMonotone) {
  // A config gives a link at most 1 ms (topology/units.hpp, kMaxLinkLatency); the simulator
  // itself is checked beyond it on a topology whose links are set after the build.
  EXPECT_THROW(pair("450GB/s", "1s"), ConfigError);
  double previous = 0;
  for (const Time lat : {ns(1), us(1), ms(1), sec(1)}) {
    Topology topo = pair("450GB/s", "1ns");
    for (std::size_t l = 0; l < topo.links().size(); ++l) {
      const LinkId id{static_cast<std::int32_t>(l)};
      TopologyBuilder::set_link_cost(topo, id, topo.link(id).bandwidth, lat);
    }
    const double t = ring_allreduce(topo, 1 << 20).us();
    EXPECT_TRUE(std::isfinite(t)) << to_string(lat);
    EXPECT_GT(t, previous) << to_string(lat) << ": longer latency, no faster collective";
    previous = t;
  }
}

// 2^40 bytes over a 1 Mbps link: a ring AllReduce over 3 ranks moves 2(p-1)/p x 2^40 B through
// each link, 1.2e7 s = 1.2e19 ps, past 2^63 ps (9.2e18): a clear error, not a wrapped (negative
// or small) time. The simulation of 2 ranks adds the link efficiency and gets there too.
TEST(Edges, TimesBeyondTheRangeAreAnErrorNotAWrap) {
  EXPECT_THROW(ring_allreduce(pair("1Mbps", "1us"), 1ull << 40), TimeRangeError);
  AlphaBetaCost cost;
  cost.alpha = us(1);
  cost.bandwidth = Bandwidth::bytes_per_second(125000);  // 1 Mbps
  EstimateRequest q;
  q.ranks = 3;
  q.bytes = Bytes(1ull << 40);
  q.piece_bytes = 1 << 20;
  q.chunk_bytes = 1 << 20;
  q.cost = cost;
  EXPECT_THROW(estimate(q), TimeRangeError);
}

}  // namespace
}  // namespace collsim
