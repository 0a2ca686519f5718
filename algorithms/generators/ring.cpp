// `ring`: NCCL's ring algorithms (docs/nccl-model.md §2.1; NCCL `src/device/all_reduce.h` runRing,
// `broadcast.h`, `reduce.h`; cost 2(p-1)α + 2(p-1)/p·nβ + (p-1)/p·nγ for AllReduce, Patarasuk &
// Yuan 2009; (p-1)α + (p-1)/p·nβ for AllGather and ReduceScatter; docs/theory.md §1.2).
//  - AllReduce, ReduceScatter, AllGather: RingPhase, one ring per channel, each channel on its
//    own ring order (generator.hpp ring_order). O(1) per op, 2 x channels x ranks ints stored.
//  - Broadcast, Reduce: a pipelined chain along the ring, starting at the root (Broadcast) or
//    ending at it (Reduce); cost (p + k - 2)(α + nβ/k) with k chunks (docs/theory.md §1.5).
#include <algorithm>

#include "algorithms/generators/group_source.hpp"
#include "algorithms/generators/ring_phase.hpp"

namespace collsim::detail {

namespace {

class RingOrders {
 public:
  RingOrders(const Communicator& comm, int channels) {
    for (int c = 0; c < channels; ++c) {
      order_.push_back(ring_order(comm, c));
      std::vector<int> pos(comm.size());
      for (int p = 0; p < comm.size(); ++p) pos[order_.back()[p]] = p;
      pos_.push_back(std::move(pos));
    }
  }
  const std::vector<int>& order(int c) const { return order_[c]; }
  const std::vector<std::vector<int>>& orders() const { return order_; }
  int pos(int c, int rank) const { return pos_[c][rank]; }
  int at(int c, int p) const {
    const int n = static_cast<int>(order_[c].size());
    return order_[c][((p % n) + n) % n];
  }

 private:
  std::vector<std::vector<int>> order_;
  std::vector<std::vector<int>> pos_;
};

class RingSource final : public GeneratedSource {
 public:
  explicit RingSource(const Request& r) : GeneratedSource(r), rings_(r.comm, r.channels) {}

  std::uint64_t op_count(int rank, int channel) const override {
    return phase(rank, channel).count();
  }
  Op op(int rank, int channel, std::uint64_t index) const override {
    return phase(rank, channel).op(index);
  }
  // Same ops as op(), without rebuilding the phase for each one. The phase's `blocks` table
  // lives in this source, which outlives its cursors (schedule.hpp).
  std::unique_ptr<OpStream> stream(int rank, int channel) const override {
    RingPhase p = phase(rank, channel);
    const std::uint64_t n = p.count();
    return stream_by_index(n, [p](std::uint64_t i) { return p.op(i); });
  }
  // From the two channels' phases where they match field for field (no op walked); otherwise
  // by walking them.
  bool same_shape(int rank, int a, int b, std::vector<std::int32_t>& peers) const override {
    const RingPhase x = phase(rank, a);
    if (!x.same_shape(phase(rank, b))) return OpSource::same_shape(rank, a, b, peers);
    x.add_send_peers(peers);
    return true;
  }
  // ReduceScatter and AllGather move one block of the channel's span per step, the same length
  // for every rank; AllReduce cuts a loop into n segments, all equal only when the channel's
  // span is a multiple of n (the last loop's chunk is ceil(rest / n), ring_phase.hpp).
  bool rank_symmetric() const override {
    if (req_.collective != Collective::kAllReduce) return true;
    for (int c = 0; c < channels_; ++c) {
      if (channel_span(c).length % static_cast<std::uint64_t>(n_) != 0) return false;
    }
    return true;
  }
  // An AllReduce whose every channel's span fits one loop (n segments of at most a chunk each):
  // RingPhase's allreduce_op then cuts the span into n segments of ceil(span / n) elements.
  std::optional<RingLattice> ring_lattice() const override {
    if (req_.collective != Collective::kAllReduce || n_ < 2) return std::nullopt;
    RingLattice l;
    l.n = n_;
    l.slices = chunking_.slices;
    l.elem = elem_;
    l.order = rings_.orders();
    const auto n = static_cast<std::uint64_t>(n_);
    for (int c = 0; c < channels_; ++c) {
      const std::uint64_t len = channel_span(c).length;
      if (len > n * chunk_elems_) return std::nullopt;  // more than one loop
      l.length.push_back(len);
      l.segment.push_back(len == n * chunk_elems_ ? chunk_elems_ : ceil_div(len, n));
    }
    return l;
  }

 private:
  RingPhase phase(int rank, int c) const {
    RingPhase p;
    p.n = n_;
    p.pos = rings_.pos(c, rank);
    p.prev = rings_.at(c, p.pos - 1);
    p.next = rings_.at(c, p.pos + 1);
    p.elem = elem_;
    p.chunk = chunk_elems_;
    p.slices = chunking_.slices;
    p.final = true;
    p.blocks = rings_.order(c).data();
    const Span span = channel_span(c);
    using Mode = SegmentMap::Mode;
    switch (req_.collective) {
      case Collective::kReduceScatter:
        p.kind = RingKind::kReduceScatter;
        p.in = {Mode::kStrided, span.offset, req_.count, nullptr, 0, 1, span.length};
        p.out = {Mode::kFixed, span.offset, 0, nullptr, 0, 1, span.length};
        break;
      case Collective::kAllGather:
        p.kind = RingKind::kAllGather;
        p.in = {Mode::kFixed, span.offset, 0, nullptr, 0, 1, span.length};
        p.out = {Mode::kStrided, span.offset, req_.count, nullptr, 0, 1, span.length};
        break;
      default:
        p.kind = RingKind::kAllReduce;
        p.region_offset = span.offset;
        p.region_length = span.length;
        break;
    }
    return p;
  }

  RingOrders rings_;
};

// Broadcast and Reduce as a chain along channel c's ring.
class ChainSource final : public GroupSource {
 public:
  explicit ChainSource(const Request& r) : GroupSource(r), rings_(r.comm, r.channels) {}

  void groups(int rank, int c, std::vector<Group>& out) const override {
    const Span span = channel_span(c);
    if (span.length == 0) return;
    const std::uint64_t off = bytes(span.offset);
    const std::uint64_t len = bytes(span.length);
    const int root_pos = rings_.pos(c, req_.root);
    const int pos = rings_.pos(c, rank);
    const int prev = rings_.at(c, pos - 1);
    const int next = rings_.at(c, pos + 1);
    // Distance along the chain: Broadcast starts at the root, Reduce ends at it.
    const int d = ((pos - root_pos) % n_ + n_) % n_;
    std::vector<Op> t;
    if (req_.collective == Collective::kBroadcast) {
      if (n_ == 1) {
        t = {ops::copy(ops::in(off), ops::out(off), len)};
      } else if (d == 0) {
        t = {ops::send(next, ops::in(off), len), ops::copy(ops::in(off), ops::out(off), len)};
      } else if (d < n_ - 1) {
        t = {ops::recv_copy_send(prev, next, ops::out(off), len)};
      } else {
        t = {ops::recv(prev, ops::out(off), len)};
      }
    } else {
      const int e = (d + n_ - 1) % n_;  // 0 for the chain's head (after the root), n-1 the root
      if (n_ == 1) {
        t = {ops::copy(ops::in(off), ops::out(off), len)};
      } else if (e == 0) {
        t = {ops::send(next, ops::in(off), len)};
      } else if (e < n_ - 1) {
        t = {ops::recv_reduce_send(prev, next, ops::in(off), len)};
      } else {
        t = {ops::recv_reduce_copy(prev, ops::in(off), ops::out(off), len, true)};
      }
    }
    out.push_back(pipeline(std::move(t), piece_bytes()));
  }

 private:
  RingOrders rings_;
};

}  // namespace

Schedule make_ring(const Request& r) {
  std::shared_ptr<const OpSource> src;
  if (r.collective == Collective::kBroadcast || r.collective == Collective::kReduce) {
    src = std::make_shared<ChainSource>(r);
  } else {
    src = std::make_shared<RingSource>(r);
  }
  return Schedule(make_info(r, r.channels), std::move(src));
}

}  // namespace collsim::detail
