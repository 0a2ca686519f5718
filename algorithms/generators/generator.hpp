// Shared machinery of the algorithm generators (internal to algorithms/).
//
// Buffer layout per collective (elements; nccl-tests' conventions, count = Request::count):
//   allreduce      input count           output count
//   reducescatter  input ranks x count   output count (rank r's block)
//   allgather      input count           output ranks x count (block j from rank j)
//   broadcast      input count at root   output count
//   reduce         input count           output count at root
//   gather         input count           output ranks x count at root
//   scatter        input ranks x count at root   output count
//   alltoall       input ranks x count   output ranks x count (block j to / from rank j)
//   sendrecv       input count           output count (from rank r-1)
//   barrier        nothing
// Buffers a rank does not use have size 0.
//
// Channels: request channel c works on the c-th of `channels` near-equal parts of the vector
// (allreduce, broadcast, reduce, sendrecv) or of every block (the blocked collectives), so data
// that does not divide is spread with parts differing by at most one element.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "algorithms/ir/request.hpp"
#include "algorithms/ir/schedule.hpp"

namespace collsim::detail {

struct Span {
  std::uint64_t offset = 0;  // elements
  std::uint64_t length = 0;
};

// Part i of `total` cut into `parts` near-equal parts (the first total % parts get one more).
inline Span split(std::uint64_t total, std::uint64_t parts, std::uint64_t i) {
  const std::uint64_t base = total / parts;
  const std::uint64_t extra = total % parts;
  return {i * base + (i < extra ? i : extra), base + (i < extra ? 1 : 0)};
}

inline std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

// NCCL's one-node NVLS AllReduce aligns the chunks of its last step to 16 KiB (all_reduce.h:
// alignUp(..., 16384/sizeof(T)) elements).
inline constexpr std::uint64_t kNvlsLastChunkAlign = 16384;  // bytes

// Head h's share of a part of `len` units in NCCL's one-node NVLS AllReduce, at its place in the
// part (`src/device/all_reduce.h`, RunWorkColl NVLS): one `chunk` in each full step of one chunk
// per head, then the last step's remainder in chunks of alignUp(divUp(rem, heads), align) to the
// first heads, the last of them shorter and the heads after it none (and none to a GPU that is no
// head, h >= heads). Units are elements or bytes,
// as long as `chunk` and `align` (kNvlsLastChunkAlign) are in the same ones.
inline Span nvls_head_share(std::uint64_t len, std::uint64_t heads, std::uint64_t chunk,
                            std::uint64_t align, std::uint64_t h) {
  if (h >= heads) return {len, 0};
  const std::uint64_t full = len / (heads * chunk) * chunk;  // each head's, in full steps
  const std::uint64_t rem = len - full * heads;
  const std::uint64_t last = ceil_div(ceil_div(rem, heads), align) * align;
  const std::uint64_t before = std::min(rem, h * last);
  return {h * full + before, full + std::min(last, rem - before)};
}

// Input and output sizes in elements (table above).
std::uint64_t input_elems(const Request& r, int rank);
std::uint64_t output_elems(const Request& r, int rank);

// The header of a schedule generated for `r` with `ir_channels` streams per rank.
ScheduleInfo make_info(const Request& r, int ir_channels);

// Base of every generated source: holds the request and answers buffer sizes.
class GeneratedSource : public OpSource {
 public:
  explicit GeneratedSource(Request r);
  std::uint64_t buffer_bytes(int rank, BufferKind buffer) const override;

 protected:
  virtual std::uint64_t scratch_elems(int /*rank*/) const { return 0; }
  std::uint64_t bytes(std::uint64_t elements) const { return elements * elem_; }
  // This request channel's part of the vector (or of each block).
  // NCCL's uneven parts where the request has them (Request::split), near-equal ones otherwise.
  Span channel_span(int channel) const {
    if (req_.split.empty()) return split(req_.count, channels_, channel);
    return {req_.split.offset(channel), req_.split.length(channel)};
  }

  Request req_;
  int n_;
  int channels_;
  std::uint64_t elem_;
  Chunking chunking_;
  std::uint64_t chunk_elems_;  // chunk size in elements (>= 1)
};

// The ring order (ranks by position) used by request channel `c`: nodes in order, each node's
// ranks consecutively, reversed on odd channels so that channel pairs use both directions of
// every link. Channel c enters every node at local rank c mod (ranks on the node). With one
// NIC per GPU, channel c then crosses between nodes on rail c, as NCCL pairs channel i with
// NIC i, and any channel count spreads evenly over the rails. Across nodes a node's chain ends
// at Communicator::ring_exit of its entry rank where there is one (the GPU that leaves by the
// NIC the ring came in by, as NCCL's search ends a chain, `src/graph/search.cc`), the others in
// rotation between; elsewhere it is the rotation from the entry rank (odd channels: to it).
// NCCL searches its rings on the topology and also varies them per channel; this is our
// stand-in.
std::vector<int> ring_order(const Communicator& comm, int channel);

// NCCL's binary tree over `n` members (`src/graph/trees.cc` ncclGetBtree, docs/nccl-model.md §2.2):
// member 0 is the root; a member r with lowest set bit b has parent (r ^ b) | 2b, or r ^ b when
// that is out of range, and children r - b/2 and r + b/2 (the latter lowered by halving until in
// range). The root's child is the highest power of two below n.
struct TreeLinks {
  int parent = -1;
  std::vector<int> children;
};
TreeLinks btree(int n, int r);
// The complementary tree (ncclGetDtree): the mirror image (r -> n-1-r) when n is even, the tree
// shifted by one (r -> r-1 mod n) when odd, so that interior members of one are leaves of the
// other.
TreeLinks dtree(int n, int r);

// Generators, one per algorithm file. Each expects a request already checked by plan().
Schedule make_ring(const Request& r);
Schedule make_tree(const Request& r);
Schedule make_dbtree(const Request& r);
Schedule make_ring2d(const Request& r);
Schedule make_rhd(const Request& r);
Schedule make_direct(const Request& r);
// The pairs of ranks one channel of make_direct(r) connects: every ordered pair for AllToAll
// and AllGather, a few per rank otherwise (0).
std::uint64_t direct_pairs(const Request& r);
Schedule make_binomial(const Request& r);
Schedule make_nvls(const Request& r);
Schedule make_nvls_tree(const Request& r);
// `nvls` across nodes: NVLS inside each node, InfiniBand SHARP between them; AllReduce in
// nvls_tree.cpp, AllGather and ReduceScatter in collnet.cpp.
Schedule make_nvls_sharp(const Request& r);
Schedule make_nvls_sharp_blocked(const Request& r);
Schedule make_pat(const Request& r);
Schedule make_collnet_direct(const Request& r);
Schedule make_collnet_chain(const Request& r);

// PAT's shape (pat.cpp), shared with its closed form: D = ceil(log2 ranks) dimensions; the
// blocks a message carries at most (NCCL's postFreq) for a channel's part of a block of
// `channel_bytes` and FIFO steps of `step_bytes`; the slot of block offset t (t bit-reversed
// over D bits); the runs of slots [begin, end) dimension d sends (and, shifted by 2^(D-1-d),
// receives).
struct SlotRun {
  int begin = 0;
  int end = 0;
};
int pat_dims(int ranks);
std::uint64_t pat_aggregation(int ranks, std::uint64_t channel_bytes, std::uint64_t step_bytes);
int pat_slot(int dims, int offset);
std::vector<SlotRun> pat_runs(int ranks, int d);

}  // namespace collsim::detail
