// The `costs:` overlay of a cluster YAML. Every key is optional; what is given replaces the
// default (cost_params.cpp), what is not keeps it:
//
//   costs:
//     link_efficiency:            # usable fraction of line rate, (0, 1], per link kind
//       nvlink: 0.824             # nvlink nvswitch pcie smp ib roce ethernet c2c
//     reduce_bandwidth: 1.1TB/s   # γ = 1 / this; "free" for none
//     copy_bandwidth: 1.6TB/s     # local copies; "free" for none
//     protocols:
//       simple:                   # ll ll128 simple
//         efficiency: 1.0         # payload / wire bytes, (0, 1]
//         channel_bandwidth: 30GB/s   # per channel (CTA); "none" for no cap
//         launch: 8.4us           # once per collective
//         hop_latency: {nvlink: 2.8us, pcie: 4.7us, network: 13.4us}   # per piece, by route
//
// Errors are ConfigErrors at the offending node, e.g.
//   x.yaml:4:7: costs.protocols.simpel: unknown key; expected one of ll, ll128, simple; did you
//   mean "simple"?
#include "simulator/cost_params.hpp"
#include "topology/config_node.hpp"

namespace collsim {

namespace {

Bandwidth bandwidth_or_zero(const ConfigNode& n, std::string_view zero_word) {
  if (n.as_string() == zero_word) return Bandwidth();
  return n.as_bandwidth();
}

void apply_protocol(const ConfigNode& n, ProtocolCost& p) {
  n.allow_keys({"efficiency", "channel_bandwidth", "launch", "hop_latency"});
  if (auto e = n.get("efficiency")) p.efficiency = e->as_number(1e-6, 1.0);
  if (auto b = n.get("channel_bandwidth")) p.channel_bandwidth = bandwidth_or_zero(*b, "none");
  if (auto l = n.get("launch")) p.launch = l->as_time();
  if (auto h = n.get("hop_latency")) {
    h->allow_keys({"nvlink", "pcie", "network"});
    for (int c = 0; c < kRouteClassCount; ++c) {
      if (auto t = h->get(to_string(static_cast<RouteClass>(c)))) p.hop_latency[c] = t->as_time();
    }
  }
}

}  // namespace

void apply_cost_overrides(const ConfigNode& costs, CostParams& params) {
  costs.allow_keys({"link_efficiency", "reduce_bandwidth", "copy_bandwidth", "protocols"});
  if (auto le = costs.get("link_efficiency")) {
    le->allow_keys({"nvlink", "nvswitch", "pcie", "smp", "ib", "roce", "ethernet", "c2c"});
    for (int k = 0; k < kLinkKindCount; ++k) {
      if (auto v = le->get(to_string(static_cast<LinkKind>(k)))) {
        params.link_efficiency[k] = v->as_number(1e-6, 1.0);
      }
    }
  }
  if (auto r = costs.get("reduce_bandwidth"))
    params.reduce_bandwidth = bandwidth_or_zero(*r, "free");
  if (auto c = costs.get("copy_bandwidth")) params.copy_bandwidth = bandwidth_or_zero(*c, "free");
  if (auto ps = costs.get("protocols")) {
    ps->allow_keys({"ll", "ll128", "simple"});
    for (Protocol p : all_protocols()) {
      if (auto n = ps->get(to_string(p))) apply_protocol(*n, params.protocol(p));
    }
  }
}

}  // namespace collsim
