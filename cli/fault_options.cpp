#include "cli/fault_options.hpp"

#include <algorithm>

#include "topology/builder.hpp"
#include "topology/error.hpp"

namespace collsim {

std::vector<Fault> FaultArgs::faults() const {
  std::vector<Fault> out;
  for (const std::string& file : files) {
    for (Fault& f : load_faults(file)) out.push_back(std::move(f));
  }
  for (const std::string& s : degrade) out.push_back(parse_fault(FaultKind::kDegrade, s));
  for (const std::string& s : straggler) out.push_back(parse_fault(FaultKind::kStraggler, s));
  for (const std::string& s : fail) out.push_back(parse_fault(FaultKind::kFail, s));
  return out;
}

void FaultArgs::apply(Topology& topo) const {
  apply_faults(topo, faults());
  if (gdr.empty() && pxn.empty()) return;
  if (pxn == "on" && topo.network_kind() != NetworkKind::kRailOptimized) {
    throw RequestError(
        "--pxn on: PXN moves traffic onto the destination's rail; this cluster's network is not "
        "rail_optimized");
  }
  if (gdr == "off" && pxn == "on") {
    throw RequestError("--pxn on needs GPUDirect RDMA: give --gdr on or leave --pxn out");
  }
  const auto& links = topo.links();
  if (gdr == "on" && std::any_of(links.begin(), links.end(), [](const Link& l) {
        return l.kind == LinkKind::kEthernet;
      })) {
    throw RequestError(
        "--gdr on: this cluster's NICs are kind ethernet, NCCL's socket transport, which moves "
        "host memory only");
  }
  const bool gdr_on = gdr.empty() ? topo.gdr() : gdr == "on";
  const bool pxn_on = pxn.empty() ? topo.pxn() : pxn == "on";
  TopologyBuilder::set_transport(topo, gdr_on, pxn_on);
}

void add_fault_options(CLI::App& cmd, FaultArgs& f) {
  cmd.add_option("--degrade", f.degrade,
                 "what-if: TARGET:FRACTION[+LATENCY], a device's cables (node3/nic0), a cable "
                 "(A--B) or a class (nodeN/nics, railR, leaf0/uplinks, nodeN/gpuG/nvlink) at a "
                 "fraction of its rate, e.g. node3/nic0:0.5 or leaf0/uplinks:0.5+2us")
      ->group("What-if faults");
  cmd.add_option("--straggler", f.straggler,
                 "what-if: TARGET:FACTOR, a GPU (node7/gpu2) or node (node7) FACTOR times slower")
      ->group("What-if faults");
  cmd.add_option("--fail", f.fail,
                 "what-if: a NIC (node2/nic1, nodeN/nics, railR) fails; its GPUs move to the "
                 "node's other NICs, as NCCL does")
      ->group("What-if faults");
  cmd.add_option("--faults", f.files, "what-if: a YAML file with a `faults:` list")
      ->group("What-if faults");
  cmd.add_option("--gdr", f.gdr,
                 "what-if: GPUDirect RDMA on or off (off: NCCL stages network data in host "
                 "memory, GPU -> CPU -> NIC); default: the config's network.gdr, on")
      ->check(CLI::IsMember({"on", "off"}))
      ->group("What-if faults");
  cmd.add_option("--pxn", f.pxn,
                 "what-if: PXN on or off (rail_optimized networks; NCCL_PXN_DISABLE); default: "
                 "the config's network.pxn")
      ->check(CLI::IsMember({"on", "off"}))
      ->group("What-if faults");
}

}  // namespace collsim
