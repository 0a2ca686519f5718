// `ring2d`: hierarchical ring (docs/theory.md §1.6 a/b: Horovod's NCCLReduceScatter - allreduce -
// NCCLAllgather pattern, Mikami et al. 2018's 2D-torus all-reduce; BlueConnect for the general
// multi-level form). p = g ranks per node x N nodes.
//  AllReduce:     ring reduce-scatter inside the node (rank of local rank l ends with shard l of
//                 the channel's data), ring all-reduce of shard l across nodes among the ranks of
//                 local rank l (g rails at once), ring all-gather inside the node.
//                 T = 2(g-1)α₁ + 2(g-1)/g·nβ₁ + 2(N-1)α₂ + 2(N-1)/N·(n/g)β₂ (+ γ terms).
//  ReduceScatter: for every node m, a ring reduce-scatter inside the node over the blocks of node
//                 m's ranks (into scratch); then across nodes among local rank l, a ring
//                 reduce-scatter over the blocks of local rank l's ranks.
//  AllGather:     across nodes among local rank l, a ring all-gather of local rank l's blocks;
//                 then for every node m, a ring all-gather inside the node of node m's blocks.
// Only N-1 of every N bytes a rank exchanges cross the network, spread over all g rails.
// Needs every node to hold the same number of ranks (RequestError otherwise). Phases follow each
// other on one IR channel per request channel; each op is computed arithmetically (RingPhase).
#include <fmt/format.h>

#include <algorithm>

#include "algorithms/generators/ring_phase.hpp"
#include "topology/error.hpp"

namespace collsim::detail {

namespace {

using Mode = SegmentMap::Mode;

class Ring2dSource final : public GeneratedSource {
 public:
  explicit Ring2dSource(const Request& r) : GeneratedSource(r) {
    const Communicator& comm = r.comm;
    if (!comm.uniform()) {
      throw RequestError(fmt::format(
          "ring2d needs the same number of ranks on every node; this communicator has {} nodes "
          "with between {} and {} ranks (use ring or dbtree)",
          comm.node_count(), min_per_node(comm), comm.max_ranks_per_node()));
    }
    g_ = comm.max_ranks_per_node();
    nodes_ = comm.node_count();
    for (int l = 0; l < g_; ++l) {
      std::vector<int> col;
      for (int m = 0; m < nodes_; ++m) col.push_back(comm.ranks_of_node(m)[l]);
      columns_.push_back(std::move(col));
    }
    for (int c = 0; c < channels_; ++c) {
      Channel ch;
      ch.intra_pos.resize(n_);
      ch.intra_local.resize(nodes_);
      const std::vector<int> order = ring_order(Communicator::flat(g_), c);
      for (int m = 0; m < nodes_; ++m) {
        for (int j = 0; j < g_; ++j) {
          ch.intra_local[m].push_back(order[j]);
          ch.intra_pos[comm.ranks_of_node(m)[order[j]]] = j;
        }
      }
      ch.inter_nodes = ring_order(Communicator::flat(nodes_), c);
      ch.inter_pos.resize(nodes_);
      for (int j = 0; j < nodes_; ++j) ch.inter_pos[ch.inter_nodes[j]] = j;
      channel_.push_back(std::move(ch));
    }
  }

  std::uint64_t op_count(int rank, int c) const override {
    return phases(rank, c).count();
  }

  Op op(int rank, int c, std::uint64_t i) const override {
    Phases p = phases(rank, c);
    return op_of(p, i);
  }
  // The same ops as op(), building the stream's phases once rather than once per op.
  std::unique_ptr<OpStream> stream(int rank, int c) const override {
    Phases p = phases(rank, c);
    const std::uint64_t n = p.count();
    return stream_by_index(n, [this, p](std::uint64_t i) mutable { return op_of(p, i); });
  }

  // From the two channels' phases where they match field for field (no op walked; the repeated
  // phase's node blocks move only its buffers); otherwise by walking them.
  bool same_shape(int rank, int a, int b, std::vector<std::int32_t>& peers) const override {
    const Phases x = phases(rank, a);
    const Phases y = phases(rank, b);
    if (x.repeats != y.repeats || !x.first.same_shape(y.first) ||
        (x.repeats > 0 && !x.repeated.same_shape(y.repeated)) || !x.last.same_shape(y.last)) {
      return OpSource::same_shape(rank, a, b, peers);
    }
    x.first.add_send_peers(peers);
    if (x.repeats > 0) x.repeated.add_send_peers(peers);
    x.last.add_send_peers(peers);
    return true;
  }

 protected:
  std::uint64_t scratch_elems(int /*rank*/) const override {
    return req_.collective == Collective::kReduceScatter ? req_.count * n_ : 0;
  }

 private:
  struct Channel {
    std::vector<int> intra_pos;                 // by rank
    std::vector<std::vector<int>> intra_local;  // by node: local ranks in ring order
    std::vector<int> inter_nodes;               // nodes in ring order
    std::vector<int> inter_pos;                 // by node
  };
  // first; then `repeats` copies of `repeated` (the m-th over node m's blocks); then last.
  struct Phases {
    RingPhase first;
    RingPhase repeated;
    std::uint64_t repeats = 0;
    RingPhase last;
    std::uint64_t count() const {
      return first.count() + repeats * repeated.count() + last.count();
    }
  };

  // Op i of a stream's phases (the repeated phase set to the node block it falls in).
  Op op_of(Phases& p, std::uint64_t i) const {
    const std::uint64_t a = p.first.count();
    if (i < a) return p.first.op(i);
    i -= a;
    const std::uint64_t b = p.repeated.count();
    if (i < p.repeats * b) {
      set_node_block(p.repeated, static_cast<int>(i / b));
      return p.repeated.op(i % b);
    }
    return p.last.op(i - p.repeats * b);
  }

  static int min_per_node(const Communicator& comm) {
    int m = comm.size();
    for (int k = 0; k < comm.node_count(); ++k) {
      m = std::min(m, static_cast<int>(comm.ranks_of_node(k).size()));
    }
    return m;
  }

  void set_node_block(RingPhase& p, int m) const {
    p.in.table = req_.comm.ranks_of_node(m).data();
    p.out.table = p.in.table;
  }

  RingPhase base(const Channel& ch, int rank, bool intra) const {
    const Communicator& comm = req_.comm;
    const int node = comm.node_of(rank);
    const int local = comm.local_rank(rank);
    RingPhase p;
    p.elem = elem_;
    p.chunk = chunk_elems_;
    p.slices = chunking_.slices;
    if (intra) {
      const std::vector<int>& order = ch.intra_local[node];
      p.n = g_;
      p.pos = ch.intra_pos[rank];
      p.prev = comm.ranks_of_node(node)[order[(p.pos + g_ - 1) % g_]];
      p.next = comm.ranks_of_node(node)[order[(p.pos + 1) % g_]];
      p.blocks = order.data();
    } else {
      p.n = nodes_;
      p.pos = ch.inter_pos[node];
      p.prev = columns_[local][ch.inter_nodes[(p.pos + nodes_ - 1) % nodes_]];
      p.next = columns_[local][ch.inter_nodes[(p.pos + 1) % nodes_]];
      p.blocks = ch.inter_nodes.data();
    }
    return p;
  }

  Phases phases(int rank, int c) const {
    const Channel& ch = channel_[c];
    const Span span = channel_span(c);
    const int local = req_.comm.local_rank(rank);
    Phases ps;
    ps.first = base(ch, rank, false);
    ps.repeated = base(ch, rank, true);
    ps.last = base(ch, rank, false);
    ps.first.region_length = 0;  // empty unless set below
    ps.last.region_length = 0;
    const SegmentMap column{Mode::kStrided, span.offset, req_.count, columns_[local].data(), 0, 1,
                            span.length};
    const SegmentMap own{Mode::kFixed, span.offset, 0, nullptr, 0, 1, span.length};
    SegmentMap node_blocks = column;  // table set per repetition (set_node_block)
    switch (req_.collective) {
      case Collective::kAllReduce: {
        const SegmentMap shards{Mode::kSplit, span.offset, 0, nullptr, span.length, g_, 0};
        ps.first = base(ch, rank, true);
        ps.first.kind = RingKind::kReduceScatter;
        ps.first.in = ps.first.out = shards;
        ps.first.final = nodes_ == 1;
        RingPhase& inter = ps.repeated;
        inter = base(ch, rank, false);
        inter.kind = RingKind::kAllReduce;
        inter.src = inter.dst = BufferKind::kOutput;
        const Span shard = split(span.length, g_, local);
        inter.region_offset = span.offset + shard.offset;
        inter.region_length = shard.length;
        inter.final = true;
        ps.repeats = 1;
        ps.last = base(ch, rank, true);
        ps.last.kind = RingKind::kAllGather;
        ps.last.src = ps.last.dst = BufferKind::kOutput;
        ps.last.copy_own = false;
        ps.last.in = ps.last.out = shards;
        break;
      }
      case Collective::kReduceScatter: {
        ps.first.kind = RingKind::kAllReduce;  // empty placeholder (region_length 0)
        ps.repeated.kind = RingKind::kReduceScatter;
        ps.repeated.src = BufferKind::kInput;
        ps.repeated.dst = BufferKind::kScratch;
        ps.repeated.in = ps.repeated.out = node_blocks;
        ps.repeated.final = nodes_ == 1;
        ps.repeats = nodes_;
        ps.last.kind = RingKind::kReduceScatter;
        ps.last.src = BufferKind::kScratch;
        ps.last.dst = BufferKind::kOutput;
        ps.last.in = column;
        ps.last.out = own;
        ps.last.final = true;
        break;
      }
      default: {  // AllGather
        ps.first.kind = RingKind::kAllGather;
        ps.first.src = BufferKind::kInput;
        ps.first.dst = BufferKind::kOutput;
        ps.first.in = own;
        ps.first.out = column;
        ps.repeated.kind = RingKind::kAllGather;
        ps.repeated.src = ps.repeated.dst = BufferKind::kOutput;
        ps.repeated.copy_own = false;
        ps.repeated.in = ps.repeated.out = node_blocks;
        ps.repeats = nodes_;
        ps.last.kind = RingKind::kAllReduce;  // empty placeholder
        break;
      }
    }
    if (ps.repeats > 0 && req_.collective != Collective::kAllReduce) set_node_block(ps.repeated, 0);
    return ps;
  }

  int g_ = 1;
  int nodes_ = 1;
  std::vector<std::vector<int>> columns_;  // by local rank: ranks across nodes
  std::vector<Channel> channel_;
};

}  // namespace

Schedule make_ring2d(const Request& r) {
  return Schedule(make_info(r, r.channels), std::make_shared<Ring2dSource>(r));
}

}  // namespace collsim::detail
