#include "algorithms/ir/schedule.hpp"

#include <algorithm>
#include <cassert>
#include <limits>

namespace collsim {


std::vector<Dependency> OpSource::dependencies(int /*rank*/) const { return {}; }

void OpSource::append_dependency_runs(int rank, int first_channel, int end_channel,
                                      std::vector<DependencyRun>& out) const {
  DependencyRunBuilder runs(out);
  for (const Dependency& d : dependencies(rank)) {
    if (d.channel >= first_channel && d.channel < end_channel) runs.add(d);
  }
  runs.finish();
}

std::vector<DependencyRun> OpSource::dependency_runs(int rank) const {
  std::vector<DependencyRun> runs;
  append_dependency_runs(rank, 0, std::numeric_limits<int>::max(), runs);
  return runs;
}

// The default cursor: random access through op().
std::unique_ptr<OpStream> OpSource::stream(int rank, int channel) const {
  return stream_by_index(op_count(rank, channel),
                         [this, rank, channel](std::uint64_t i) { return op(rank, channel, i); });
}

void add_peer(std::int32_t peer, std::vector<std::int32_t>& peers) {
  if (peers.empty() || peers.back() != peer) peers.push_back(peer);
}

void add_send_peer(const Op& op, std::vector<std::int32_t>& peers) {
  if (sends(op.kind)) add_peer(op.send_peer, peers);
}

bool same_op_shape(const Op& a, const Op& b) {
  return a.kind == b.kind && a.bytes == b.bytes && a.send_peer == b.send_peer &&
         a.recv_peer == b.recv_peer;
}

bool OpSource::same_shape(int rank, int a, int b, std::vector<std::int32_t>& peers) const {
  auto x = stream(rank, a);
  auto y = stream(rank, b);
  if (x->size() != y->size()) return false;
  const std::size_t before = peers.size();  // what `peers` keeps if the streams differ
  for (; x->index() < x->size(); x->next(), y->next()) {
    if (!same_op_shape(x->op(), y->op())) {
      peers.resize(before);
      return false;
    }
    add_send_peer(x->op(), peers);
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

std::vector<DependencyRun> Schedule::dependency_runs(int rank) const {
  return source_->dependency_runs(rank);
}

void Schedule::append_dependency_runs(int rank, int first_channel, int end_channel,
                                      std::vector<DependencyRun>& out) const {
  source_->append_dependency_runs(rank, first_channel, end_channel, out);
}

std::uint64_t Schedule::total_ops() const {
  std::uint64_t n = 0;
  for (int r = 0; r < actor_count(); ++r) {
    for (int c = 0; c < channel_count(); ++c) n += op_count(r, c);
  }
  return n;
}

}  // namespace collsim
