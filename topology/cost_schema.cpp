#include "topology/cost_schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>

#include "topology/config_node.hpp"
#include "topology/device.hpp"

namespace collsim {

namespace {

constexpr int kLinkKinds = 8;  // LinkKind::kNvLink .. kC2c
constexpr double kPsPerUs = 1e6;

std::vector<CostField> build_fields() {
  using K = CostField::Kind;
  std::vector<CostField> out;
  for (int k = 0; k < kLinkKinds; ++k) out.push_back({K::kLinkEfficiency, 0, 0, k});
  out.push_back({K::kHostStaging});
  out.push_back({K::kReduceBandwidth});
  out.push_back({K::kCopyBandwidth});
  out.push_back({K::kNvlsBandwidth});
  out.push_back({K::kP2pChannelBandwidth});
  out.push_back({K::kNvlsTreeChannelBandwidth});
  out.push_back({K::kHostLaunch});
  out.push_back({K::kHostChannel});
  for (int p = 0; p < 3; ++p) {
    out.push_back({K::kLaunch, p});
    out.push_back({K::kEfficiency, p});
    out.push_back({K::kChannelBandwidth, p});
    for (int r = 0; r < 3; ++r) out.push_back({K::kHopLatency, p, r});
    out.push_back({K::kStepOverhead, p});
  }
  return out;
}

std::vector<std::string> split(const std::string& path) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    out.push_back(path.substr(start, dot - start));
    if (dot == std::string::npos) return out;
    start = dot + 1;
  }
}

// The keys one level below `prefix` ("" or "protocols.simple."), in table order, and whether each
// is a mapping (true) or a value.
std::vector<std::pair<std::string, bool>> keys_below(const std::string& prefix) {
  std::vector<std::pair<std::string, bool>> out;
  for (const CostField& f : cost_fields()) {
    const std::string p = f.path();
    if (p.compare(0, prefix.size(), prefix) != 0) continue;
    const std::size_t dot = p.find('.', prefix.size());
    const std::string key = p.substr(prefix.size(), dot - prefix.size());
    const bool inner = dot != std::string::npos;
    if (std::none_of(out.begin(), out.end(), [&](const auto& k) { return k.first == key; })) {
      out.emplace_back(key, inner);
    }
  }
  return out;
}

void check_keys(const ConfigNode& node, const std::string& prefix) {
  const auto keys = keys_below(prefix);
  std::vector<std::string> names;
  for (const auto& [key, inner] : keys) names.push_back(key);
  node.allow_keys(names);
  for (const auto& [key, inner] : keys) {
    if (!inner) continue;
    if (auto child = node.get(key)) check_keys(*child, prefix + key + ".");
  }
}

// Recursive rather than a loop that reassigns a node: assigning a yaml-cpp node writes through
// to the document it refers to.
std::optional<ConfigNode> at_path(const ConfigNode& node, const std::vector<std::string>& keys,
                                  std::size_t i = 0) {
  std::optional<ConfigNode> child = node.get(keys[i]);
  if (!child || i + 1 == keys.size()) return child;
  return at_path(*child, keys, i + 1);
}

std::string format_time(double ps) { return fmt::format("{:g}us", ps / kPsPerUs); }
std::string format_rate(double bytes_per_second) {
  return fmt::format("{:g}GB/s", bytes_per_second / 1e9);
}

double read_value(const ConfigNode& n, const CostField& f) {
  switch (f.unit()) {
    case CostUnit::kFraction:
      return n.as_number(f.lower(), f.upper());
    case CostUnit::kTime: {
      const double ps = static_cast<double>(n.as_time().ps());
      if (ps < f.lower() || ps > f.upper()) {
        n.fail(fmt::format("expected a time from {} to {}, got \"{}\"", format_time(f.lower()),
                           format_time(f.upper()), n.as_string()));
      }
      return ps;
    }
    case CostUnit::kRate: {
      if (!f.zero_word().empty() && n.as_string() == f.zero_word()) return 0;
      const double b = n.as_bandwidth().bytes_per_second();
      if (b < f.lower() || b > f.upper()) {
        n.fail(fmt::format("expected a bandwidth from {} to {} (or \"{}\"), got \"{}\"",
                           format_rate(f.lower()), format_rate(f.upper()), f.zero_word(),
                           n.as_string()));
      }
      return b;
    }
  }
  return 0;
}

}  // namespace

std::string CostField::path() const {
  const std::string_view p = kCostProtocols[protocol];
  switch (kind) {
    case Kind::kLaunch:
      return fmt::format("protocols.{}.launch", p);
    case Kind::kHopLatency:
      return fmt::format("protocols.{}.hop_latency.{}", p, kCostRouteClasses[route]);
    case Kind::kEfficiency:
      return fmt::format("protocols.{}.efficiency", p);
    case Kind::kChannelBandwidth:
      return fmt::format("protocols.{}.channel_bandwidth", p);
    case Kind::kLinkEfficiency:
      return fmt::format("link_efficiency.{}", to_string(static_cast<LinkKind>(link)));
    case Kind::kReduceBandwidth:
      return "reduce_bandwidth";
    case Kind::kCopyBandwidth:
      return "copy_bandwidth";
    case Kind::kNvlsBandwidth:
      return "nvls_bandwidth";
    case Kind::kP2pChannelBandwidth:
      return "p2p_channel_bandwidth";
    case Kind::kNvlsTreeChannelBandwidth:
      return "nvls_tree_channel_bandwidth";
    case Kind::kHostLaunch:
      return "host_launch";
    case Kind::kHostChannel:
      return "host_channel";
    case Kind::kStepOverhead:
      return fmt::format("protocols.{}.step_overhead", p);
    case Kind::kHostStaging:
      return "host_staging";
  }
  return {};
}

CostUnit CostField::unit() const {
  switch (kind) {
    case Kind::kLaunch:
    case Kind::kHopLatency:
    case Kind::kHostLaunch:
    case Kind::kHostChannel:
    case Kind::kStepOverhead:
      return CostUnit::kTime;
    case Kind::kEfficiency:
    case Kind::kLinkEfficiency:
    case Kind::kHostStaging:
      return CostUnit::kFraction;
    default:
      return CostUnit::kRate;
  }
}

std::string_view CostField::zero_word() const {
  if (kind == Kind::kChannelBandwidth || kind == Kind::kP2pChannelBandwidth ||
      kind == Kind::kNvlsTreeChannelBandwidth) {
    return "none";
  }
  if (kind == Kind::kReduceBandwidth || kind == Kind::kCopyBandwidth ||
      kind == Kind::kNvlsBandwidth) {
    return "free";
  }
  return {};
}

// Wide enough for any real GPU or network, narrow enough to keep a fit's simulations finite.
double CostField::lower() const {
  switch (unit()) {
    case CostUnit::kTime:
      return 0;
    case CostUnit::kRate:
      return 1e8;  // 0.1 GB/s
    case CostUnit::kFraction:
      return 0.01;
  }
  return 0;
}

double CostField::upper() const {
  switch (kind) {
    case Kind::kLaunch:
      return 10'000 * kPsPerUs;  // 10 ms
    case Kind::kHopLatency:
    case Kind::kHostLaunch:
    case Kind::kHostChannel:
    case Kind::kStepOverhead:
      return 1'000 * kPsPerUs;  // 1 ms
    case Kind::kChannelBandwidth:
    case Kind::kP2pChannelBandwidth:
    case Kind::kNvlsTreeChannelBandwidth:
      return 1e13;  // 10 TB/s, far above one CTA
    case Kind::kReduceBandwidth:
    case Kind::kCopyBandwidth:
    case Kind::kNvlsBandwidth:
      return 1e15;
    default:
      return 1;  // a fraction
  }
}

const std::vector<CostField>& cost_fields() {
  static const std::vector<CostField> all = build_fields();
  return all;
}

std::optional<CostField> find_cost_field(std::string_view path) {
  for (const CostField& f : cost_fields()) {
    if (f.path() == path) return f;
  }
  return std::nullopt;
}

CostSettings read_cost_settings(const ConfigNode& costs) {
  check_keys(costs, "");
  CostSettings out;
  for (const CostField& f : cost_fields()) {
    if (auto n = at_path(costs, split(f.path()))) out.push_back({f, read_value(*n, f)});
  }
  return out;
}

std::string format_cost_value(const CostField& f, double value) {
  switch (f.unit()) {
    case CostUnit::kTime:
      return fmt::format("{:.3f}us", value / kPsPerUs);
    case CostUnit::kRate:
      if (value == 0) return std::string(f.zero_word());
      return fmt::format("{:.2f}GB/s", value / 1e9);
    case CostUnit::kFraction:
      return fmt::format("{:.4f}", value);
  }
  return {};
}

void write_cost_settings(std::ostream& out, const std::vector<CommentedSetting>& settings) {
  std::vector<const CommentedSetting*> ordered;
  for (const CostField& f : cost_fields()) {
    for (const CommentedSetting& s : settings) {
      if (s.setting.field == f) ordered.push_back(&s);
    }
  }
  out << "costs:" << (ordered.empty() ? " {}" : "") << "\n";
  std::vector<std::string> open;  // the mappings written so far on the current branch
  for (const CommentedSetting* s : ordered) {
    const std::vector<std::string> keys = split(s->setting.field.path());
    std::size_t common = 0;
    while (common < open.size() && common + 1 < keys.size() && open[common] == keys[common]) {
      ++common;
    }
    open.resize(common);
    for (std::size_t i = common; i + 1 < keys.size(); ++i) {
      out << std::string(2 * (i + 1), ' ') << keys[i] << ":\n";
      open.push_back(keys[i]);
    }
    out << std::string(2 * keys.size(), ' ') << keys.back() << ": "
        << format_cost_value(s->setting.field, s->setting.value);
    if (!s->comment.empty()) out << "    # " << s->comment;
    out << "\n";
  }
}

}  // namespace collsim
