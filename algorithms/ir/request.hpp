// What a user asks for: a collective of some size, run by a named algorithm over a communicator.
//
// `count` is nccl-tests' count column: the elements of the whole vector for AllReduce, Broadcast,
// Reduce and SendRecv, and the elements of one rank's block for AllGather, ReduceScatter,
// AllToAll, Gather and Scatter (whose buffers hold ranks x count elements). The CLI's byte sizes
// (nccl-tests' size column; docs/cli.md) convert with count_for_bytes(); a Barrier has none.
//
//   Request r;
//   r.collective = Collective::kAllGather;
//   r.algorithm = "ring";
//   r.count = count_for_bytes(r.collective, MiB(64), DataType::kF32, 8);   // 2 Mi elements per
//   rank r.comm = Communicator::grid(1, 8); Schedule s = plan(r); // registry.hpp
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "algorithms/ir/communicator.hpp"
#include "algorithms/ir/types.hpp"
#include "topology/units.hpp"

namespace collsim {

// How the host issues the collective, iteration after iteration, as nccl-tests does: one thread
// issues one call per GPU it drives (nccl-tests -g, "nGpus" in its header), back to back while
// the GPUs run the previous iteration; with a CUDA graph (-G, "graph: 1") the iterations were
// captured once and the host issues nothing per iteration. One process per GPU (mpirun, srun,
// torchrun) is the default.
struct HostLoop {
  int gpus_per_thread = 1;
  bool graph = false;
};

// How a collective's vector (or each block) is divided among its channels where the parts are
// not near-equal: channel 0 takes `lo` elements, the next `mids` channels `mid` each, and the
// last `hi` (0: no such channel). NCCL divides this way from 2.20 (nccl_channels.hpp); an empty
// split means `channels` near-equal parts, as split() in generator.hpp cuts them.
struct ChannelSplit {
  std::uint64_t lo = 0;
  std::uint64_t mid = 0;
  std::uint64_t hi = 0;
  int mids = 0;

  bool empty() const { return lo == 0 && mids == 0 && hi == 0; }
  int channels() const { return (lo != 0 ? 1 : 0) + mids + (hi != 0 ? 1 : 0); }
  std::uint64_t total() const { return lo + mid * static_cast<std::uint64_t>(mids) + hi; }
  std::uint64_t widest() const { return std::max({lo, mids != 0 ? mid : 0, hi}); }
  std::uint64_t offset(int channel) const;  // where channel `channel`'s part starts
  std::uint64_t length(int channel) const;  // its elements
  // The same shape for `total` elements: every part scaled by total / this->total(), the last
  // taking the rounding; empty where a part would come to nothing.
  ChannelSplit scaled_to(std::uint64_t total) const;
  friend bool operator==(const ChannelSplit&, const ChannelSplit&) = default;
};

struct Request {
  Collective collective = Collective::kAllReduce;
  std::string algorithm = "ring";
  Protocol protocol = Protocol::kSimple;
  DataType dtype = DataType::kF32;
  ReduceOp redop = ReduceOp::kSum;
  std::uint64_t count = 0;        // elements; see above
  int root = 0;                   // Broadcast, Reduce, Gather, Scatter
  int channels = 1;               // NCCL channels (>= 1)
  ChannelSplit split;             // their parts where not near-equal (split.channels() == channels)
  std::uint64_t chunk_bytes = 0;  // 0: the protocol's default (default_chunking)
  int slices = 0;                 // slices per chunk; 0: default
  // NVLS and NVLSTree's chunk before calcCollChunking's size rules: comm->nvlsChunkSize, and
  // comm->nvlsTreeMaxChunkSize (0: NCCL's fallback, 64 KiB on 4 nodes or more, else the chunk).
  // NCCL_NVLS_CHUNKSIZE's 128 KiB unless Blackwell across NVLink domains retunes them
  // (nccl_nvls_chunks, algorithms/models/nccl_channels.hpp).
  std::uint64_t nvls_chunk_bytes = 131072;
  std::uint64_t nvls_tree_max_chunk = 0;
  // NVLS across nodes (with SHARP): at most this chunk (0: nvls_chunk_bytes); NCCL's 32 KiB where
  // its model gives NVLS AllReduce less than 150 GB/s (NvlsChunks::across_max).
  std::uint64_t nvls_across_max_chunk = 0;
  Communicator comm = Communicator::flat(1);
  HostLoop host;  // not part of the schedule: predict() bounds the time by the host's share
};

// nccl-tests' size column -> count. `size` must be a multiple of the element size (RequestError
// otherwise); for the blocked collectives the per-rank block is size / (ranks x element), rounded
// down as nccl-tests does.
std::uint64_t count_for_bytes(Collective c, Bytes size, DataType t, int ranks);

// count -> nccl-tests' size column (count x element size, x ranks for the blocked collectives).
Bytes request_bytes(const Request& r);

// Whether NCCL runs `r` on its point-to-point kernel: a `direct` AllToAll, Gather, Scatter or
// SendRecv (is_nccl_p2p), the schedule ScheduleInfo::p2p marks.
bool on_nccl_p2p_kernel(const Request& r);

// NVLS heads among a node's (an NVLink domain's) GPUs: one per channel of NCCL's NVLS graph, whose
// search takes at most min(NCCL_MAX_NVLS_ARITY = 32, the GPUs) channels (`src/graph/search.cc`,
// ncclTopoCompute; the heads, `src/graph/connect.cc`): every GPU of an 8-GPU node, 32 of 72.
inline int nvls_heads(int gpus) { return gpus < 32 ? gpus : 32; }

// How data is cut for pipelining. A chunk is the unit an algorithm steps through (one ring step,
// one tree level); a slice is the unit of one op, chunk / slices. NCCL defaults (docs/nccl-model.md
// §2.3, `src/enqueue.cc` calcCollChunking, `src/include/collectives.h`): Ring + Simple AllReduce,
// AllGather and ReduceScatter use chunkSteps 4 / sliceSteps 2, i.e. 2 MiB chunks in two 1 MiB
// slices; everything else uses one slot's payload per chunk and one slice (Simple 512 KiB,
// LL 32 KiB, LL128 576000 B). Sizes are rounded down to whole elements (at least one).
struct Chunking {
  std::uint64_t chunk_bytes = 0;
  int slices = 1;
};
Chunking default_chunking(std::string_view algorithm, Collective c, Protocol p, DataType t);
// The request's chunking: its overrides where set, the defaults otherwise.
Chunking chunking(const Request& r);

}  // namespace collsim
