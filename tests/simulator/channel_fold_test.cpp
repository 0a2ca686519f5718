// Channel folding (simulator/symmetry.hpp, ChannelFold): NCCL channels that are copies of each
// other are simulated once, their flows counting for all of them. Against the full simulation on
// every preset, AllReduce by every algorithm, each protocol, several sizes, under both network
// models.
//
// Contention-free, and the ring family (ring, ring2d, rhd) under max-min, must not change a
// picosecond. Pipelined trees under max-min change a little: the full simulation meets the
// copies' simultaneous piece ends and starts one at a time, each re-rating the links with the
// other copies half-way through the instant and rounding the new finish up to a picosecond; the
// folded run meets them as one. On a tree sharing NVSwitch ports those picoseconds reorder later
// pieces. Measured on 2026-11-25 (the sweeps below): multi-node dbtree within 0.08 %; bintree
// inside one NVSwitch node (which NCCL does not run: its intra-node tree is a chain) up to 1.9 %
// (dgx-a100, LL, 512 MiB, 24 channels). The full simulation moves by 0.6 % on such a case when
// only its clocks round differently (flow_network.hpp), so these are the model's own rounding,
// not the fold's.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <set>
#include <string>

#include "algorithms/generators/registry.hpp"
#include "simulator/simulate.hpp"
#include "topology/loader.hpp"

namespace collsim {
namespace {

constexpr double kTreeBound = 0.02;  // the largest measured: 1.9 % (above)

struct Tally {
  int cases = 0;
  int folded = 0;
};

// A collective (AllReduce unless said) of `count` elements by `algo`/`proto` on all of `topo`'s
// GPUs.
Request all_reduce(const Topology& topo, const std::string& algo, Protocol proto, int channels,
                   std::uint64_t count, Collective coll = Collective::kAllReduce) {
  Request r;
  r.collective = coll;
  r.algorithm = algo;
  r.protocol = proto;
  r.channels = channels;
  r.comm = Communicator::from_topology(topo);
  r.count = count;
  return r;
}

// AllReduce (or `coll`) by `algo` with fold on and off; nothing when the cluster cannot run it.
void compare(const Topology& topo, const std::string& algo, Protocol proto, int channels,
             std::uint64_t bytes, Tally& tally, Collective coll = Collective::kAllReduce) {
  static const std::set<std::string> exact = {"ring", "ring2d", "rhd"};
  const std::uint64_t count =
      is_blocked(coll) ? bytes / 4 / static_cast<std::uint64_t>(topo.rank_count()) : bytes / 4;
  const Request r = all_reduce(topo, algo, proto, channels, count, coll);
  std::optional<Schedule> s;
  try {
    s = plan(r);
  } catch (const RequestError&) {
    return;  // not an algorithm this cluster runs
  }
  for (SimNetwork net : {SimNetwork::kMaxMin, SimNetwork::kContentionFree}) {
    const std::string what = fmt::format("{} {} {} {} ch{} {} B {}", topo.name(), to_string(coll),
                                         algo, to_string(proto), channels, bytes, to_string(net));
    SimOptions full;
    full.network = net;
    full.fold_channels = false;
    SimOptions fast = full;
    fast.fold_channels = true;
    Result a;
    try {
      a = simulate(*s, topo, full);
    } catch (const RequestError&) {
      return;  // nvls_tree where no NVSwitch reduces
    }
    const Result b = simulate(*s, topo, fast);
    ++tally.cases;
    EXPECT_EQ(a.simulated_channels, a.nccl_channels) << what;
    if (b.simulated_channels == b.nccl_channels) {
      EXPECT_EQ(a.total, b.total) << what;
      continue;
    }
    ++tally.folded;
    EXPECT_LT(b.events, a.events) << what;
    if (exact.count(algo) != 0 || net == SimNetwork::kContentionFree) {
      EXPECT_EQ(a.total, b.total) << what;
      EXPECT_EQ(a.rank_finish, b.rank_finish) << what;
    } else {
      EXPECT_NEAR(b.total.us(), a.total.us(), kTreeBound * a.total.us()) << what;
    }
    // The links carry what they carry in the full run.
    ASSERT_EQ(a.links.size(), b.links.size()) << what;
    for (std::size_t i = 0; i < a.links.size(); ++i) {
      EXPECT_EQ(a.links[i].bytes, b.links[i].bytes) << what;
    }
  }
}

TEST(ChannelFold, CopiesSimulatedOnceGiveTheFullSimulationsTime) {
  Tally tally;
  for (const auto& [config, nodes] :
       std::vector<std::pair<std::string, int>>{{"dgx-h100", 1},
                                                {"dgx-a100", 1},
                                                {"h100-2node-ib", 2},
                                                {"h100-16node-ib", 4},
                                                {"a100-2node-roce", 2},
                                                {"h100-4gpu-2node-ndr200", 2},
                                                {"pcie-2gpu", 1}}) {
    const Topology topo = load_topology(config, LoadOptions{nodes});
    for (const std::string algo : {"ring", "bintree", "dbtree", "ring2d", "rhd", "nvls_tree"}) {
      for (Protocol proto : {Protocol::kLL, Protocol::kLL128, Protocol::kSimple}) {
        for (std::uint64_t bytes : {std::uint64_t{1} << 20, std::uint64_t{64} << 20}) {
          compare(topo, algo, proto, 8, bytes, tally);
        }
      }
    }
  }
  // Single-node NVSwitch, PCIe and 4-GPU-node clusters fold; 8-NIC nodes give each channel its
  // own NIC, so their multi-node rings do not.
  EXPECT_GT(tally.folded, tally.cases * 2 / 3) << tally.folded << " of " << tally.cases;
}

// CollNet and NVLS across nodes where the switches reduce: the folded run against the full one,
// at 8 channels (one per head) and 16, AllReduce and (CollNetDirect, NVLS) AllGather and
// ReduceScatter. CollNetDirect is never folded (engine_setup.cpp: its folded run ended 3.7 %
// late under max-min at 64 MiB), so its cases compare equal runs; the chain and NVLS fold within
// the bound.
TEST(ChannelFold, CollNetAndNvlsOnASharpFabric) {
  Tally tally;
  const Topology topo = load_topology("h100-16node-sharp", LoadOptions{2});
  for (const std::string algo : {"collnet_direct", "collnet_chain", "nvls"}) {
    for (Collective coll :
         {Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter}) {
      if (algo == "collnet_chain" && coll != Collective::kAllReduce) continue;
      for (int channels : {8, 16}) {
        for (std::uint64_t bytes : {std::uint64_t{1} << 20, std::uint64_t{64} << 20}) {
          compare(topo, algo, Protocol::kSimple, channels, bytes, tally, coll);
        }
      }
    }
  }
  EXPECT_EQ(tally.cases, 7 * 2 * 2 * 2);  // both networks of every case ran
}

// The trees at NCCL's channel count on these nodes (24), 1 MiB to 512 MiB.
TEST(ChannelFold, TreesAtTwentyFourChannels) {
  Tally tally;
  for (const char* config : {"dgx-h100", "dgx-a100", "h100-4gpu-2node-ndr200"}) {
    const Topology topo = load_topology(config);
    for (const std::string algo : {"bintree", "dbtree"}) {
      for (Protocol proto : {Protocol::kLL, Protocol::kLL128, Protocol::kSimple}) {
        for (std::uint64_t mib : {1, 4, 16, 32, 128, 512}) {
          compare(topo, algo, proto, 24, mib << 20, tally);
        }
      }
    }
  }
  EXPECT_EQ(tally.folded, tally.cases);
}

// NCCL's uneven division (Request::split): 1 GiB on 24 channels as NCCL 2.30 cuts it, 23
// channels of 2731 cells of 16 KiB and a last one of 2723. Folding the alike channels gives the
// time of simulating every one; rank symmetry with folded links does not engage (it drifted
// 1.1 % here, simulator/symmetry.cpp), while with 24 equal parts it still does.
TEST(ChannelFold, UnevenSplitsFoldExactly) {
  const Topology topo = load_topology("dgx-h100");
  Request r = all_reduce(topo, "ring", Protocol::kSimple, 24, (std::uint64_t{1} << 30) / 4);
  r.split = {2731 * 4096, 2731 * 4096, r.count - 23 * 2731 * 4096, 22};
  Request even = r;  // 768 MiB: 24 equal parts
  even.count = (std::uint64_t{768} << 20) / 4;
  even.split = {even.count / 24, even.count / 24, even.count / 24, 22};
  SimOptions full;
  full.symmetry = false;
  full.fold_channels = false;
  for (const Request* q : {&r, &even}) {
    const Schedule s = plan(*q);
    const Result a = simulate(s, topo, full);
    const Result b = simulate(s, topo, SimOptions{});
    EXPECT_LT(b.simulated_channels, b.nccl_channels);
    EXPECT_EQ(b.simulated_ranks, q == &r ? 8 : 1);
    EXPECT_EQ(a.total, b.total);
  }
}

// On dgx-h100 the ring runs one way on even channels and the other way on odd ones: with equal
// shares, channel 2 copies 0 and 3 copies 1. A count that does not divide evenly gives the
// channels different shares: none copies another.
TEST(ChannelFold, OnlyChannelsThatRunTheSameOpsAreCopies) {
  const Topology topo = load_topology("dgx-h100");
  for (const auto& [count, simulated] :
       std::vector<std::pair<std::uint64_t, int>>{{8 * 4 * 1000, 2}, {8 * 4 * 1000 + 8, 4}}) {
    const Schedule s = plan(all_reduce(topo, "ring", Protocol::kSimple, 4, count));
    SimOptions full;
    full.fold_channels = false;
    const Result a = simulate(s, topo, full);
    const Result b = simulate(s, topo);
    EXPECT_EQ(b.nccl_channels, 4);
    EXPECT_EQ(b.simulated_channels, simulated) << count;
    EXPECT_EQ(a.total, b.total) << count;
  }
}

}  // namespace
}  // namespace collsim
