#include "calibrate/cost_parameters.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace collsim {

namespace {

double to_us(Time t) { return static_cast<double>(t.ps()) * 1e-6; }
Time from_us(double v) { return Time::from_ps(static_cast<std::int64_t>(std::llround(v * 1e6))); }

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

std::string CostParameter::path() const {
  const auto p = to_string(protocol);
  switch (field) {
    case Field::kLaunch:
      return fmt::format("protocols.{}.launch", p);
    case Field::kHopLatency:
      return fmt::format("protocols.{}.hop_latency.{}", p, to_string(route));
    case Field::kEfficiency:
      return fmt::format("protocols.{}.efficiency", p);
    case Field::kChannelBandwidth:
      return fmt::format("protocols.{}.channel_bandwidth", p);
    case Field::kLinkEfficiency:
      return fmt::format("link_efficiency.{}", to_string(link));
  }
  return {};
}

bool CostParameter::log_scale() const {
  return field != Field::kLaunch && field != Field::kHopLatency;
}

double CostParameter::value(const CostParams& c) const {
  const ProtocolCost& p = c.protocol(protocol);
  switch (field) {
    case Field::kLaunch:
      return to_us(p.launch);
    case Field::kHopLatency:
      return to_us(p.hop_latency[static_cast<int>(route)]);
    case Field::kEfficiency:
      return std::log(p.efficiency);
    case Field::kChannelBandwidth:
      return std::log(p.channel_bandwidth.bytes_per_second());
    case Field::kLinkEfficiency:
      return std::log(c.efficiency(link));
  }
  return 0;
}

void CostParameter::set_value(CostParams& c, double v) const {
  ProtocolCost& p = c.protocol(protocol);
  switch (field) {
    case Field::kLaunch:
      p.launch = from_us(v);
      break;
    case Field::kHopLatency:
      p.hop_latency[static_cast<int>(route)] = from_us(v);
      break;
    case Field::kEfficiency:
      p.efficiency = std::min(1.0, std::exp(v));
      break;
    case Field::kChannelBandwidth:
      p.channel_bandwidth = Bandwidth::bytes_per_second(std::exp(v));
      break;
    case Field::kLinkEfficiency:
      c.link_efficiency[static_cast<int>(link)] = std::min(1.0, std::exp(v));
      break;
  }
}

// Bounds wide enough never to bind on a sane fit, tight enough to keep the simulator finite.
double CostParameter::lower() const {
  switch (field) {
    case Field::kLaunch:
    case Field::kHopLatency:
      return 0;
    case Field::kChannelBandwidth:
      return std::log(1e8);  // 0.1 GB/s
    default:
      return std::log(0.01);
  }
}

double CostParameter::upper() const {
  switch (field) {
    case Field::kLaunch:
      return 10000;  // 10 ms
    case Field::kHopLatency:
      return 1000;
    case Field::kChannelBandwidth:
      return std::log(1e13);
    default:
      return 0;  // a fraction of at most 1
  }
}

double CostParameter::step() const { return log_scale() ? 0.02 : 0.05; }

std::string CostParameter::format(const CostParams& c) const {
  const double v = value(c);
  switch (field) {
    case Field::kLaunch:
    case Field::kHopLatency:
      return fmt::format("{:.3f}us", v);
    case Field::kChannelBandwidth:
      return fmt::format("{:.2f}GB/s", std::exp(v) / 1e9);
    default:
      return fmt::format("{:.4f}", std::exp(v));
  }
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
  using F = CostParameter::Field;
  std::vector<CostParameter> out;
  for (Protocol p : protocols) {
    out.push_back({F::kLaunch, p});
    for (int rc = 0; rc < kRouteClassCount; ++rc) {
      if (classes[rc]) out.push_back({F::kHopLatency, p, static_cast<RouteClass>(rc)});
    }
    if (p != Protocol::kSimple) out.push_back({F::kEfficiency, p});
    if (start.protocol(p).channel_bandwidth.bytes_per_second() > 0) {
      out.push_back({F::kChannelBandwidth, p});
    }
  }
  for (int k = 0; k < kLinkKindCount; ++k) {
    if (kinds[k])
      out.push_back(
          {F::kLinkEfficiency, Protocol::kSimple, RouteClass::kNvLink, static_cast<LinkKind>(k)});
  }
  return out;
}

}  // namespace collsim
