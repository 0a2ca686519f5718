// NCCL's topology dump (NCCL_TOPO_DUMP_FILE=system.xml, the format of NCCL_TOPO_FILE) read as one
// node: <system><cpu><pci>...<pci><gpu><nvlink/></gpu></pci>...<nic><net/></nic></cpu></system>.
//
//   ImportedNode n = read_nccl_topology_xml(text, "system.xml", {});
//
// GPUs are ordered by CUDA device (`dev`); NVLinks to NVSwitches (tclass 0x068000) make an
// nvswitch fabric of the links' total; direct GPU links a mesh; a PCIe switch is the tree under
// one bridge (class 0x0604xx) below a CPU; every <net> is a NIC of its `speed` (Mb/s).
// ImportError with FILE:LINE:COL for malformed XML, a missing or non-numeric attribute, more
// than one host, or an NVLink pattern the config cannot express.
#pragma once

#include <string_view>

#include "import/imported_node.hpp"

namespace collsim {

ImportedNode read_nccl_topology_xml(std::string_view text, std::string_view file,
                                    const ImportOptions& options);

}  // namespace collsim
