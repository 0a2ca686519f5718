#include "calibrate/cost_parameters.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace collsim {

namespace {

RouteClass route_class_of(LinkKind k) {
  switch (k) {
    case LinkKind::kNvLink:
    case LinkKind::kNvSwitch:
    case LinkKind::kC2c:
      return RouteClass::kNvLink;
    case LinkKind::kPcie:
    case LinkKind::kSmp:
      return RouteClass::kPcie;
    default:
      return RouteClass::kNetwork;
  }
}

}  // namespace

bool CostParameter::log_scale() const { return field.unit() != CostUnit::kTime; }

// Times are fitted in microseconds, on a linear scale (they may be 0); the schema holds them in
// picoseconds.
double CostParameter::value(const CostParams& c) const {
  const double v = cost_value(c, field);
  return log_scale() ? std::log(v) : v * 1e-6;
}

void CostParameter::set_value(CostParams& c, double v) const {
  if (!log_scale()) {
    set_cost_value(c, field, std::round(v * 1e6));
  } else if (field.unit() == CostUnit::kFraction) {
    set_cost_value(c, field, std::min(1.0, std::exp(v)));
  } else {
    set_cost_value(c, field, std::exp(v));
  }
}

double CostParameter::lower() const {
  return log_scale() ? std::log(field.lower()) : field.lower() * 1e-6;
}

double CostParameter::upper() const {
  return log_scale() ? std::log(field.upper()) : field.upper() * 1e-6;
}

double CostParameter::step() const { return log_scale() ? 0.02 : 0.05; }

std::string CostParameter::format(const CostParams& c) const {
  return format_cost_value(field, cost_value(c, field));
}

std::string CostParameter::format_sigma(const CostParams&, double sigma) const {
  if (!log_scale()) return fmt::format("{:.3f}us", sigma);
  return fmt::format("{:.1f}%", 100 * sigma);  // sd of the log = relative sd
}

std::vector<CostParameter> cost_parameters_for(const Topology& topo,
                                               const std::vector<Protocol>& protocols,
                                               const CostParams& start) {
  std::vector<bool> kinds(kLinkKindCount, false);
  std::vector<bool> classes(kRouteClassCount, false);
  for (const Link& l : topo.links()) {
    kinds[static_cast<int>(l.kind)] = true;
    classes[static_cast<int>(route_class_of(l.kind))] = true;
  }
  using K = CostField::Kind;
  std::vector<CostParameter> out;
  for (Protocol p : protocols) {
    const int pi = static_cast<int>(p);
    out.push_back({{K::kLaunch, pi}});
    for (int rc = 0; rc < kRouteClassCount; ++rc) {
      if (classes[rc]) out.push_back({{K::kHopLatency, pi, rc}});
    }
    if (p != Protocol::kSimple) out.push_back({{K::kEfficiency, pi}});
    if (start.protocol(p).channel_bandwidth.bytes_per_second() > 0) {
      out.push_back({{K::kChannelBandwidth, pi}});
    }
    // A protocol whose steps cost their sender nothing beyond the data (LL's flags travel with
    // it) keeps none; one that pays per step has it fitted.
    if (start.protocol(p).step_overhead > Time()) out.push_back({{K::kStepOverhead, pi}});
  }
  // Host staging: the root port's links of a host whose GPUs attach over PCIe. Where those links
  // bind, it and link_efficiency.pcie move the rows alike, and the fit takes host staging
  // (calibration.cpp, LsqProblem::priority).
  for (std::size_t l = 0; l < topo.links().size(); ++l) {
    if (stages_in_host(topo, LinkId{static_cast<std::int32_t>(l)})) {
      out.push_back({{K::kHostStaging}});
      break;
    }
  }
  for (int k = 0; k < kLinkKindCount; ++k) {
    if (kinds[k]) out.push_back({{K::kLinkEfficiency, 0, 0, k}});
  }
  // The NVSwitch's NVLS rate, where its switch reduces (sm90+ GPUs on NVSwitch).
  if (kinds[static_cast<int>(LinkKind::kNvSwitch)] && topo.gpu_model().sm >= 90 &&
      start.nvls_bandwidth.bytes_per_second() > 0) {
    out.push_back({{K::kNvlsBandwidth}});
  }
  return out;
}

}  // namespace collsim
