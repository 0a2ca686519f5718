#include "algorithms/generators/ring_phase.hpp"

#include <algorithm>

namespace collsim::detail {

namespace {

int mod(std::int64_t a, int n) { return static_cast<int>(((a % n) + n) % n); }

// Slice q of a segment of `len` elements when slices are `slice` elements long.
Span slice_of(std::uint64_t len, std::uint64_t slice, int q) {
  const std::uint64_t start = std::min(static_cast<std::uint64_t>(q) * slice, len);
  return {start, std::min(slice, len - start)};
}

}  // namespace

std::uint64_t SegmentMap::offset(int b) const {
  switch (mode) {
    case Mode::kStrided:
      return base + static_cast<std::uint64_t>(table != nullptr ? table[b] : b) * stride;
    case Mode::kSplit:
      return base + split(total, parts, b).offset;
    case Mode::kFixed:
      return base;
  }
  return base;
}

std::uint64_t SegmentMap::len(int b) const {
  return mode == Mode::kSplit ? split(total, parts, b).length : length;
}

std::uint64_t SegmentMap::max_len() const { return mode == Mode::kSplit ? len(0) : length; }

std::uint64_t RingPhase::count() const {
  if (kind == RingKind::kAllReduce) {
    if (region_length == 0) return 0;
    if (n == 1) return src == dst ? 0 : 1;
    const std::uint64_t loops = ceil_div(region_length, static_cast<std::uint64_t>(n) * chunk);
    return loops * static_cast<std::uint64_t>(2 * n - 1) * slices;
  }
  const std::uint64_t longest = in.max_len();
  if (longest == 0) return 0;
  if (n == 1) {
    if (kind == RingKind::kAllGather && !copy_own) return 0;
    return in.len(blocks[pos]) == 0 ? 0 : 1;
  }
  const std::uint64_t loops = ceil_div(longest, chunk);
  const std::uint64_t per = kind == RingKind::kReduceScatter ? n : n + (copy_own ? 1 : 0);
  return loops * per * slices;
}

bool RingPhase::same_shape(const RingPhase& o) const {
  // Where the member stands in its ring does not matter, only the lengths it meets from there:
  // channels whose rings are rotations of each other run the same ops.
  if (kind != o.kind || n != o.n || prev != o.prev || next != o.next || elem != o.elem ||
      chunk != o.chunk || slices != o.slices) {
    return false;
  }
  if (kind == RingKind::kAllReduce) {
    // One member copies, or not, by its buffers.
    if (region_length != o.region_length) return false;
    if (n == 1) return (src == dst) == (o.src == o.dst);
    if (region_length == 0) return true;
    // Every loop but the last cuts full chunks; the last cuts its rest into segments of
    // ceil(rest / n), segment (pos - step) mod n at each step (allreduce_op).
    const std::uint64_t loop_elems = static_cast<std::uint64_t>(n) * chunk;
    const std::uint64_t rest =
        region_length - (ceil_div(region_length, loop_elems) - 1) * loop_elems;
    const std::uint64_t c =
        rest >= loop_elems ? chunk : ceil_div(rest, static_cast<std::uint64_t>(n));
    const auto seg_len = [&](int seg) {
      return std::min(c, rest - std::min(static_cast<std::uint64_t>(seg) * c, rest));
    };
    // Step k works on segment (pos - k) mod n, so the two walk the same lengths rotated by
    // pos - o.pos. The lengths never grow with the segment (full chunks, one partial, then
    // none), and such a sequence that a rotation other than none leaves unchanged is constant:
    // the rotation takes segment 0 to one past it and some segment back onto 0. So they match
    // at the same position, or where every segment has one length, without walking n of them.
    return pos == o.pos || seg_len(0) == seg_len(n - 1);
  }
  // A blocked phase moves, step by step, the lengths of the blocks at the ring positions from
  // its own on (blocked_op).
  if (copy_own != o.copy_own || in.max_len() != o.in.max_len()) return false;
  // Blocks of one length (a strided or fixed map, or a split that divides evenly) meet the same
  // length at every step.
  const auto uniform = [](const SegmentMap& m) {
    return m.mode != SegmentMap::Mode::kSplit || m.total % static_cast<std::uint64_t>(m.parts) == 0;
  };
  if (uniform(in) && uniform(o.in)) return true;
  for (int k = 0; k < n; ++k) {
    if (in.len(blocks[(pos + k) % n]) != o.in.len(o.blocks[(o.pos + k) % n])) return false;
  }
  return true;
}

void RingPhase::add_send_peers(std::vector<std::int32_t>& peers) const {
  // Every phase of two or more members opens with a send to `next`; one member only copies.
  if (n >= 2 && count() > 0) add_peer(next, peers);
}

Op RingPhase::op(std::uint64_t i) const {
  if (n == 1) return single_op();
  return kind == RingKind::kAllReduce ? allreduce_op(i) : blocked_op(i);
}

Op RingPhase::single_op() const {
  if (kind == RingKind::kAllReduce) {
    return ops::copy({src, region_offset * elem}, {dst, region_offset * elem},
                     region_length * elem);
  }
  const int b = blocks[pos];
  return ops::copy({src, in.offset(b) * elem}, {dst, out.offset(b) * elem}, in.len(b) * elem);
}

Op RingPhase::allreduce_op(std::uint64_t i) const {
  const std::uint64_t s_count = static_cast<std::uint64_t>(slices);
  const std::uint64_t per = static_cast<std::uint64_t>(2 * n - 1) * s_count;
  const std::uint64_t loop = i / per;
  const int step = static_cast<int>((i % per) / s_count);
  const int q = static_cast<int>(i % s_count);
  const std::uint64_t loop_elems = static_cast<std::uint64_t>(n) * chunk;
  const std::uint64_t rest = region_length - loop * loop_elems;
  const std::uint64_t c = rest >= loop_elems ? chunk : ceil_div(rest, n);
  const int seg = mod(static_cast<std::int64_t>(pos) - step, n);
  const std::uint64_t seg_start = std::min(static_cast<std::uint64_t>(seg) * c, rest);
  const std::uint64_t seg_len = std::min(c, rest - seg_start);
  const Span sl = slice_of(seg_len, ceil_div(c, s_count), q);
  const std::uint64_t off = (region_offset + loop * loop_elems + seg_start + sl.offset) * elem;
  const std::uint64_t b = sl.length * elem;
  const BufferRef s{src, off};
  const BufferRef d{dst, off};
  if (step == 0) return ops::send(next, s, b);
  if (step < n - 1) return ops::recv_reduce_send(prev, next, s, b);
  if (step == n - 1) return ops::recv_reduce_copy_send(prev, next, s, d, b, final);
  if (step < 2 * n - 2) return ops::recv_copy_send(prev, next, d, b);
  return ops::recv(prev, d, b);
}

Op RingPhase::blocked_op(std::uint64_t i) const {
  const std::uint64_t s_count = static_cast<std::uint64_t>(slices);
  const bool rs = kind == RingKind::kReduceScatter;
  const std::uint64_t per_loop = static_cast<std::uint64_t>(rs ? n : n + (copy_own ? 1 : 0));
  const std::uint64_t per = per_loop * s_count;
  const std::uint64_t loop = i / per;
  int t = static_cast<int>((i % per) / s_count);
  const int q = static_cast<int>(i % s_count);
  const std::uint64_t longest = in.max_len();
  const std::uint64_t loop_start = loop * chunk;
  const std::uint64_t slice = ceil_div(std::min(chunk, longest - loop_start), s_count);
  // Where slice q of loop `loop` of block b lies, per map.
  auto piece = [&](const SegmentMap& m, int blk, BufferKind buf, std::uint64_t len) {
    const std::uint64_t l = len > loop_start ? std::min(chunk, len - loop_start) : 0;
    const Span sl = slice_of(l, slice, q);
    return std::pair{BufferRef{buf, (m.offset(blk) + loop_start + sl.offset) * elem},
                     sl.length * elem};
  };
  if (rs) {
    const int b = blocks[mod(static_cast<std::int64_t>(pos) - t - 1, n)];
    const auto [s, bytes] = piece(in, b, src, in.len(b));
    if (t == 0) return ops::send(next, s, bytes);
    if (t < n - 1) return ops::recv_reduce_send(prev, next, s, bytes);
    const auto [d, unused] = piece(out, b, dst, in.len(b));
    (void)unused;
    return ops::recv_reduce_copy(prev, s, d, bytes, final);
  }
  // AllGather: slot 0 send, slot 1 the own copy (if any), then steps 1..n-1.
  const int own = blocks[pos];
  if (t == 0) {
    const auto [s, bytes] = piece(in, own, src, in.len(own));
    return ops::send(next, s, bytes);
  }
  if (copy_own) {
    if (t == 1) {
      const auto [s, bytes] = piece(in, own, src, in.len(own));
      const auto [d, unused] = piece(out, own, dst, in.len(own));
      (void)unused;
      return ops::copy(s, d, bytes);
    }
    --t;
  }
  const int b = blocks[mod(static_cast<std::int64_t>(pos) - t, n)];
  const auto [d, bytes] = piece(out, b, dst, in.len(b));
  if (t < n - 1) return ops::recv_copy_send(prev, next, d, bytes);
  return ops::recv(prev, d, bytes);
}

}  // namespace collsim::detail
