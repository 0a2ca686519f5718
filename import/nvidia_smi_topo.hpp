// `nvidia-smi topo -m` output read as one node: the GPU/NIC matrix (X, NV#, PIX, PXB, PHB, NODE,
// SYS), the CPU and NUMA affinity columns and the NIC legend.
//
//   ImportedNode n = read_nvidia_smi_topo(text, "topo.txt", options);   // options.nic_bandwidth
//   set
//
// NV# between every pair makes an NVSwitch fabric of # links per GPU when # x (GPUs - 1) exceeds
// the model's NVLink ports, a mesh otherwise; GPUs and NICs joined by PIX/PXB share a PCIe switch;
// the NUMA affinities of the GPUs count the CPUs. The matrix gives neither the GPU model (NV18 is
// taken as H100-SXM, NV12 as A100-SXM; --gpu otherwise) nor NIC speeds (--nic-bandwidth).
// ImportError with FILE:LINE for a malformed matrix.
#pragma once

#include <string_view>

#include "import/imported_node.hpp"

namespace collsim {

ImportedNode read_nvidia_smi_topo(std::string_view text, std::string_view file,
                                  const ImportOptions& options);

// True when the text looks like `nvidia-smi topo -m` output (a header row naming GPU0).
bool looks_like_nvidia_smi_topo(std::string_view text);

}  // namespace collsim
