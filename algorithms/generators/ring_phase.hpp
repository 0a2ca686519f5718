// One pass of a ring over n members, computed arithmetically: op(i) in O(1), no stored ops
// (internal to algorithms/). The ring, ring2d and any later ring-based generator compose these.
//
// Step structure (NCCL `src/device/all_reduce.h` runRing, `reduce_scatter.h`, `all_gather.h`;
// Patarasuk & Yuan 2009 for the bandwidth-optimal ring), for the member at ring position `pos`,
// per loop of chunks, each step cut into `slices` ops:
//   AllReduce      send, recv-reduce-send x (n-2), recv-reduce-copy-send, recv-copy-send x (n-2),
//                  recv                                            2(n-1) transfer steps
//   ReduceScatter  send, recv-reduce-send x (n-2), recv-reduce-copy  n-1 steps
//   AllGather      send (+ copy of the own segment), recv-copy-send x (n-2), recv
// Step s of AllReduce works on segment (pos - s) mod n; ReduceScatter on (pos - s - 1) mod n, so
// the member at `pos` finishes its own block; AllGather on (pos - s) mod n.
//
// Data layout. AllReduce is "interleaved": a loop covers n x chunk consecutive elements of the
// region, segment j being the j-th chunk; the last loop shrinks its chunk to ceil(rest / n)
// (as NCCL does). ReduceScatter and AllGather are "blocked": segment j is a block somewhere in
// the buffers (a SegmentMap places it) and loop l covers elements [l x chunk, (l+1) x chunk) of
// every block.
#pragma once

#include <cstdint>
#include <vector>

#include "algorithms/generators/generator.hpp"

namespace collsim::detail {

enum class RingKind { kAllReduce, kReduceScatter, kAllGather };

// Where block b lies, in elements.
struct SegmentMap {
  enum class Mode { kStrided, kSplit, kFixed };
  Mode mode = Mode::kFixed;
  std::uint64_t base = 0;
  std::uint64_t stride = 0;  // kStrided: base + b * stride, or base + table[b] * stride
  const int* table = nullptr;
  std::uint64_t total = 0;  // kSplit: base + split(total, parts, b)
  int parts = 1;
  std::uint64_t length = 0;  // kStrided, kFixed: every block's length

  std::uint64_t offset(int b) const;
  std::uint64_t len(int b) const;
  std::uint64_t max_len() const;
};

struct RingPhase {
  RingKind kind = RingKind::kAllReduce;
  int n = 1;
  int pos = 0;
  int prev = -1;
  int next = -1;
  BufferKind src = BufferKind::kInput;
  BufferKind dst = BufferKind::kOutput;
  bool copy_own = true;  // AllGather: copy the own segment src -> dst at step 0
  bool final = false;    // the finishing reduction completes the collective (postop)
  std::uint64_t elem = 1;
  std::uint64_t chunk = 1;  // elements
  int slices = 1;
  // AllReduce: the region, in elements.
  std::uint64_t region_offset = 0;
  std::uint64_t region_length = 0;
  // ReduceScatter / AllGather: block id at each ring position, and where blocks lie in the
  // source and destination buffers.
  const int* blocks = nullptr;
  SegmentMap in;
  SegmentMap out;

  std::uint64_t count() const;
  Op op(std::uint64_t i) const;  // i < count()
  // Whether this phase and `o` yield the same ops in kind, bytes and peers, op for op (their
  // buffers may differ), judged from the fields those depend on: true only where they do; false
  // may still be ops alike (walk them to know). What channel folding asks (schedule.hpp).
  bool same_shape(const RingPhase& o) const;
  // Appends the peer this phase's ops send to, if they send and it is not in `peers` yet.
  void add_send_peers(std::vector<std::int32_t>& peers) const;

 private:
  Op allreduce_op(std::uint64_t i) const;
  Op blocked_op(std::uint64_t i) const;
  Op single_op() const;
};


}  // namespace collsim::detail
