// `binomial`: binomial trees (MPICH `bcast.c`, `reduce.c`, `gather.c`, `scatter.c`; Thakur,
// Rabenseifner & Gropp 2005; docs/theory.md §1.2) and the dissemination barrier.
//  Broadcast, Reduce: pipelined over chunks (PipelinedTreeSource), ⌈lg p⌉ levels; with one chunk
//    the classic ⌈lg p⌉(α + nβ) (+ nγ per level for Reduce).
//  Gather, Scatter: lg p·α + (p-1)/p·nβ. Ranks are renumbered relative to the root
//    (v = (rank - root) mod p); v's subtree holds v..v+size-1, kept packed in scratch so that a
//    subtree is one contiguous transfer; the root unpacks into (Gather) or packs from (Scatter)
//    rank order.
//  Barrier: dissemination, ⌈lg p⌉ rounds; in round k rank r signals r + 2^k and waits for
//    r - 2^k (0-byte messages) — MPICH's barrier, docs/theory.md §1.2.
#include "algorithms/generators/group_source.hpp"
#include "algorithms/generators/tree_source.hpp"

namespace collsim::detail {

namespace {

int lowbit(int v) { return v & -v; }

// Subtree size of relative rank v in a binomial tree over n.
int subtree(int n, int v) { return v == 0 ? n : std::min(lowbit(v), n - v); }

// Children of relative rank v, largest subtree first.
std::vector<int> children(int n, int v) {
  std::vector<int> c;
  const int limit = v == 0 ? n : lowbit(v);
  int k = 1;
  while (k < limit) k *= 2;
  for (k /= 2; k >= 1; k /= 2) {
    if (v + k < n && k < limit) c.push_back(v + k);
  }
  return c;
}

class BinomialTreeSource final : public PipelinedTreeSource {
 public:
  explicit BinomialTreeSource(const Request& r) : PipelinedTreeSource(r, 1) {}

 protected:
  TreeLinks links(int rank, int /*c*/, int /*t*/) const override {
    const int root = req_.root;
    const int v = (rank - root + n_) % n_;
    TreeLinks l;
    if (v != 0) l.parent = (v - lowbit(v) + root) % n_;
    for (int ch : children(n_, v)) l.children.push_back((ch + root) % n_);
    return l;
  }
  int root(int /*c*/, int /*t*/) const override { return req_.root; }
};

class BinomialSource final : public GroupSource {
 public:
  using GroupSource::GroupSource;

  void groups(int r, int c, std::vector<Group>& out) const override {
    if (req_.collective == Collective::kBarrier) {
      if (c != 0) return;
      for (int k = 1; k < n_; k *= 2) {
        out.push_back(whole({ops::send((r + k) % n_, ops::in(0), 0),
                             ops::recv((r - k + n_) % n_, ops::out(0), 0)}));
      }
      return;
    }
    const Span span = channel_span(c);
    if (span.length == 0) return;
    const int root = req_.root;
    const int v = (r - root + n_) % n_;
    const std::uint64_t lc = span.length;
    const std::uint64_t base = subtree(n_, v) * span.offset;
    auto slot = [&](int j) { return ops::scratch(bytes(base + j * lc)); };  // relative to v
    auto block = [&](int rel) { return bytes(((rel + root) % n_) * req_.count + span.offset); };
    auto rank_of = [&](int rel) { return (rel + root) % n_; };
    const std::uint64_t piece = piece_bytes();
    const std::vector<int> kids = children(n_, v);
    if (req_.collective == Collective::kGather) {
      out.push_back(whole({ops::copy(ops::in(bytes(span.offset)), slot(0), bytes(lc))}));
      for (auto it = kids.rbegin(); it != kids.rend(); ++it) {  // smallest subtree first
        out.push_back(pipeline(
            {ops::recv(rank_of(*it), slot(*it - v), bytes(subtree(n_, *it) * lc))}, piece));
      }
      if (v != 0) {
        out.push_back(pipeline(
            {ops::send(rank_of(v - lowbit(v)), slot(0), bytes(subtree(n_, v) * lc))}, piece));
        return;
      }
      std::vector<Op> unpack;
      for (int j = 0; j < n_; ++j)
        unpack.push_back(ops::copy(slot(j), ops::out(block(j)), bytes(lc)));
      out.push_back(whole(std::move(unpack)));
      return;
    }
    // Scatter.
    if (v == 0) {
      std::vector<Op> packing;
      for (int j = 0; j < n_; ++j)
        packing.push_back(ops::copy(ops::in(block(j)), slot(j), bytes(lc)));
      out.push_back(whole(std::move(packing)));
    } else {
      out.push_back(pipeline(
          {ops::recv(rank_of(v - lowbit(v)), slot(0), bytes(subtree(n_, v) * lc))}, piece));
    }
    for (int ch : kids) {
      out.push_back(
          pipeline({ops::send(rank_of(ch), slot(ch - v), bytes(subtree(n_, ch) * lc))}, piece));
    }
    out.push_back(whole({ops::copy(slot(0), ops::out(bytes(span.offset)), bytes(lc))}));
  }

 protected:
  std::uint64_t scratch_elems(int rank) const override {
    if (req_.collective == Collective::kBarrier) return 0;
    return subtree(n_, (rank - req_.root + n_) % n_) * req_.count;
  }
};

}  // namespace

Schedule make_binomial(const Request& r) {
  if (r.collective == Collective::kBroadcast || r.collective == Collective::kReduce) {
    auto src = std::make_shared<BinomialTreeSource>(r);
    const int channels = src->ir_channels();
    return Schedule(make_info(r, channels), std::move(src));
  }
  return Schedule(make_info(r, r.channels), std::make_shared<BinomialSource>(r));
}

}  // namespace collsim::detail
