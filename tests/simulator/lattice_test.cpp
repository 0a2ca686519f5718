// The latency lattice (simulator/lattice.cpp) must give the event simulation's result to the
// picosecond wherever it engages: the total, every rank's finish and every link's bytes, under
// both network models. It engages only for ring AllReduce whose ops move at most one piece, and
// under max-min only where no two data pieces meet on a link; elsewhere it must stand aside.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <iostream>

#include "algorithms/generators/registry.hpp"
#include "sim_fixtures.hpp"
#include "simulator/simulate.hpp"
#include "topology/loader.hpp"

namespace collsim {
namespace {

Topology cluster(const std::string& config, int nodes) {
  if (config == "flat") return test::flat_switch(nodes);
  return load_topology(config, LoadOptions{nodes});
}

struct Seen {
  int cases = 0;
  int engaged = 0;
};

// Runs the request with the lattice on and off; returns whether it engaged.
bool same_as_events(const Topology& topo, const Request& r, SimNetwork net, Seen& seen) {
  const Schedule s = plan(r);
  SimOptions events;
  events.network = net;
  events.symmetry = false;  // the lattice stands aside for a rank symmetry
  events.lattice = false;
  SimOptions lattice = events;
  lattice.lattice = true;
  const Result a = simulate(s, topo, events);
  const Result b = simulate(s, topo, lattice);
  const std::string what =
      fmt::format("{} {} {} ch{} {} B {}", topo.name(), to_string(r.collective),
                  to_string(r.protocol), r.channels, r.count * 4, to_string(net));
  EXPECT_EQ(a.lattice_cells, 0u) << what;
  EXPECT_EQ(a.total, b.total) << what << ": " << a.total.ps() << " vs " << b.total.ps() << " ps";
  EXPECT_EQ(a.rank_finish, b.rank_finish) << what;
  EXPECT_EQ(a.links.size(), b.links.size()) << what;
  for (std::size_t i = 0; i < std::min(a.links.size(), b.links.size()); ++i) {
    EXPECT_EQ(a.links[i].link, b.links[i].link) << what;
    EXPECT_EQ(a.links[i].bytes, b.links[i].bytes) << what << " link " << a.links[i].link.value;
  }
  ++seen.cases;
  if (b.lattice_cells > 0) {
    ++seen.engaged;
    EXPECT_EQ(b.events, 0u) << what;
  }
  return b.lattice_cells > 0;
}

Request ring(const Topology& topo, Collective c, Protocol p, int channels, std::uint64_t count) {
  Request r;
  r.collective = c;
  r.algorithm = "ring";
  r.protocol = p;
  r.channels = channels;
  r.comm = Communicator::from_topology(topo);
  r.count = count;
  return r;
}

TEST(Lattice, EqualsTheEventSimulationToThePicosecond) {
  Seen seen;
  const std::vector<std::pair<std::string, int>> clusters = {
      {"summit", 4}, {"summit", 16}, {"flat", 64}, {"dgx-h100", 1}, {"h100-2node-ib", 2},
      {"pcie-2gpu", 1}};
  for (const auto& [config, nodes] : clusters) {
    const Topology topo = cluster(config, nodes);
    const auto n = static_cast<std::uint64_t>(topo.rank_count());
    // f32 counts: one element, a few, one per rank and a bit more, and a size that needs
    // several pieces an op (the lattice must stand aside there).
    for (std::uint64_t count : {std::uint64_t{2}, std::uint64_t{7}, n + 3, 3 * n, 64 * n + 5,
                                std::uint64_t{1} << 20}) {
      for (Protocol p : {Protocol::kLL, Protocol::kLL128, Protocol::kSimple}) {
        for (int channels : {1, 2, 4}) {
          for (SimNetwork net : {SimNetwork::kMaxMin, SimNetwork::kContentionFree}) {
            same_as_events(topo, ring(topo, Collective::kAllReduce, p, channels, count), net,
                           seen);
          }
        }
      }
    }
  }
  std::cout << fmt::format("lattice: {} cases, engaged in {}\n", seen.cases, seen.engaged);
  EXPECT_GT(seen.engaged, seen.cases / 3);
}

TEST(Lattice, EngagesForTheSmallRingAndStandsAsideElsewhere) {
  Seen seen;
  const Topology summit = cluster("summit", 16);
  // 8 B on 96 GPUs: the case the lattice exists for, under the default model.
  EXPECT_TRUE(same_as_events(summit, ring(summit, Collective::kAllReduce, Protocol::kLL, 2, 2),
                             SimNetwork::kMaxMin, seen));
  // A 4 MiB AllReduce moves several pieces an op; AllGather is not a RingLattice.
  EXPECT_FALSE(same_as_events(summit,
                              ring(summit, Collective::kAllReduce, Protocol::kLL, 2, 1 << 20),
                              SimNetwork::kMaxMin, seen));
  EXPECT_FALSE(same_as_events(summit, ring(summit, Collective::kAllGather, Protocol::kLL, 2, 96),
                              SimNetwork::kMaxMin, seen));
  // On one switch, 16 channels of one element each: the channels' data pieces meet on the
  // switch's links, so under max-min they share them and the lattice must stand aside.
  const Topology flat = cluster("flat", 8);
  EXPECT_FALSE(same_as_events(flat, ring(flat, Collective::kAllReduce, Protocol::kSimple, 16,
                                         8 * 16),
                              SimNetwork::kMaxMin, seen));
}

}  // namespace
}  // namespace collsim
