// `rhd`: recursive halving-doubling (Rabenseifner; Thakur, Rabenseifner & Gropp 2005, as in
// MPICH `allreduce.c`, `red_scat.c`, `allgather.c`; docs/theory.md §1.2):
//   AllReduce     reduce-scatter by recursive halving + all-gather by recursive doubling,
//                 2 lg p·α + 2(p-1)/p·nβ + (p-1)/p·nγ;
//   ReduceScatter recursive halving, lg p·α + (p-1)/p·nβ + (p-1)/p·nγ;
//   AllGather     recursive doubling, lg p·α + (p-1)/p·nβ.
// Non-power-of-two p (MPICH's handling): with p' the largest power of two <= p and r = p - p',
// the first 2r ranks pair up; each even one hands its data to its odd neighbour (which reduces
// it) and sits out; the p' survivors run the power-of-two algorithm as virtual ranks
// (v = rank/2 below 2r, rank - r above); at the end each odd rank returns the result to its
// even neighbour. Virtual rank v owns the original blocks of the ranks it stands for, so
// ReduceScatter and AllGather halve and double over uneven, contiguous block ranges.
// Every exchange is a group [send, recv(-reduce)] advancing piece by piece, so partners never
// both wait on a full FIFO. With several channels the blocks' channel parts are packed into
// scratch so that every range is contiguous.
#include "algorithms/generators/group_source.hpp"

namespace collsim::detail {

namespace {

class RhdSource final : public GroupSource {
 public:
  explicit RhdSource(const Request& r) : GroupSource(r) {
    p2_ = 1;
    while (p2_ * 2 <= n_) p2_ *= 2;
    rem_ = n_ - p2_;
  }

  void groups(int rank, int c, std::vector<Group>& out) const override {
    const Span span = channel_span(c);
    if (span.length == 0) return;
    switch (req_.collective) {
      case Collective::kReduceScatter:
        reduce_scatter(rank, span, out);
        break;
      case Collective::kAllGather:
        all_gather(rank, span, out);
        break;
      default:
        all_reduce(rank, span, out);
        break;
    }
  }

 protected:
  std::uint64_t scratch_elems(int /*rank*/) const override {
    if (req_.collective == Collective::kReduceScatter) return req_.count * n_;
    if (req_.collective == Collective::kAllGather && channels_ > 1) return req_.count * n_;
    return 0;
  }

 private:
  int virt(int r) const { return r < 2 * rem_ ? r / 2 : r - rem_; }
  int real(int v) const { return v < rem_ ? 2 * v + 1 : v + rem_; }
  int first_orig(int v) const { return v >= p2_ ? n_ : (v < rem_ ? 2 * v : v + rem_); }
  bool sits_out(int r) const { return r < 2 * rem_ && r % 2 == 0; }

  // A [send, receive] exchange with `peer`: send [s, s+sl) and receive into [d, d+dl) (bytes).
  Group exchange(int peer, BufferKind buf, std::uint64_t s, std::uint64_t sl, std::uint64_t d,
                 std::uint64_t dl, bool reduce, bool postop) const {
    Op recv = reduce ? ops::recv_reduce(peer, {buf, d}, dl, postop) : ops::recv(peer, {buf, d}, dl);
    return pipeline({ops::send(peer, {buf, s}, sl), recv}, piece_bytes());
  }

  // Halving over virtual ranks, where virtual range [a, b) covers elements
  // [bound(a), bound(b)) of `buf`; returns the virtual range kept.
  template <typename Bound>
  void halve(int v, BufferKind buf, Bound bound, std::vector<Group>& out) const {
    int lo = 0;
    for (int d = p2_ / 2; d >= 1; d /= 2) {
      const int mid = lo + d;
      const bool lower = v < mid;
      const int keep_lo = lower ? lo : mid;
      const int send_lo = lower ? mid : lo;
      const std::uint64_t k0 = bound(keep_lo), k1 = bound(keep_lo + d);
      const std::uint64_t s0 = bound(send_lo), s1 = bound(send_lo + d);
      out.push_back(exchange(real(v ^ d), buf, bytes(s0), bytes(s1 - s0), bytes(k0), bytes(k1 - k0),
                             true, d == 1));
      lo = keep_lo;
    }
  }

  template <typename Bound>
  void doubling(int v, BufferKind buf, Bound bound, std::vector<Group>& out) const {
    int lo = v;
    for (int d = 1; d < p2_; d *= 2) {
      const int other = (v & d) ? lo - d : lo + d;
      const std::uint64_t m0 = bound(lo), m1 = bound(lo + d);
      const std::uint64_t o0 = bound(other), o1 = bound(other + d);
      out.push_back(exchange(real(v ^ d), buf, bytes(m0), bytes(m1 - m0), bytes(o0), bytes(o1 - o0),
                             false, false));
      lo = std::min(lo, other);
    }
  }

  void all_reduce(int r, const Span& span, std::vector<Group>& out) const {
    const std::uint64_t off = bytes(span.offset), len = bytes(span.length);
    if (n_ == 1) {
      out.push_back(whole({ops::copy(ops::in(off), ops::out(off), len)}));
      return;
    }
    if (sits_out(r)) {
      out.push_back(pipeline({ops::send(r + 1, ops::in(off), len)}, piece_bytes()));
      out.push_back(pipeline({ops::recv(r + 1, ops::out(off), len)}, piece_bytes()));
      return;
    }
    if (r < 2 * rem_) {
      out.push_back(pipeline({ops::recv_reduce_copy(r - 1, ops::in(off), ops::out(off), len)},
                             piece_bytes()));
    } else {
      out.push_back(whole({ops::copy(ops::in(off), ops::out(off), len)}));
    }
    auto bound = [&](int v) {
      return span.offset + (v >= p2_ ? span.length : split(span.length, p2_, v).offset);
    };
    halve(virt(r), BufferKind::kOutput, bound, out);
    doubling(virt(r), BufferKind::kOutput, bound, out);
    if (r < 2 * rem_)
      out.push_back(pipeline({ops::send(r - 1, ops::out(off), len)}, piece_bytes()));
  }

  // Copies between the blocks' channel parts in `from` (layout block j at j*count + offset) and
  // the packed work area in `to` (block j at base + j*length), or the reverse.
  void pack(const Span& span, BufferRef from, BufferRef to, bool unpack,
            std::vector<Group>& out) const {
    const std::uint64_t base = n_ * span.offset;
    std::vector<Op> copies;
    for (int j = 0; j < n_; ++j) {
      const BufferRef a{from.buffer, bytes(j * req_.count + span.offset)};
      const BufferRef b{to.buffer, bytes(base + j * span.length)};
      copies.push_back(unpack ? ops::copy(b, a, bytes(span.length))
                              : ops::copy(a, b, bytes(span.length)));
    }
    out.push_back(whole(std::move(copies)));
  }

  void reduce_scatter(int r, const Span& span, std::vector<Group>& out) const {
    const std::uint64_t base = n_ * span.offset;  // packed area in scratch, elements
    const std::uint64_t lc = span.length;
    auto block = [&](int j) { return ops::scratch(bytes(base + j * lc)); };
    if (n_ == 1) {
      out.push_back(
          whole({ops::copy(ops::in(bytes(span.offset)), ops::out(bytes(span.offset)), bytes(lc))}));
      return;
    }
    pack(span, ops::in(0), ops::scratch(0), false, out);
    const std::uint64_t all = bytes(n_ * lc);
    if (sits_out(r)) {
      out.push_back(pipeline({ops::send(r + 1, block(0), all)}, piece_bytes()));
      out.push_back(
          pipeline({ops::recv(r + 1, ops::out(bytes(span.offset)), bytes(lc))}, piece_bytes()));
      return;
    }
    if (r < 2 * rem_) {
      out.push_back(pipeline({ops::recv_reduce(r - 1, block(0), all)}, piece_bytes()));
    }
    auto bound = [&](int v) { return base + first_orig(v) * lc; };
    halve(virt(r), BufferKind::kScratch, bound, out);
    out.push_back(whole({ops::copy(block(r), ops::out(bytes(span.offset)), bytes(lc))}));
    if (r < 2 * rem_)
      out.push_back(pipeline({ops::send(r - 1, block(r - 1), bytes(lc))}, piece_bytes()));
  }

  void all_gather(int r, const Span& span, std::vector<Group>& out) const {
    const std::uint64_t lc = span.length;
    const bool packed = channels_ > 1;
    const BufferKind wk = packed ? BufferKind::kScratch : BufferKind::kOutput;
    const std::uint64_t base = packed ? n_ * span.offset : 0;
    auto block = [&](int j) { return BufferRef{wk, bytes(base + j * lc)}; };
    const BufferRef own_in = ops::in(bytes(span.offset));
    out.push_back(whole({ops::copy(own_in, block(r), bytes(lc))}));
    if (n_ > 1) {
      if (sits_out(r)) {
        out.push_back(pipeline({ops::send(r + 1, own_in, bytes(lc))}, piece_bytes()));
        out.push_back(pipeline({ops::recv(r + 1, block(0), bytes(n_ * lc))}, piece_bytes()));
      } else {
        if (r < 2 * rem_) {
          out.push_back(pipeline({ops::recv(r - 1, block(r - 1), bytes(lc))}, piece_bytes()));
        }
        auto bound = [&](int v) { return base + first_orig(v) * lc; };
        doubling(virt(r), wk, bound, out);
        if (r < 2 * rem_) {
          out.push_back(pipeline({ops::send(r - 1, block(0), bytes(n_ * lc))}, piece_bytes()));
        }
      }
    }
    if (packed) pack(span, ops::out(0), ops::scratch(0), true, out);
  }

  int p2_ = 1;
  int rem_ = 0;
};

}  // namespace

Schedule make_rhd(const Request& r) {
  return Schedule(make_info(r, r.channels), std::make_shared<RhdSource>(r));
}

}  // namespace collsim::detail
