// The schedule builder fed random requests: algorithm x collective x ranks x size x channels x
// protocol x root x layout. plan() must give a valid schedule or a RequestError/ScheduleError;
// a valid one must simulate (contention-free and max-min, small sizes) to a finite time, moving
// the same pieces under both network models.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/generators/registry.hpp"
#include "algorithms/ir/communicator.hpp"
#include "simulator/simulate.hpp"
#include "topology/error.hpp"
#include "topology/loader.hpp"

namespace {

struct Input {
  const std::uint8_t* p;
  std::size_t n;
  std::uint32_t next(std::uint32_t mod) {
    std::uint32_t v = 0;
    for (int i = 0; i < 4 && n > 0; ++i, ++p, --n) v = v << 8 | *p;
    return mod == 0 ? v : v % mod;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const collsim::Topology topo = collsim::load_topology("h100-16node-ib");
  Input in{data, size};
  const std::vector<std::string> algorithms = {"ring", "bintree",   "dbtree",  "ring2d",
                                               "rhd",  "direct", "binomial"};
  collsim::Request r;
  r.collective = static_cast<collsim::Collective>(in.next(collsim::kCollectiveCount));
  r.algorithm = algorithms[in.next(static_cast<std::uint32_t>(algorithms.size()))];
  r.protocol = static_cast<collsim::Protocol>(in.next(collsim::kProtocolCount));
  r.dtype = static_cast<collsim::DataType>(in.next(collsim::kDataTypeCount));
  r.channels = 1 + static_cast<int>(in.next(8));
  const int nodes = 1 + static_cast<int>(in.next(4));
  const int per_node = 1 + static_cast<int>(in.next(8));
  r.root = static_cast<int>(in.next(40));
  r.count = in.next(1 << 16);
  std::vector<collsim::Rank> subset;
  for (int n = 0; n < nodes; ++n) {
    for (int g = 0; g < per_node; ++g) subset.push_back(collsim::Rank{n * 8 + g});
  }
  try {
    r.comm = collsim::Communicator::from_topology(topo, subset);
    const collsim::Schedule s = collsim::plan(r);
    collsim::SimOptions o;
    o.network = collsim::SimNetwork::kContentionFree;
    for (int k = 0; k < r.comm.size(); ++k) o.placement.push_back(r.comm.gpu(k));
    const collsim::Result res = collsim::simulate(s, topo, o);
    if (res.total.ps() < 0) __builtin_trap();
    // The default model too: max-min sharing over the flow network, whose re-rating shortcuts
    // (flow_network.cpp) must hold on every schedule shape. Where both runs simulated the same
    // ranks and channels event by event, they sent the same pieces.
    o.network = collsim::SimNetwork::kMaxMin;
    const collsim::Result shared = collsim::simulate(s, topo, o);
    if (shared.total.ps() < 0) __builtin_trap();
    const bool same_work = res.lattice_cells == 0 && shared.lattice_cells == 0 &&
                           res.simulated_ranks == shared.simulated_ranks &&
                           res.simulated_channels == shared.simulated_channels;
    if (same_work && shared.pieces != res.pieces) __builtin_trap();
  } catch (const collsim::Error&) {
  }
  return 0;
}
