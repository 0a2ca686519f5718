// What `collsim topo` reports about a cluster, computed once, formatted by the CLI.
//
//   TopologySummary s = summarize(topo);
//   s.bisection;            // max flow between the two halves of the GPUs, per direction
//   write_dot(topo, out);   // Graphviz: one cluster per node, one edge per cable
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "topology/topology.hpp"

namespace collsim {

struct LinkGroup {  // cables of one kind with the same bandwidth and latency
  LinkKind kind;
  Bandwidth bandwidth;  // per direction
  Time latency;
  int cables = 0;
};

struct TopologySummary {
  std::string name;
  NetworkKind network = NetworkKind::kNone;
  std::string routing;  // "dmodk", "ecmp", "adaptive"; empty without a switched fabric
  std::string fabric;   // Topology::fabric()
  int nodes = 0;
  int gpus = 0;
  int gpus_per_node_min = 0, gpus_per_node_max = 0;
  std::string gpu_model;
  int gpu_sm = 0;
  std::map<DeviceKind, int> devices;
  std::vector<LinkGroup> links;  // ordered by kind, then bandwidth descending
  Bandwidth injection_min, injection_max;  // per GPU into the network
  Bandwidth bisection;
  bool nics = false;     // the cluster has NICs
  bool in_order = true;  // Topology::in_order
  Time plugin_latency;   // Topology::plugin_latency
};

TopologySummary summarize(const Topology& topo);

// Graphviz DOT: devices as nodes (GPUs boxes, switches ellipses), one undirected edge per cable
// labelled with its kind and per-direction bandwidth, each node's devices in a cluster.
void write_dot(const Topology& topo, std::ostream& out);

}  // namespace collsim
