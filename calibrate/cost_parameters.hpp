// The cost parameters calibration can fit, each one a key of the `costs:` schema
// (topology/cost_schema.hpp, whose bounds the fit keeps to) and a field of CostParams:
//
//   protocols.<p>.launch               time, once per collective (NCCL's baseLat)
//   protocols.<p>.hop_latency.<class>  time per piece and hop, beyond the links' own latency, by
//                                      route class (nvlink, pcie, network): the per-link-kind
//                                      latency of the issue
//   protocols.<p>.efficiency           payload per wire byte (LL, LL128; Simple is the reference)
//   protocols.<p>.channel_bandwidth    per-channel cap
//   link_efficiency.<kind>             achievable fraction of a link kind's line rate
//
//   std::vector<CostParameter> ps = cost_parameters_for(topo, {Protocol::kSimple});
//   ps[0].set_value(params, ps[0].value(params) + 0.1);
//
// Times are fitted on a linear scale in microseconds (they may be 0); rates and fractions on a
// log scale (positive, multiplicative errors). `value()` and `set_value()` speak the fit's scale.
//
// LL's and LL128's efficiency start at their wire formats (8 data bytes per 16-byte line, 120 of
// 128); fitted, they become what the links actually carry for the protocol, which on NVSwitch
// systems is more than the format suggests (fewer flag bytes cross the fabric than the model's
// worst case). Simple is the reference at 1.
#pragma once

#include <string>
#include <vector>

#include "algorithms/ir/types.hpp"
#include "simulator/cost_params.hpp"
#include "topology/device.hpp"
#include "topology/topology.hpp"

namespace collsim {

struct CostParameter {
  CostField field;  // the `costs:` key it is (topology/cost_schema.hpp)
  // Empty: one value for every cluster of the fit. Else the one cluster (config name) it belongs
  // to: in a joint fit each cluster's host issues its own collectives (host_launch, host_channel:
  // its CPU, driver and NCCL's enqueue path), a cost no other cluster's rows say anything about.
  std::string cluster = {};

  std::string path() const { return field.path(); }  // "protocols.simple.launch"
  // How reports name it: the path, and for one cluster's own "host_launch@dgx-a100".
  std::string label() const { return cluster.empty() ? path() : path() + "@" + cluster; }
  bool log_scale() const;                   // rates and fractions
  double value(const CostParams& c) const;  // fit scale: us, or log(fraction | bytes/s)
  void set_value(CostParams& c, double v) const;
  double lower() const;  // fit-scale bounds: the schema's bounds on the fit's scale
  double upper() const;
  double step() const;  // finite-difference step on the fit scale
  // The natural value as the overlay writes it: "12.500us", "28.40GB/s", "0.8240".
  std::string format(const CostParams& c) const;
  // One standard error, `sigma` on the fit scale, in natural units: "0.42us", "3.1%".
  std::string format_sigma(const CostParams& c, double sigma) const;
};

// The parameters that can matter for these protocols on this cluster: launch, hop latency for the
// route classes its links have, efficiency of LL and LL128, the channel cap where one is set,
// and the efficiency of every link kind present.
std::vector<CostParameter> cost_parameters_for(const Topology& topo,
                                               const std::vector<Protocol>& protocols,
                                               const CostParams& start);

}  // namespace collsim
