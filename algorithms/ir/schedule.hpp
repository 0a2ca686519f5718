// The schedule IR: per rank, concurrent channels; per channel, an ordered stream of ops.
//
// A Schedule is what every executor runs unchanged (the simulator, the CPU backend, later MPI,
// CUDA and NCCL backends). Algorithms decide everything; executors only execute (docs/design.md,
// "The Schedule IR"). A Schedule is cheap to copy (it shares an immutable OpSource) and thread-safe
// to read.
//
//   Schedule s = plan(request);                          // registry.hpp; validated
//   for (int r = 0; r < s.rank_count(); ++r)
//     for (int c = 0; c < s.channel_count(); ++c)
//       for (OpCursor k = s.cursor(r, c); !k.done(); k.next()) execute(r, c, k.index(), k.op());
//
// Scale. Ops are produced on demand: op(rank, channel, i) is computed arithmetically by the
// algorithm (ring: O(1); tree-like: O(1); logarithmic algorithms: O(log p)), and a cursor walks
// a stream keeping O(1)..O(p) state. A 1 GiB ring AllReduce on 8192 ranks x 16 channels (about
// 4.3e9 ops) costs a few MiB. Memory grows with ranks x channels, not with the op count.
//
// Execution semantics (the contract every executor implements):
//  1. Each (rank, channel) runs its ops in index order; op i+1 starts when op i has completed.
//     Channels of a rank run concurrently, except that an op listed in a Dependency waits for
//     its `after` op to complete.
//  2. A connection is (channel c, sender a, receiver b), a != b. It is a bounded FIFO of
//     `info().fifo.slots` slots (8, NCCL_STEPS), each carrying up to `fifo.slot_payload` bytes.
//  3. The send part of an op of B bytes is cut into max(1, ceil(B / slot_payload)) pieces, in
//     order, each of min(slot_payload, remaining) bytes (a 0-byte op is one empty piece). A piece
//     takes one slot. The sender may post a piece while fewer than `slots` pieces are posted and
//     not yet consumed on that connection; otherwise it waits.
//  4. The recv part of an op consumes the same pieces in order; consuming a piece frees its slot.
//  5. Fused ops (recv-...-send) work piece by piece: piece j is received, combined, and sent on
//     before piece j+1 is received. (Their recv and send sizes are equal, so pieces line up.)
//  6. A send-only op completes when its last piece is posted (it does not wait for the receiver);
//     an op that receives completes when its last piece has been consumed (and, if it also
//     sends, posted). Local ops (copy, reduce) complete when done.
// Rule 3 bounds the data in flight per connection to slots x slot_payload bytes (NCCL: 4 MiB for
// Simple), so a ring's steady state is limited by bandwidth (a sender runs up to 8 slots ahead of
// its receiver), never by a global lock-step. Because a sender can block on a full FIFO, a
// schedule can deadlock on buffer space alone (two ranks that each send more than 8 pieces to
// the other before receiving); validate() runs this exact model and reports such schedules.
//
// Switch actors. Where a switch computes (NVLink SHARP: the NVSwitch reduces what the GPUs give
// it and multicasts the result; InfiniBand SHARP: the network switches reduce what the nodes'
// NICs send them), the schedule lists the switch as an actor of its own: actors 0..ranks-1 are
// the communicator's ranks, actors ranks..actor_count()-1 are switches (ScheduleInfo::switches).
// A switch actor runs ordinary ops on ordinary connections, with only a scratch buffer: a
// recv-reduce is the switch reducing a piece into its accumulator, a send per destination is its
// multicast (one copy per output port). Every executor runs switch actors as it runs ranks: the
// CPU backend performs the switch's reduction itself; the simulator places the actor where its
// SwitchActor says (the NVSwitch of its anchor's node, or the network switch its anchor's NIC
// plugs into) and charges its reductions at that switch's rate. Peers of ops may name any actor.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/ir/op.hpp"
#include "algorithms/ir/types.hpp"
#include "topology/units.hpp"

namespace collsim {

// Where a switch actor runs (above).
enum class SwitchSite {
  kNvSwitch,  // the NVSwitch of the anchor's node (NVLS, NVLSTree)
  kNetwork,   // the network switch the anchor's NIC plugs into (InfiniBand SHARP, CollNet)
};
struct SwitchActor {
  int anchor = 0;  // the rank whose NVSwitch or NIC places the switch
  SwitchSite site = SwitchSite::kNvSwitch;
};

// The header of a schedule: what it computes and how it was cut.
struct ScheduleInfo {
  Collective collective = Collective::kAllReduce;
  std::string algorithm;
  Protocol protocol = Protocol::kSimple;
  DataType dtype = DataType::kF32;
  ReduceOp redop = ReduceOp::kSum;
  int ranks = 1;
  int nodes = 1;               // the nodes the ranks are on (Communicator::node_count)
  int channels = 1;            // IR channels (streams per rank)
  int requested_channels = 1;  // NCCL channels asked for; tree algorithms use several IR
                               // channels per NCCL channel (a split CTA: reduce and broadcast)
  // The NCCL channel an IR channel belongs to: the IR channels of one come together.
  int request_channel(int ir_channel) const {
    return ir_channel / std::max(1, channels / std::max(1, requested_channels));
  }
  std::uint64_t count = 0;  // Request::count
  // Elements of the largest channel's part (or of each block): NCCL's uneven division
  // (Request::split) where it has one, count / requested_channels rounded up otherwise.
  std::uint64_t widest_channel = 0;
  // Every NCCL channel moves the same part (an even division, or NCCL's split into equal parts).
  bool channels_alike() const {
    return widest_channel * static_cast<std::uint64_t>(std::max(1, requested_channels)) == count;
  }
  std::uint64_t widest_channel_bytes() const { return widest_channel * element_size(dtype); }
  Bytes bytes;              // nccl-tests size column
  int root = 0;
  std::uint64_t chunk_bytes = 0;
  int slices = 1;
  ProtocolGeometry fifo;
  // The schedule is what NCCL runs on its point-to-point kernel (a `direct` AllToAll, Gather,
  // Scatter or SendRecv, on_nccl_p2p_kernel): its channels move at most
  // CostParams::channel_cap(protocol, ChannelKernel::kP2p).
  bool p2p = false;
  // Switch actors (above): actor ranks + i is switches[i]. Empty: no switch computes.
  std::vector<SwitchActor> switches;
};

// A forward cursor over one (rank, channel) stream.
class OpStream {
 public:
  virtual ~OpStream() = default;
  virtual std::uint64_t size() const = 0;
  // The op at the cursor; valid while index() < size().
  virtual const Op& op() const = 0;
  virtual std::uint64_t index() const = 0;
  virtual void next() = 0;
};

// A cursor over ops that `at(i)` computes one at a time, i < `size`: the form every generated
// source's stream takes once its per-stream state (a phase, a table) is built, `at` holding
// that state (a mutable callable may update it as it goes).
template <class At>
class IndexedStream final : public OpStream {
 public:
  IndexedStream(std::uint64_t size, At at) : at_(std::move(at)), size_(size) { load(); }
  std::uint64_t size() const override { return size_; }
  const Op& op() const override { return op_; }
  std::uint64_t index() const override { return index_; }
  void next() override {
    ++index_;
    load();
  }

 private:
  void load() {
    if (index_ < size_) op_ = at_(index_);
  }
  At at_;
  std::uint64_t size_;
  std::uint64_t index_ = 0;
  Op op_;
};

template <class At>
std::unique_ptr<OpStream> stream_by_index(std::uint64_t size, At at) {
  return std::make_unique<IndexedStream<At>>(size, std::move(at));
}

// Appends `peer` to `peers` unless it is the last one there: a peer may appear more than once
// (a stream that alternates between peers), and whoever needs each once sorts and uniques the
// list. Searching the list instead cost N^2 for an all-to-all of N ranks.
void add_peer(std::int32_t peer, std::vector<std::int32_t>& peers);
// The same for `op`'s send peer, if it sends.
void add_send_peer(const Op& op, std::vector<std::int32_t>& peers);

// Whether two ops are alike in kind, bytes and peers (their buffers may differ): what
// OpSource::same_shape compares, op for op.
bool same_op_shape(const Op& a, const Op& b);

// A ring AllReduce in which every op moves at most one FIFO piece: one loop over the channel's
// span, cut into `n` segments of `segment` elements (the last shorter, those past the span
// empty), each step into `slices` ops (NCCL's slices; RingPhase, ring_phase.hpp). The ops of the
// member at ring position p are fixed by their index i (step s = i / slices):
//   s = 0 send; 1 <= s <= n-2 recv-reduce-send; s = n-1 recv-reduce-copy-send;
//   n <= s <= 2n-3 recv-copy-send; s = 2n-2 recv;
// and move slice i % slices of segment (p - s) mod n, received from position p-1 and sent to
// p+1. The simulator evaluates such a ring as a lattice of (position, op) cells without events
// where that is exact (simulator/lattice.cpp): a small message on many ranks, where nearly
// every piece is empty and only carries a step's latency.
struct RingLattice {
  int n = 0;
  int slices = 1;
  std::uint64_t elem = 1;                 // bytes per element
  std::vector<std::vector<int>> order;    // per channel: the rank at each ring position
  std::vector<std::uint64_t> length;      // per channel: its span, in elements (0: idle)
  std::vector<std::uint64_t> segment;     // per channel: a segment's elements

  // Segments [0, nonempty(c)) hold data.
  int nonempty(int c) const {
    return segment[c] == 0 ? 0 : static_cast<int>((length[c] + segment[c] - 1) / segment[c]);
  }
  std::uint64_t ops(int c) const {
    return length[c] == 0 ? 0 : static_cast<std::uint64_t>(2 * n - 1) * slices;
  }
  // Bytes of slice q of segment `seg` on channel c.
  std::uint64_t piece_bytes(int c, int seg, int q) const {
    const std::uint64_t start = std::min(static_cast<std::uint64_t>(seg) * segment[c], length[c]);
    const std::uint64_t len = std::min(segment[c], length[c] - start);
    const std::uint64_t slice = (segment[c] + slices - 1) / slices;
    const std::uint64_t from = std::min(static_cast<std::uint64_t>(q) * slice, len);
    return std::min(slice, len - from) * elem;
  }
};

// What an algorithm implements: the ops of every stream, on demand. Implementations must be
// immutable after construction and safe to call from several threads.
class OpSource {
 public:
  virtual ~OpSource() = default;
  virtual std::uint64_t op_count(int rank, int channel) const = 0;
  // Requires index < op_count(rank, channel).
  virtual Op op(int rank, int channel, std::uint64_t index) const = 0;
  virtual std::uint64_t buffer_bytes(int rank, BufferKind buffer) const = 0;
  // This rank's cross-channel dependencies, sorted by (channel, op). Default: none.
  virtual std::vector<Dependency> dependencies(int rank) const;
  // The canonical runs (compress()) of the dependencies on channels [first_channel,
  // end_channel), appended to `out`; runs never span channels, so these are the whole list's
  // runs on those channels. Default: cuts dependencies(rank) as it reads it. A source whose
  // dependencies come one per piece overrides it to answer without the list, building only
  // those channels', into the caller's buffer.
  virtual void append_dependency_runs(int rank, int first_channel, int end_channel,
                                      std::vector<DependencyRun>& out) const;
  // All of this rank's runs: append_dependency_runs over every channel.
  std::vector<DependencyRun> dependency_runs(int rank) const;
  // A sequential cursor; the default calls op(i). Sources with costly random access override it.
  virtual std::unique_ptr<OpStream> stream(int rank, int channel) const;
  // True when every rank behaves alike: on each channel, every rank's stream is the same
  // sequence of op kinds and byte counts, its peers are that rank's two fixed neighbours on the
  // channel (the one it receives from, the one it sends to), and there are no cross-channel
  // dependencies. A ring whose segments are all the same length is; the simulator then checks
  // which rank shifts also leave the neighbours and the routes alike and simulates one period
  // (simulator/symmetry.cpp). Default: false.
  virtual bool rank_symmetric() const { return false; }
  // The schedule as a RingLattice (above), when it is one; it then has no dependencies.
  // Default: none.
  virtual std::optional<RingLattice> ring_lattice() const { return std::nullopt; }
  // Whether streams (rank, a) and (rank, b) run the same ops in kind, bytes and peers, op for op
  // (their buffers may differ); when they do, the send peers of (rank, a) are appended to `peers`
  // (add_peer: possibly more than once). What folding channels compares (simulator/symmetry.cpp).
  // The default walks both streams; a source that can answer from its stream's structure
  // overrides it, and may answer false only where the walk would.
  virtual bool same_shape(int rank, int a, int b, std::vector<std::int32_t>& peers) const;
};

class OpCursor {
 public:
  explicit OpCursor(std::unique_ptr<OpStream> s) : s_(std::move(s)) {}
  bool done() const { return s_->index() >= s_->size(); }
  const Op& op() const { return s_->op(); }
  std::uint64_t index() const { return s_->index(); }
  std::uint64_t size() const { return s_->size(); }
  void next() { s_->next(); }

 private:
  std::unique_ptr<OpStream> s_;
};

class Schedule {
 public:
  Schedule(ScheduleInfo info, std::shared_ptr<const OpSource> source);

  const ScheduleInfo& info() const { return info_; }
  int rank_count() const { return info_.ranks; }
  // Ranks and switch actors: what executors walk (streams, buffers, peers).
  int actor_count() const { return info_.ranks + static_cast<int>(info_.switches.size()); }
  bool is_switch(int actor) const { return actor >= info_.ranks; }
  int channel_count() const { return info_.channels; }

  std::uint64_t op_count(int rank, int channel) const;
  Op op(int rank, int channel, std::uint64_t index) const;
  OpCursor cursor(int rank, int channel) const;
  std::uint64_t buffer_bytes(int rank, BufferKind buffer) const;
  std::vector<Dependency> dependencies(int rank) const;
  std::vector<DependencyRun> dependency_runs(int rank) const;
  void append_dependency_runs(int rank, int first_channel, int end_channel,
                              std::vector<DependencyRun>& out) const;
  // Sum of op_count over all streams of all actors: O(actors x channels) calls.
  std::uint64_t total_ops() const;

  const std::shared_ptr<const OpSource>& source() const { return source_; }

 private:
  ScheduleInfo info_;
  std::shared_ptr<const OpSource> source_;
};

}  // namespace collsim
