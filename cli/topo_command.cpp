// `collsim topo CONFIG [--nodes N] [--dot FILE] [--svg FILE] [--format table|json]`: what the
// cluster is.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/option_checks.hpp"
#include "cli/request_options.hpp"
#include "cli/topo_svg.hpp"
#include "topology/error.hpp"
#include "topology/loader.hpp"
#include "topology/summary.hpp"

namespace collsim {

namespace {

struct TopoArgs {
  std::string config;
  std::optional<int> nodes;
  std::string dot;
  std::string svg;
  std::string format = "table";
};

std::string describe_bw(Bandwidth bw) {
  return fmt::format("{:g} GB/s ({:g} Gbps)", bw.gbyte_per_second(), bw.gbit_per_second());
}

void print_table(const TopologySummary& s) {
  std::string per_node = s.gpus_per_node_min == s.gpus_per_node_max
                             ? std::to_string(s.gpus_per_node_min)
                             : fmt::format("{}-{}", s.gpus_per_node_min, s.gpus_per_node_max);
  fmt::print("cluster    {}\n", s.name);
  fmt::print("nodes      {} x {} {} (sm{}) = {} GPUs\n", s.nodes, per_node, s.gpu_model, s.gpu_sm,
             s.gpus);
  fmt::print("network    {}{}\n", to_string(s.network),
             s.routing.empty() ? "" : fmt::format(", {} routing", s.routing));
  if (!s.fabric.empty()) fmt::print("fabric     {}\n", s.fabric);
  std::string devices;
  for (const auto& [kind, count] : s.devices) {
    devices += fmt::format("{}{} {}", devices.empty() ? "" : ", ", count, to_string(kind));
  }
  fmt::print("devices    {}\n", devices);
  fmt::print("links      (full-duplex cables; bandwidth per direction)\n");
  fmt::print("  {:<10} {:>7}  {:>14}  {:>10}\n", "kind", "cables", "bandwidth", "latency");
  for (const LinkGroup& g : s.links) {
    fmt::print("  {:<10} {:>7}  {:>14}  {:>10}\n", to_string(g.kind), g.cables,
               to_string(g.bandwidth), to_string(g.latency));
  }
  if (s.injection_max == Bandwidth()) {
    fmt::print("injection  none (no NICs)\n");
  } else if (s.injection_min == s.injection_max) {
    fmt::print("injection  {} per GPU into the network\n", describe_bw(s.injection_min));
  } else {
    fmt::print("injection  {} to {} per GPU into the network\n", describe_bw(s.injection_min),
               describe_bw(s.injection_max));
  }
  fmt::print("bisection  {} per direction (first half of the ranks | second half)\n",
             describe_bw(s.bisection));
  std::vector<std::string> transport;
  if (!s.in_order) {
    transport.push_back("Simple only (the NICs do not deliver 128-byte blocks in order)");
  }
  if (s.plugin_latency > Time{}) {
    transport.push_back(
        fmt::format("the network plugin reports {} to NCCL's tuner", to_string(s.plugin_latency)));
  }
  if (!transport.empty()) fmt::print("transport  {}\n", fmt::join(transport, "; "));
}

void print_json(const TopologySummary& s) {
  nlohmann::ordered_json j;
  j["name"] = s.name;
  j["nodes"] = s.nodes;
  j["gpus"] = s.gpus;
  j["gpu_model"] = s.gpu_model;
  j["network"] = std::string(to_string(s.network));
  if (!s.routing.empty()) j["routing"] = s.routing;
  if (!s.fabric.empty()) j["fabric"] = s.fabric;
  for (const auto& [kind, count] : s.devices) j["devices"][std::string(to_string(kind))] = count;
  for (const LinkGroup& g : s.links) {
    j["links"].push_back({{"kind", std::string(to_string(g.kind))},
                          {"cables", g.cables},
                          {"bandwidth_GBps", g.bandwidth.gbyte_per_second()},
                          {"latency_us", g.latency.us()}});
  }
  j["injection_GBps_min"] = s.injection_min.gbyte_per_second();
  j["injection_GBps_max"] = s.injection_max.gbyte_per_second();
  j["bisection_GBps"] = s.bisection.gbyte_per_second();
  if (s.nics) {
    j["nic_in_order"] = s.in_order;
    j["plugin_latency_us"] = s.plugin_latency.us();
  }
  std::cout << j.dump(2) << "\n";
}

void run_topo(const TopoArgs& a) {
  const Topology topo = load_cluster(a.config, a.nodes);
  const TopologySummary s = summarize(topo);
  if (a.format == "json") {
    print_json(s);
  } else {
    print_table(s);
  }
  if (!a.dot.empty()) {
    std::ofstream out(a.dot);
    if (!out) throw Error(fmt::format("--dot: cannot write \"{}\"", a.dot));
    write_dot(topo, out);
    if (a.format != "json") fmt::print("wrote {}\n", a.dot);
  }
  if (!a.svg.empty()) {
    write_topology_svg(topo, a.svg);
    if (a.format != "json") fmt::print("wrote {}\n", a.svg);
  }
}

}  // namespace

void register_topo(CLI::App& app) {
  auto args = std::make_shared<TopoArgs>();
  CLI::App* cmd = app.add_subcommand(
      "topo", "Summarize a cluster: nodes, GPUs, links by kind, injection and bisection bandwidth");
  cmd->add_option("CONFIG", args->config, "YAML file or preset name (see configs/)")->required();
  add_nodes_option(*cmd, args->nodes);
  cmd->add_option("--dot", args->dot, "also write the graph as Graphviz DOT to FILE");
  cmd->add_option("--svg", args->svg, "also draw the graph as SVG to FILE (Graphviz's dot)");
  cmd->add_option("--format", args->format, "table or json")
      ->check(CLI::IsMember({"table", "json"}));
  cmd->callback([args] { run_topo(*args); });
}

}  // namespace collsim
