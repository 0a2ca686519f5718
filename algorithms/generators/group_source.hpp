// A source whose streams are short lists of op templates, each cut into pieces on demand
// (internal to algorithms/).
//
// A Group is a few templates that advance together piece by piece: piece k of every template,
// then piece k+1 (chunk-major). With one template per region this is a pipelined transfer;
// with [recv from children..., send to parent] it is a pipelined tree level; with [send half A,
// recv-reduce half B] it is a bounded-buffer exchange that cannot deadlock on the FIFO. A
// template of B bytes yields pieces of `piece` bytes at offsets +k*piece (the last shorter, and
// 0-byte pieces once it runs out); every template of a group yields the same number of pieces,
// max(1, ceil(largest / piece)), so both ends of a connection agree on op counts.
//
// A stream's groups are O(1)..O(p) in number and rebuilt on each random access; cursors build
// them once per stream.
#pragma once

#include <vector>

#include "algorithms/generators/generator.hpp"

namespace collsim::detail {

struct Group {
  std::vector<Op> ops;
  std::uint64_t piece = 1;
  std::uint64_t pieces = 1;
  std::uint64_t size() const { return ops.size() * pieces; }
  Op op(std::uint64_t i) const;  // i < size()
  // Piece k of template t: op(k * ops.size() + t).
  Op piece_op(std::uint64_t k, std::size_t t) const;
};

// A group of `templates` cut into pieces of `piece` bytes (> 0).
Group pipeline(std::vector<Op> templates, std::uint64_t piece);
// A group of templates executed once each, uncut.
Group whole(std::vector<Op> templates);

class GroupSource : public GeneratedSource {
 public:
  using GeneratedSource::GeneratedSource;
  std::uint64_t op_count(int rank, int channel) const override;
  Op op(int rank, int channel, std::uint64_t index) const override;
  std::unique_ptr<OpStream> stream(int rank, int channel) const override;
  // From the groups: the same templates (kind, bytes, peers) cut the same way give the same ops.
  bool same_shape(int rank, int a, int b, std::vector<std::int32_t>& peers) const override;

  // The groups of (rank, IR channel), appended to `out`.
  virtual void groups(int rank, int channel, std::vector<Group>& out) const = 0;

 protected:
  // Piece size in bytes for pipelined groups: the chunk (one slice of it).
  std::uint64_t piece_bytes() const;
  // The pieces pipeline(templates, piece_bytes()) cuts `len` bytes into: at least one.
  std::uint64_t pieces_of(std::uint64_t len) const;
};

}  // namespace collsim::detail
