// Private to topology/: the Boost.Graph view of a Topology.
#pragma once

#include <unordered_map>

#include <boost/graph/adjacency_list.hpp>

#include "topology/topology.hpp"

namespace collsim {

// Vertices are devices (same index as DeviceId), edges are directed links carrying their LinkId.
struct Topology::Graph {
  struct EdgeProps {
    int link = -1;
  };
  using Type = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS,
                                     boost::no_property, EdgeProps>;
  Type g;
  // Out- and in-links per device in link-id order, for deterministic iteration.
  std::vector<std::vector<LinkId>> out;
  std::vector<std::vector<LinkId>> in;
};

struct Topology::RouteCache {
  std::unordered_map<std::uint64_t, Route> routes;
};

}  // namespace collsim
