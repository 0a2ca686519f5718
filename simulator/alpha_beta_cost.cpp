#include "simulator/alpha_beta_cost.hpp"

#include <algorithm>
#include <limits>

namespace collsim {

namespace {

struct Hop {
  Time alpha;
  Bandwidth bw;
  Time excess;  // the protocol's share of alpha
  bool staged_read = false;
};

Hop hop(const Topology& topo, const CostParams& costs, const ProtocolCost& pc, double cap, int from,
        int to, int channels) {
  const Route& r = topo.route(topo.gpu_of(Rank{from}), topo.gpu_of(Rank{to}));
  double narrowest = std::numeric_limits<double>::infinity();
  RouteClass cls = RouteClass::kNvLink;
  for (LinkId l : r.links) {
    const Link& link = topo.link(l);
    narrowest = std::min(narrowest, link_capacity(topo, l, costs));
    if (is_network(link.kind)) {
      cls = RouteClass::kNetwork;
    } else if (!is_nvlink_class(link.kind) && cls == RouteClass::kNvLink) {
      cls = RouteClass::kPcie;
    }
  }
  // The wire rate of one channel, as the contention-free simulation computes it
  // (engine_setup.cpp, route_between): the channels split the narrowest link evenly, and the
  // protocol's cap on payload is a cap of cap / efficiency on wire bytes.
  double wire = narrowest / std::max(1, channels);
  if (cap > 0) wire = std::min(wire, cap * (1.0 / pc.efficiency));
  const Time excess = pc.hop_latency[static_cast<int>(cls)];
  return {topo.route_latency(r) + excess, Bandwidth::bytes_per_second(wire), excess,
          receiver_reads_host(topo, r)};
}

}  // namespace

AlphaBetaCost alpha_beta_cost(const Topology& topo, const Communicator& comm,
                              const CostParams& costs, Protocol protocol, int channels,
                              bool hierarchical, ChannelKernel kernel) {
  const ProtocolCost& pc = costs.protocol(protocol);
  const double cap = costs.channel_cap(protocol, kernel);
  AlphaBetaCost c;
  c.reduce_bandwidth = costs.reduce_bandwidth;
  c.copy_bandwidth = costs.copy_bandwidth;
  c.nvls_bandwidth = costs.nvls_bandwidth;
  c.launch = pc.launch;
  c.step_overhead = pc.step_overhead;
  c.wire_per_byte = 1.0 / pc.efficiency;
  if (comm.size() < 2) {
    c.bandwidth = GBps(1);
    return c;
  }
  const std::vector<int>& node0 = comm.ranks_of_node(0);
  const Hop intra = node0.size() >= 2 ? hop(topo, costs, pc, cap, comm.gpu(node0[0]),
                                            comm.gpu(node0[1]), channels)
                                      : Hop{};
  c.alpha = intra.alpha;
  c.hop_excess = intra.excess;
  c.bandwidth = intra.bw;
  c.staged_read = intra.staged_read;
  if (comm.node_count() > 1) {
    const Hop inter = hop(topo, costs, pc, cap, comm.gpu(node0.back()),
                          comm.gpu(comm.ranks_of_node(1).front()), channels);
    c.alpha_inter = inter.alpha;
    c.bandwidth_inter = inter.bw;
    c.staged_read = c.staged_read || inter.staged_read;
    c.uniform = node0.size() < 2 || (intra.alpha == inter.alpha &&
                                     intra.bw.bytes_per_second() == inter.bw.bytes_per_second());
    if (!hierarchical || node0.size() < 2) {
      c.alpha = node0.size() >= 2 ? std::max(intra.alpha, inter.alpha) : inter.alpha;
      c.bandwidth = node0.size() >= 2 ? std::min(intra.bw, inter.bw) : inter.bw;
    }
  }
  return c;
}

}  // namespace collsim
