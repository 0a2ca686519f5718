// What NCCL's graph search chose, from its NCCL_DEBUG=INFO log (NCCL_DEBUG_SUBSYS=INIT,GRAPH):
//
//   host:1:2 [0] NCCL INFO Pattern 4, crossNic 0, nChannels 16, bw 20.000000/20.000000, type
//   NVL/PIX, sameChannels 1
//
// Pattern (NCCL src/graph/graph.h NCCL_TOPO_PATTERN_*): 1 balanced tree, 2 split tree, 3 tree,
// 4 ring, 5 NVLS, 6 CollNet direct; bw (older NCCL: speed) is per channel, intra/inter node in
// GB/s. The result is the model options `--nccl-graph` and `--nccl-tree-pattern` take (the
// config has no key for NCCL's choices; they belong to the NCCL version and run, not the node).
//
//   const NcclGraphLog g = read_nccl_graph_log(text, "nccl.log");
//   g.graph          // "ring=16x20/20,tree=16x20/20"
#pragma once

#include <string>
#include <string_view>

namespace collsim {

struct NcclGraphLog {
  std::string graph;         // --nccl-graph's syntax
  std::string tree_pattern;  // "balanced", "split", "tree", or "" (no tree graph)
};

// The first graph of each kind in the log (every rank prints the same). ImportError naming
// FILE:LINE for a Pattern line that does not read as above, and FILE when there is none.
NcclGraphLog read_nccl_graph_log(std::string_view text, std::string_view file);

// The same from a file (at most 64 MiB).
NcclGraphLog read_nccl_graph_log_file(const std::string& path);

}  // namespace collsim
