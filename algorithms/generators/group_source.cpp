#include "algorithms/generators/group_source.hpp"

#include <algorithm>
#include <cassert>

namespace collsim::detail {

namespace {

// Piece k of a template cut into `pieces` of `piece` bytes (the last shorter, 0 bytes past it).
Op cut(Op o, std::uint64_t k, std::uint64_t piece, std::uint64_t pieces) {
  if (pieces == 1) return o;
  const std::uint64_t start = std::min(k * piece, o.bytes);
  o.src.offset += start;
  o.dst.offset += start;
  o.bytes = std::min(piece, o.bytes - start);
  return o;
}

class GroupStream final : public OpStream {
 public:
  GroupStream(const GroupSource& src, int rank, int channel) {
    src.groups(rank, channel, groups_);
    for (const Group& g : groups_) size_ += g.size();
    skip_empty();
    enter();
    load();
  }
  std::uint64_t size() const override { return size_; }
  const Op& op() const override { return op_; }
  std::uint64_t index() const override { return index_; }
  // Template by template, then piece by piece: no division per op, and the current group's
  // templates and cut held here, not reached through the group list at each op (the engine
  // steps tens of thousands of streams in turn, and each indirection is a cache miss).
  void next() override {
    if (++index_ >= size_) return;  // past the last op: nothing to load
    if (++template_ == templates_) {
      template_ = 0;
      if (++piece_ == pieces_) {
        piece_ = 0;
        ++group_;
        skip_empty();
        enter();
      }
    }
    load();
  }

 private:
  void skip_empty() {
    while (group_ < groups_.size() && groups_[group_].size() == 0) ++group_;
  }
  void enter() {
    if (group_ >= groups_.size()) return;
    const Group& g = groups_[group_];
    ops_ = g.ops.data();
    templates_ = g.ops.size();
    pieces_ = g.pieces;
    piece_bytes_ = g.piece;
  }
  void load() {
    if (index_ < size_) op_ = cut(ops_[template_], piece_, piece_bytes_, pieces_);
  }
  std::vector<Group> groups_;
  std::uint64_t size_ = 0;
  std::uint64_t index_ = 0;
  std::size_t group_ = 0;
  const Op* ops_ = nullptr;    // the current group's templates
  std::size_t templates_ = 0;  // how many
  std::uint64_t pieces_ = 1;   // its pieces
  std::uint64_t piece_bytes_ = 1;
  std::uint64_t piece_ = 0;   // within the group
  std::size_t template_ = 0;  // within the piece
  Op op_;
};

}  // namespace

Op Group::op(std::uint64_t i) const { return piece_op(i / ops.size(), i % ops.size()); }

Op Group::piece_op(std::uint64_t k, std::size_t t) const { return cut(ops[t], k, piece, pieces); }

Group pipeline(std::vector<Op> templates, std::uint64_t piece) {
  assert(piece > 0);
  std::uint64_t largest = 0;
  for (const Op& o : templates) largest = std::max(largest, o.bytes);
  Group g;
  g.ops = std::move(templates);
  g.piece = piece;
  g.pieces = std::max<std::uint64_t>(1, ceil_div(largest, piece));
  return g;
}

Group whole(std::vector<Op> templates) {
  Group g;
  g.ops = std::move(templates);
  return g;
}

std::uint64_t GroupSource::op_count(int rank, int channel) const {
  std::vector<Group> gs;
  groups(rank, channel, gs);
  std::uint64_t n = 0;
  for (const Group& g : gs) n += g.size();
  return n;
}

Op GroupSource::op(int rank, int channel, std::uint64_t index) const {
  std::vector<Group> gs;
  groups(rank, channel, gs);
  for (const Group& g : gs) {
    if (index < g.size()) return g.op(index);
    index -= g.size();
  }
  assert(false && "op index out of range");
  return {};
}

std::unique_ptr<OpStream> GroupSource::stream(int rank, int channel) const {
  return std::make_unique<GroupStream>(*this, rank, channel);
}

bool GroupSource::same_shape(int rank, int a, int b, std::vector<std::int32_t>& peers) const {
  std::vector<Group> x, y;
  groups(rank, a, x);
  groups(rank, b, y);
  // A group without ops yields nothing (GroupStream skips it).
  const auto empty = [](const Group& g) { return g.size() == 0; };
  std::erase_if(x, empty);
  std::erase_if(y, empty);
  if (x.size() != y.size()) return false;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const Group& p = x[i];
    const Group& q = y[i];
    // Piece k of a template depends on its bytes, the piece and (when cut) the piece count.
    if (p.ops.size() != q.ops.size() || p.pieces != q.pieces ||
        (p.pieces > 1 && p.piece != q.piece)) {
      return false;
    }
    if (!std::equal(p.ops.begin(), p.ops.end(), q.ops.begin(), same_op_shape)) return false;
  }
  for (const Group& g : x) {
    for (const Op& o : g.ops) add_send_peer(o, peers);
  }
  return true;
}

std::uint64_t GroupSource::piece_bytes() const {
  const std::uint64_t slice = chunking_.chunk_bytes / static_cast<std::uint64_t>(chunking_.slices);
  return std::max(elem_, slice / elem_ * elem_);
}

std::uint64_t GroupSource::pieces_of(std::uint64_t len) const {
  return std::max<std::uint64_t>(1, ceil_div(len, piece_bytes()));
}

}  // namespace collsim::detail
