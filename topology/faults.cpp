#include "topology/faults.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <unordered_map>

#include "topology/builder.hpp"
#include "topology/config_node.hpp"
#include "topology/error.hpp"
#include "topology/loader.hpp"

namespace collsim {

namespace {

std::string_view flag_of(FaultKind k) {
  switch (k) {
    case FaultKind::kDegrade:
      return "--degrade";
    case FaultKind::kStraggler:
      return "--straggler";
    case FaultKind::kFail:
      return "--fail";
  }
  return "";
}

[[noreturn]] void bad_fault(FaultKind k, std::string_view text, std::string_view why) {
  throw RequestError(fmt::format("{} {}: {}", flag_of(k), text, why));
}

std::optional<double> plain_number(std::string_view text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v)) {
    return std::nullopt;
  }
  return v;
}

// Everything a fault target can name, resolved once per topology.
class Targets {
 public:
  explicit Targets(const Topology& topo) : topo_(topo) {
    for (const Device& d : topo.devices()) by_name_.emplace(d.name, d.id);
  }

  std::optional<DeviceId> device(std::string_view name) const {
    const auto it = by_name_.find(std::string(name));
    return it == by_name_.end() ? std::nullopt : std::optional(it->second);
  }

  // "node3" -> 3, where the cluster has that node.
  std::optional<int> node(std::string_view name) const {
    if (!name.starts_with("node")) return std::nullopt;
    const auto n = plain_number(name.substr(4));
    if (!n || *n != std::floor(*n) || *n < 0 || *n >= topo_.node_count()) return std::nullopt;
    return static_cast<int>(*n);
  }

  // What exists, for an error: the nodes, node0's devices and the first switches.
  std::string what_exists() const {
    std::map<std::string, int> kinds;  // "gpu" -> how many on node0
    std::vector<std::string> switches;
    for (const Device& d : topo_.devices()) {
      if (d.node == 0) {
        const std::size_t slash = d.name.rfind('/');
        std::string stem = d.name.substr(slash + 1);
        while (!stem.empty() && std::isdigit(static_cast<unsigned char>(stem.back())))
          stem.pop_back();
        ++kinds[stem];
      } else if (d.node < 0 && switches.size() < 6) {
        switches.push_back(d.name);
      }
    }
    std::string node0;
    for (const auto& [stem, n] : kinds) {
      node0 += fmt::format("{}{}{}", node0.empty() ? "" : ", ", stem,
                           n == 1 ? std::string() : fmt::format("0..{}{}", stem, n - 1));
    }
    std::string out = fmt::format("{} has nodes node0..node{} (node0: {})", topo_.name(),
                                  topo_.node_count() - 1, node0);
    if (!switches.empty()) {
      out += fmt::format("; switches {}{}", fmt::join(switches, ", "),
                         switches.size() == 6 ? ", ..." : "");
    }
    return out + "; classes: nodeN/nics, railR, SWITCH/uplinks, nodeN/gpuG/nvlink";
  }

  const Topology& topo() const { return topo_; }

 private:
  const Topology& topo_;
  std::unordered_map<std::string, DeviceId> by_name_;
};

void add_cables_of(const Topology& topo, DeviceId d, std::vector<LinkId>& out,
                   bool (*keep)(const Link&) = nullptr) {
  for (LinkId l : topo.out_links(d)) {
    if (keep != nullptr && !keep(topo.link(l))) continue;
    out.push_back(l);
    out.push_back(topo.reverse(l));
  }
}

bool network_cable(const Link& l) { return is_network(l.kind); }
bool nvlink_cable(const Link& l) { return is_nvlink_class(l.kind); }

// Switch tiers: 1 for a switch cabled to a NIC, then one more per hop away.
std::vector<int> switch_tiers(const Topology& topo) {
  std::vector<int> tier(topo.devices().size(), 0);
  std::vector<DeviceId> frontier;
  for (const Device& d : topo.devices()) {
    if (d.kind != DeviceKind::kSwitch) continue;
    for (LinkId l : topo.out_links(d.id)) {
      if (topo.device(topo.link(l).dst).kind == DeviceKind::kNic) tier[d.id.value] = 1;
    }
    if (tier[d.id.value] == 1) frontier.push_back(d.id);
  }
  for (int t = 2; !frontier.empty(); ++t) {
    std::vector<DeviceId> next;
    for (DeviceId s : frontier) {
      for (LinkId l : topo.out_links(s)) {
        const DeviceId o = topo.link(l).dst;
        if (topo.device(o).kind == DeviceKind::kSwitch && tier[o.value] == 0) {
          tier[o.value] = t;
          next.push_back(o);
        }
      }
    }
    frontier = std::move(next);
  }
  return tier;
}

[[noreturn]] void unknown(const Fault& f, const Targets& t, std::string_view what) {
  throw RequestError(
      fmt::format("{} {}: {}; {}", flag_of(f.kind), f.target, what, t.what_exists()));
}

std::vector<LinkId> class_links(const Fault& f, const Targets& t) {
  const Topology& topo = t.topo();
  const std::string& s = f.target;
  std::vector<LinkId> out;
  if (const std::size_t dash = s.find("--"); dash != std::string::npos) {
    const auto a = t.device(s.substr(0, dash));
    const auto b = t.device(s.substr(dash + 2));
    if (!a || !b)
      unknown(f, t, fmt::format("no device \"{}\"", !a ? s.substr(0, dash) : s.substr(dash + 2)));
    for (LinkId l : topo.out_links(*a)) {
      if (topo.link(l).dst == *b) {
        out.push_back(l);
        out.push_back(topo.reverse(l));
      }
    }
    if (out.empty()) unknown(f, t, "no cable joins these two devices");
    return out;
  }
  if (const auto d = t.device(s)) {
    add_cables_of(topo, *d, out);
    return out;
  }
  if (const auto n = t.node(s)) {
    for (DeviceId g : topo.gpus_of_node(*n)) add_cables_of(topo, g, out);
    return out;
  }
  if (s.ends_with("/nics")) {
    const auto n = t.node(s.substr(0, s.size() - 5));
    if (!n) unknown(f, t, fmt::format("no node \"{}\"", s.substr(0, s.size() - 5)));
    for (const Device& d : topo.devices()) {
      if (d.node == *n && d.kind == DeviceKind::kNic) add_cables_of(topo, d.id, out);
    }
    if (out.empty()) unknown(f, t, "this node has no NIC");
    return out;
  }
  if (s.ends_with("/nvlink")) {
    const auto g = t.device(s.substr(0, s.size() - 7));
    if (!g || topo.device(*g).kind != DeviceKind::kGpu) {
      unknown(f, t, fmt::format("no GPU \"{}\"", s.substr(0, s.size() - 7)));
    }
    add_cables_of(topo, *g, out, nvlink_cable);
    if (out.empty()) unknown(f, t, "this GPU has no NVLink cable");
    return out;
  }
  if (s.ends_with("/uplinks")) {
    const auto sw = t.device(s.substr(0, s.size() - 8));
    if (!sw || topo.device(*sw).kind != DeviceKind::kSwitch) {
      unknown(f, t, fmt::format("no network switch \"{}\"", s.substr(0, s.size() - 8)));
    }
    const std::vector<int> tier = switch_tiers(topo);
    for (LinkId l : topo.out_links(*sw)) {
      if (tier[topo.link(l).dst.value] > tier[sw->value]) {
        out.push_back(l);
        out.push_back(topo.reverse(l));
      }
    }
    if (out.empty()) unknown(f, t, "this switch has no uplink (it is the top tier)");
    return out;
  }
  if (s.starts_with("rail")) {
    const auto r = plain_number(std::string_view(s).substr(4));
    bool any = false;
    for (const Device& d : topo.devices()) {
      if (r && d.kind == DeviceKind::kNic && d.node >= 0 && d.local_index == *r) {
        add_cables_of(topo, d.id, out, network_cable);
        any = true;
      }
    }
    if (!any)
      unknown(f, t, "no such rail (rails are numbered by NIC: railR is nicR of every node)");
    return out;
  }
  unknown(f, t, "no such device or class");
}

// The NICs a --fail target names.
std::vector<DeviceId> failed_nics(const Topology& topo, const Fault& f, const Targets& t) {
  std::vector<DeviceId> nics;
  for (LinkId l : class_links(f, t)) {
    for (DeviceId d : {topo.link(l).src, topo.link(l).dst}) {
      if (topo.device(d).kind == DeviceKind::kNic &&
          std::find(nics.begin(), nics.end(), d) == nics.end()) {
        nics.push_back(d);
      }
    }
  }
  const auto d = t.device(f.target);
  const bool names_nics = !nics.empty() && (!d || topo.device(*d).kind == DeviceKind::kNic ||
                                            f.target.find("--") != std::string::npos);
  if (!names_nics || f.target.ends_with("/uplinks") || f.target.ends_with("/nvlink")) {
    throw RequestError(fmt::format(
        "--fail {}: only NICs fail here (a NIC, nodeN/nics, railR, or a NIC's cable); a failed GPU "
        "ends the run, and a failed switch cable is routed around by the subnet manager, which "
        "collsim does not model (use --degrade on it instead)",
        f.target));
  }
  std::sort(nics.begin(), nics.end());
  return nics;
}

std::string trimmed_number(double v) { return fmt::format("{:.3g}", v); }

}  // namespace

std::string_view to_string(FaultKind k) {
  switch (k) {
    case FaultKind::kDegrade:
      return "degrade";
    case FaultKind::kStraggler:
      return "straggler";
    case FaultKind::kFail:
      return "fail";
  }
  return "?";
}

std::string to_flag(const Fault& f) {
  switch (f.kind) {
    case FaultKind::kDegrade: {
      std::string v = f.bandwidth != 1.0 ? trimmed_number(f.bandwidth) : "";
      if (f.latency > Time{}) v.append("+").append(to_string(f.latency));
      return fmt::format("--degrade '{}:{}'", f.target, v);
    }
    case FaultKind::kStraggler:
      return fmt::format("--straggler {}:{}", f.target, trimmed_number(f.factor));
    case FaultKind::kFail:
      return fmt::format("--fail {}", f.target);
  }
  return "";
}

std::string describe(const Fault& f) {
  switch (f.kind) {
    case FaultKind::kDegrade: {
      std::string s = f.target;
      if (f.bandwidth != 1.0) s += fmt::format(" at {:.0f}% bandwidth", 100 * f.bandwidth);
      if (f.latency > Time{}) s += fmt::format(" +{} latency", to_string(f.latency));
      return s;
    }
    case FaultKind::kStraggler:
      return fmt::format("{} {:.2f}x slower (straggler)", f.target, f.factor);
    case FaultKind::kFail:
      return fmt::format("{} failed", f.target);
  }
  return "";
}

Fault parse_fault(FaultKind kind, std::string_view text) {
  Fault f;
  f.kind = kind;
  const std::size_t colon = text.rfind(':');
  if (kind == FaultKind::kFail) {
    if (text.empty()) bad_fault(kind, text, "expected a NIC, e.g. --fail node2/nic1");
    f.target = std::string(text);
    return f;
  }
  if (colon == std::string_view::npos || colon == 0) {
    bad_fault(kind, text,
              kind == FaultKind::kDegrade
                  ? "expected TARGET:FRACTION, TARGET:+LATENCY or TARGET:FRACTION+LATENCY "
                    "(e.g. node3/nic0:0.5, leaf0/uplinks:+2us)"
                  : "expected TARGET:FACTOR with a GPU or node and a factor >= 1 (e.g. node7:1.3)");
  }
  f.target = std::string(text.substr(0, colon));
  const std::string_view value = text.substr(colon + 1);
  if (kind == FaultKind::kStraggler) {
    const auto x = plain_number(value);
    if (!x || *x < 1 || *x > 1000) {
      bad_fault(kind, text,
                fmt::format("expected a slowdown factor from 1 to 1000, got \"{}\"", value));
    }
    f.factor = *x;
    return f;
  }
  const std::size_t plus = value.find('+');
  const std::string_view fraction = value.substr(0, plus);
  if (!fraction.empty()) {
    const auto x = plain_number(fraction);
    if (!x || !(*x > 0) || *x > 1) {
      bad_fault(kind, text,
                fmt::format("expected a bandwidth fraction in (0, 1], got \"{}\"", fraction));
    }
    f.bandwidth = *x;
  }
  if (plus != std::string_view::npos) {
    try {
      f.latency = parse_time(value.substr(plus + 1));
    } catch (const UnitError& e) {
      bad_fault(kind, text, fmt::format("latency: {}", e.what()));
    }
    if (f.latency < Time{}) bad_fault(kind, text, "the added latency must not be negative");
    if (f.latency > kMaxLinkLatency) {
      bad_fault(kind, text,
                time_above_bound(kMaxLinkLatency, "the added latency", value.substr(plus + 1)));
    }
  }
  if (fraction.empty() && plus == std::string_view::npos) {
    bad_fault(kind, text, "expected a bandwidth fraction and/or +LATENCY after the colon");
  }
  return f;
}

std::vector<Fault> parse_faults(const std::string& text, const std::string& file) {
  const ConfigNode root = ConfigNode::parse(text, file);
  root.allow_keys({"faults"});
  return read_fault_list(root.at("faults"));
}

std::vector<Fault> read_fault_list(const ConfigNode& list) {
  if (!list.is_sequence()) list.fail("expected a list of faults");
  std::vector<Fault> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const ConfigNode item = list[i];
    Fault f;
    if (item.has("degrade")) {
      item.allow_keys({"degrade", "bandwidth", "latency"});
      f.kind = FaultKind::kDegrade;
      f.target = item.at("degrade").as_string();
      if (const auto b = item.get("bandwidth")) f.bandwidth = b->as_number(1e-6, 1);
      if (const auto l = item.get("latency")) {
        f.latency = l->as_time(kMaxLinkLatency, "the added latency");
      }
      if (!item.has("bandwidth") && !item.has("latency")) {
        item.fail("a degrade needs bandwidth (a fraction) and/or latency");
      }
    } else if (item.has("straggler")) {
      item.allow_keys({"straggler", "factor"});
      f.kind = FaultKind::kStraggler;
      f.target = item.at("straggler").as_string();
      f.factor = item.at("factor").as_number(1, 1000);
    } else if (item.has("fail")) {
      item.allow_keys({"fail"});
      f.kind = FaultKind::kFail;
      f.target = item.at("fail").as_string();
    } else {
      item.fail("expected one of degrade, straggler or fail");
    }
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<Fault> load_faults(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw ConfigError(fmt::format("{}: cannot open the faults file", file));
  std::optional<std::string> text = read_at_most(in, kMaxConfigBytes);
  if (!text) throw ConfigError(fmt::format("{}: the faults file is too large", file));
  return parse_faults(*text, file);
}

std::vector<LinkId> fault_links(const Topology& topo, const Fault& f) {
  const Targets t(topo);
  if (f.kind == FaultKind::kStraggler) {
    const auto d = t.device(f.target);
    if (!t.node(f.target) && !(d && topo.device(*d).kind == DeviceKind::kGpu)) {
      unknown(f, t, "a straggler is a GPU (nodeN/gpuG) or a node (nodeN)");
    }
  }
  std::vector<LinkId> links = class_links(f, t);
  std::sort(links.begin(), links.end());
  links.erase(std::unique(links.begin(), links.end()), links.end());
  return links;
}

void apply_faults(Topology& topo, const std::vector<Fault>& faults) {
  for (const Fault& f : faults) {
    if (f.kind == FaultKind::kFail) {
      const std::vector<DeviceId> nics = failed_nics(topo, f, Targets(topo));
      try {
        TopologyBuilder::fail_nics(topo, nics);
      } catch (const RequestError& e) {
        throw RequestError(fmt::format("--fail {}: {}", f.target, e.what()));
      }
      continue;
    }
    const double keep = f.kind == FaultKind::kStraggler ? 1.0 / f.factor : f.bandwidth;
    for (LinkId l : fault_links(topo, f)) {
      const Link& link = topo.link(l);
      TopologyBuilder::set_link_cost(topo, l, link.bandwidth * keep, link.latency + f.latency);
    }
  }
}

}  // namespace collsim
