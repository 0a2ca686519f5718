// Rank symmetry: when shifting every rank by P maps the whole simulation onto itself, only P
// ranks need simulating (internal to simulator/; docs/scale.md explains it).
//
//   RankSymmetry sym = rank_symmetry(schedule, topo, placement, true);
//   sym.period: ranks simulated (rank_count() if there is no symmetry)
//
// The shift by P is a symmetry when
//  1. the schedule says every rank behaves alike (OpSource::rank_symmetric: on each channel the
//     same op kinds and byte counts everywhere, fixed neighbours, no cross-channel dependencies);
//  2. on every channel, the neighbours of rank r + P are those of rank r shifted by P;
//  3. the route of every connection (r -> next) crosses links of the same kinds, bandwidths and
//     latencies, in the same order, as the route of the connection it shifts onto;
//  4. (max-min model only; the contention-free model never shares a link) the shift maps the
//     links in use onto themselves: "link i of connection (r, c)'s route goes to link i of
//     connection (r + P, c)'s" names one image for every link and never the same image for
//     two, and following it from any link comes back after exactly N / P shifts (no link is
//     its own image after fewer, as a core link carrying every period's traffic would be).
//  5. (folded links only, below) every NCCL channel carries an equal part
//     (ScheduleInfo::channels_alike).
// Then every event of rank r has a twin for rank r + P at the same instant, and the simulator
// runs ranks [0, P) only; the connection from rank P - 1 to rank P (period 1) closes the period
// on itself: rank 0 receives it.
//
// How the links are simulated depends on whether periods share them:
//  - Exact (`link_image` empty): each link in use carries the connections of one period only
//    (the senders'), so the periods never meet on a link and the closing connection keeps its
//    real route. Not a picosecond changes (tests/simulator/symmetry_test.cpp, bit for bit).
//  - Folded links (`link_image` set, max-min only): some link carries connections of two
//    periods, as a GPU's downlink does when one ring channel arrives from the rank before and
//    another from the rank after. Each link is replaced by the one standing for its orbit
//    under the shift, so the simulated period's connections meet on it exactly as all
//    periods' connections meet on any one link of the orbit: the same flows, the same max-min
//    shares. The full simulation re-rates the twins' simultaneous flows together once their
//    instant is over, as the folded one does its period's; each re-timing rounds a class's next
//    end to a picosecond, so the two can drift apart by those roundings. The test bounds the drift
//    against the full simulation (tests/simulator/symmetry_test.cpp) and `predict` says which one
//    it used.
#pragma once

#include <cstdint>
#include <vector>

#include "algorithms/ir/schedule.hpp"
#include "topology/topology.hpp"

namespace collsim::detail {

struct RankSymmetry {
  int period = 0;  // ranks simulated: one period, or N when there is no symmetry
  // Per topology link, the link standing for its orbit under the shift (-1 where no simulated
  // route crosses it); empty where no link is shared between periods (the exact case above).
  std::vector<std::int32_t> link_image;
  bool folds_links() const { return !link_image.empty(); }
};

// The smallest period P < N dividing N (N = ranks) for which the shift by P is a symmetry;
// period N when there is none. `gpu[r]` is the cluster rank of schedule rank r; `shared_links`:
// the network model shares links (max-min), so condition 4 applies.
RankSymmetry rank_symmetry(const Schedule& s, const Topology& topo, const std::vector<int>& gpu,
                           bool shared_links);

// Channel folding: NCCL channels that are copies of each other are simulated once, standing for
// all of them (internal to simulator/; docs/scale.md explains it).
//
//   ChannelFold f = fold_channels(schedule, topo, device, actors);
//   simulate the IR channels f.simulated, each one's flows weighing f.weight of it
//
// NCCL channel k (its IR channels, schedule.hpp request_channel) is a copy of channel j when,
// for every simulated actor, each of k's streams is the same sequence of op kinds, peers and byte
// counts as j's, k's cross-channel dependencies are j's shifted by the channel, and every route
// k's sends take crosses the same links as j's. Then, from the launch on, the two run the same
// ops at the same instants over the same links: under the contention-free model each piece
// streams at its route's share whatever the other channels do, and under max-min each of k's
// pieces is a flow of the same class as j's twin piece (flow_network.hpp), with the same rate.
// So the simulator runs j alone and its max-min flows count as many flows as j stands for.
// Where a dependency crosses from one NCCL channel to another, nothing is folded.
struct ChannelFold {
  std::vector<int> simulated;         // IR channels simulated, ascending
  std::vector<std::uint32_t> weight;  // per simulated IR channel: NCCL channels it stands for
  int nccl_channels = 0;              // NCCL channels of the schedule
  int nccl_simulated = 0;             // of those, simulated
};

// `device[a]`: the topology device of actor a (ranks, then switches); `actors`: the actors
// simulated (one period of a rank symmetry, or all of them).
ChannelFold fold_channels(const Schedule& s, const Topology& topo, const std::vector<int>& device,
                          int actors);
// Every channel simulated.
ChannelFold no_fold(const Schedule& s);

}  // namespace collsim::detail
