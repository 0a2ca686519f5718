#include "algorithms/ir/schedule.hpp"

#include <algorithm>
#include <cassert>

namespace collsim {

namespace {

// The default cursor: random access through OpSource::op().
class IndexStream final : public OpStream {
 public:
  IndexStream(const OpSource& source, int rank, int channel)
      : source_(source), rank_(rank), channel_(channel), size_(source.op_count(rank, channel)) {
    load();
  }
  std::uint64_t size() const override { return size_; }
  const Op& op() const override { return op_; }
  std::uint64_t index() const override { return index_; }
  void next() override {
    ++index_;
    load();
  }

 private:
  void load() {
    if (index_ < size_) op_ = source_.op(rank_, channel_, index_);
  }
  const OpSource& source_;
  int rank_;
  int channel_;
  std::uint64_t size_;
  std::uint64_t index_ = 0;
  Op op_;
};

}  // namespace

std::vector<Dependency> OpSource::dependencies(int /*rank*/) const { return {}; }

std::unique_ptr<OpStream> OpSource::stream(int rank, int channel) const {
  return std::make_unique<IndexStream>(*this, rank, channel);
}

bool OpSource::same_shape(int rank, int a, int b, std::vector<std::int32_t>& peers) const {
  auto x = stream(rank, a);
  auto y = stream(rank, b);
  if (x->size() != y->size()) return false;
  std::vector<std::int32_t> found;
  for (; x->index() < x->size(); x->next(), y->next()) {
    const Op& p = x->op();
    const Op& q = y->op();
    if (p.kind != q.kind || p.bytes != q.bytes || p.send_peer != q.send_peer ||
        p.recv_peer != q.recv_peer) {
      return false;
    }
    if (sends(p.kind) && std::find(found.begin(), found.end(), p.send_peer) == found.end()) {
      found.push_back(p.send_peer);
    }
  }
  for (std::int32_t p : found) {
    if (std::find(peers.begin(), peers.end(), p) == peers.end()) peers.push_back(p);
  }
  return true;
}

Schedule::Schedule(ScheduleInfo info, std::shared_ptr<const OpSource> source)
    : info_(std::move(info)), source_(std::move(source)) {
  assert(source_ != nullptr);
}

std::uint64_t Schedule::op_count(int rank, int channel) const {
  return source_->op_count(rank, channel);
}

Op Schedule::op(int rank, int channel, std::uint64_t index) const {
  return source_->op(rank, channel, index);
}

OpCursor Schedule::cursor(int rank, int channel) const {
  return OpCursor(source_->stream(rank, channel));
}

std::uint64_t Schedule::buffer_bytes(int rank, BufferKind buffer) const {
  return source_->buffer_bytes(rank, buffer);
}

std::vector<Dependency> Schedule::dependencies(int rank) const {
  return source_->dependencies(rank);
}

std::uint64_t Schedule::total_ops() const {
  std::uint64_t n = 0;
  for (int r = 0; r < actor_count(); ++r) {
    for (int c = 0; c < channel_count(); ++c) n += op_count(r, c);
  }
  return n;
}

}  // namespace collsim
