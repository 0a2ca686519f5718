// Rank symmetry: when shifting every rank by P maps the whole simulation onto itself, only P
// ranks need simulating (internal to simulator/; docs/scale.md explains it).
//
//   int p = symmetry_period(schedule, topo, placement, true);  // rank_count() if none
//
// The shift by P is a symmetry when
//  1. the schedule says every rank behaves alike (OpSource::rank_symmetric: on each channel the
//     same op kinds and byte counts everywhere, fixed neighbours, no cross-channel dependencies);
//  2. on every channel, the neighbours of rank r + P are those of rank r shifted by P;
//  3. the route of every connection (r -> next) crosses links of the same kinds, bandwidths and
//     latencies, in the same order, as the route of the connection it shifts onto;
//  4. (max-min model only; the contention-free model never shares a link) links are not shared
//     between periods (ranks [jP, (j+1)P)): each link in use carries the connections of one
//     period only (the senders'), and the connections sharing a link in period j are those
//     sharing one in period 0, shifted by jP.
// Then the periods never meet on a link: each runs the same computation on its own flows
// (max-min shares are recomputed per link, from the flows on it), and every event of rank r
// has a twin for rank r + P at the same instant. The simulator runs ranks [0, P) only; the
// connection from rank P - 1 to rank P (period 1) closes the period on itself: rank 0 receives
// it, with the route of the real connection. Condition 4 is strict on purpose: where two
// periods share a link (a NIC's PCIe link carrying one channel's traffic from the previous
// node and another's from the next), the engine's incremental max-min refill sees the twins'
// simultaneous events one at a time, and times could differ in the last picoseconds. A test
// compares the two on every collective where both run (tests/simulator/symmetry_test.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "algorithms/ir/schedule.hpp"
#include "topology/topology.hpp"

namespace collsim::detail {

// The smallest period P < N dividing N (N = ranks) for which the shift by P is a symmetry;
// N when there is none. `gpu[r]` is the cluster rank of schedule rank r; `shared_links`: the
// network model shares links (max-min), so condition 4 applies.
int symmetry_period(const Schedule& s, const Topology& topo, const std::vector<int>& gpu,
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
