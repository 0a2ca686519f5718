#include "sim_fixtures.hpp"

#include <fmt/format.h>

#include "topology/gpu_models.hpp"
#include "topology/loader.hpp"

namespace collsim::test {

Topology star(int p, Bandwidth bw, Time latency) {
  TopologyBuilder b("star");
  const int m = b.add_gpu_model(*find_gpu_model("H100-SXM"));
  const DeviceId sw = b.add_device(DeviceKind::kNvSwitch, "node0/nvswitch", 0);
  for (int i = 0; i < p; ++i) {
    const DeviceId g = b.add_device(DeviceKind::kGpu, fmt::format("node0/gpu{}", i), 0, m);
    b.add_cable(g, sw, LinkKind::kNvSwitch, bw, latency);
  }
  return std::move(b).build();
}

Topology flat_switch(int nodes) {
  constexpr const char* kFlatSwitch = R"(
nodes: 8
node:
  gpu: H100-SXM
  gpus: 1
  pcie: {bandwidth: 400GB/s, latency: 0.2us, switches: 1, p2p: true}
  nics: {count: 1, bandwidth: 3200Gbps, latency: 0.47us, kind: ib}
network: {topology: single_switch}
)";
  return parse_topology(kFlatSwitch, "flat.yaml", LoadOptions{nodes});
}

Request request(Collective c, const std::string& algo, int ranks, std::uint64_t bytes,
                std::uint64_t chunk, int slices) {
  Request r;
  r.collective = c;
  r.algorithm = algo;
  r.protocol = Protocol::kSimple;
  r.dtype = DataType::kU8;
  r.comm = Communicator::flat(ranks);
  r.count = count_for_bytes(c, Bytes(bytes), r.dtype, ranks);
  r.chunk_bytes = chunk;
  r.slices = slices;
  return r;
}

CostParams ideal(Bandwidth reduce) {
  CostParams c = ideal_cost_params();
  c.reduce_bandwidth = reduce;
  return c;
}

}  // namespace collsim::test
