// What an import learns about one node (NCCL's topology dump or `nvidia-smi topo -m`), and the
// cluster YAML (docs/config.md, templated form) written from it.
//
//   ImportedNode n = read_nccl_topology_xml(text, "system.xml", options);
//   std::cout << cluster_yaml(n);        // comments say what was read, assumed and left out
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace collsim {

// A PCIe switch (the tree under one bridge below a CPU) and the GPUs and NICs under it, by the
// config's indices (GPUs by CUDA device number, NICs numbered switch by switch).
struct ImportedSwitch {
  std::vector<int> gpus;
  std::vector<int> nics;
};

struct ImportedNode {
  std::string name;
  std::string source;     // "NCCL topology dump system.xml", for the header comment
  std::string gpu_model;  // a name of topology/gpu_models
  int gpus = 0;
  std::string nvlink_fabric;  // "" (none), "nvswitch" or "mesh"
  int nvlink_links = 0;       // nvswitch: links per GPU; mesh: links per linked pair
  int nvlink_group = 0;       // mesh: GPUs per fully linked group
  int cpus = 1;
  std::optional<double> smp_GBps;   // CPU-to-CPU link, when the CPU's vendor and model are known
  std::optional<double> pcie_GBps;  // per x16 link; unset: the GPU model's host interface
  int pcie_width = 16;
  std::vector<ImportedSwitch> switches;  // empty: GPUs and NICs on the CPUs' root ports
  int nics = 0;
  std::optional<double> nic_Gbps;
  std::string nic_kind = "ib";
  std::optional<bool> nic_in_order;         // efa: whether it delivers 128-byte blocks in order
  std::optional<double> plugin_latency_us;  // what the network plugin reported to NCCL, if not 0
  std::vector<std::string> read;     // what the file said, one comment line each
  std::vector<std::string> assumed;  // what it did not say and the import chose
};

// How the user completes what a file cannot say (collsim import's options).
struct ImportOptions {
  std::string name;           // the cluster's name; default: the file's stem
  std::string gpu_model;      // overrides the model inferred from the file
  std::string nic_kind;       // ib, roce, ethernet or efa; default: from the NIC names
  std::string nic_bandwidth;  // e.g. "400Gbps"; required by nvidia-smi input that lists NICs
};

// Per NVLink port and direction of the model (topology/gpu_models), in GB/s.
double nvlink_port_GBps(const std::string& gpu_model);

// The cluster YAML (templated form, one node) with comments citing the source of every value.
std::string cluster_yaml(const ImportedNode& node);

}  // namespace collsim
