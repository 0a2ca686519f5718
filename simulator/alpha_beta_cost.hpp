// The α-β parameters of a cluster for the closed forms (algorithms/models/estimate.hpp): what
// `collsim predict --model alpha-beta` uses.
//
//   AlphaBetaCost c = alpha_beta_cost(topo, comm, default_cost_params(topo), Protocol::kSimple,
//   24); Estimate e = estimate(estimate_request(schedule.info(), comm.node_count(), c));
//
// α is the route latency between neighbouring ranks plus the protocol's per-hop excess; the
// bandwidth is what one channel gets when `channels` channels share the GPU's narrowest link on
// that route (link bandwidth x link efficiency / channels), in wire bytes, capped by the
// protocol's channel bandwidth (and the kernel's own cap, for NCCL's point-to-point kernel and
// NVLSTree: CostParams::channel_cap) over its payload efficiency; wire_per_byte turns payload
// into wire bytes. With several nodes the inter-node level is the route from the last rank of
// node 0 to the first of node 1; flat algorithms take the worse of the two levels (the slowest
// hop paces a ring), hierarchical ones (ring2d, dbtree) use both.
#pragma once

#include "algorithms/ir/communicator.hpp"
#include "algorithms/models/estimate.hpp"
#include "simulator/cost_params.hpp"
#include "topology/topology.hpp"

namespace collsim {

AlphaBetaCost alpha_beta_cost(const Topology& topo, const Communicator& comm,
                              const CostParams& costs, Protocol protocol, int channels,
                              bool hierarchical,
                              ChannelKernel kernel = ChannelKernel::kCollective);

}  // namespace collsim
