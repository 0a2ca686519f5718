// Private to topology/: the Boost.Graph view of a Topology.
#pragma once

#include <boost/graph/adjacency_list.hpp>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

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
  // Network in-links whose source is a switch: what a route's search through the fabric
  // follows (route.cpp), without the NIC links of a switch that thousands of GPUs hang off.
  std::vector<std::vector<LinkId>> in_from_switch;
  // Network out-links whose destination is a switch: the next hops a route may take.
  std::vector<std::vector<LinkId>> out_to_switch;
};

struct Topology::RouteCache {
  struct Key {
    std::uint64_t pair;  // from << 32 | to
    std::uint32_t flow;
    bool operator==(const Key&) const = default;
  };
  struct Hash {
    std::size_t operator()(const Key& k) const {
      return std::hash<std::uint64_t>{}(k.pair ^ (static_cast<std::uint64_t>(k.flow) * 0x9E3779B97F4A7C15ULL));
    }
  };
  std::unordered_map<Key, Route, Hash> routes;
  // A network route's search (route.cpp): every switch's hop distance to a destination NIC is
  // one more than its distance to the switches feeding that NIC, so NICs fed by the same
  // switches (a leaf's, a ToR's) share one search. Key: those switches' ids, sorted; value: the
  // (switch, hops) pairs it reached.
  std::map<std::vector<std::int32_t>, std::vector<std::pair<std::int32_t, int>>> fabric;
  // intra_route's answers by (from << 32 | to): the legs inside a node (GPU to NIC, GPU to PXN
  // proxy, NIC to GPU) are the same for every peer a GPU reaches through them, and an
  // all-to-all of N GPUs asks for them N^2 times.
  std::unordered_map<std::uint64_t, Route> intra;
  // Each device's island: the devices it is connected to by non-network links (a node, or an
  // NVLink domain spanning nodes), filled on first use. No intra_route joins two islands.
  std::vector<std::int32_t> island;
  std::once_flag islands_once;
  std::shared_mutex mutex;  // route() is called from several threads (predict/parallel.hpp)
};

}  // namespace collsim
