// `collsim import`: a node description read from what NCCL and the driver already print, turned
// into a cluster YAML (docs/config.md) that every command loads.
//
//   const std::string yaml = import_cluster("system.xml", {});   // NCCL_TOPO_DUMP_FILE output
//   options.nic_bandwidth = "400Gbps";                          // nvidia-smi gives no NIC speed
//   const std::string yaml2 = import_cluster("topo.txt", options);
//
// The format is told from the text: XML (NCCL's topology dump) or `nvidia-smi topo -m` output.
// ImportError for an unreadable file (or one over 16 MiB), an unknown format, or malformed input.
#pragma once

#include <string>

#include "import/imported_node.hpp"

namespace collsim {

// `format`: "auto", "nccl-xml" or "nvidia-smi". `path` "-" reads standard input.
std::string import_cluster(const std::string& path, const ImportOptions& options,
                           const std::string& format = "auto");

}  // namespace collsim
