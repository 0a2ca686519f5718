#include "algorithms/ir/schedule_walk.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "algorithms/ir/validate_detail.hpp"

namespace collsim {

const std::byte* WalkHooks::apply(const WalkStream& st, const Op& op, const WalkPiece& piece,
                                  const std::byte* in, std::byte* scratch) {
  std::byte* dst = writes_dst(op.kind) ? address(st, op.dst) + piece.offset : nullptr;
  const std::byte* src = reads_src(op.kind) ? address(st, op.src) + piece.offset : nullptr;
  const std::size_t n = piece.bytes;
  switch (op.kind) {
    case OpKind::kRecv:
    case OpKind::kRecvCopySend:
      copy(st, dst, in, n);
      break;
    case OpKind::kRecvReduce:
      reduce(st, dst, dst, in, n, op.postop);
      break;
    case OpKind::kRecvReduceCopy:
    case OpKind::kRecvReduceCopySend:
      reduce(st, dst, src, in, n, op.postop);
      break;
    case OpKind::kRecvReduceSend:
      reduce(st, scratch, src, in, n, op.postop);
      return scratch;
    default:
      break;
  }
  return sends(op.kind) ? dst : nullptr;
}

void WalkHooks::apply_local(const WalkStream& st, const Op& op) {
  std::byte* dst = address(st, op.dst);
  if (op.kind == OpKind::kCopy) {
    copy(st, dst, address(st, op.src), op.bytes);
  } else {
    reduce(st, dst, dst, address(st, op.src), op.bytes, op.postop);
  }
}

ScheduleWalk::ScheduleWalk(const Schedule& s, WalkHooks& hooks, WalkOptions options)
    : hooks_(hooks),
      lock_(options.lock),
      credits_(options.fifo_credits),
      payload_(std::max<std::uint64_t>(1, s.info().fifo.slot_payload)),
      slots_(static_cast<std::uint64_t>(std::max(1, s.info().fifo.slots))),
      first_(s.actor_count(), -1),
      channels_(s.channel_count()) {
  if (options.ranks.empty()) {
    for (int r = 0; r < s.actor_count(); ++r) options.ranks.push_back(r);
  }
  for (int r : options.ranks) {
    first_.at(r) = size();
    for (int c = 0; c < channels_; ++c) streams_.emplace_back(size(), r, c, s.cursor(r, c));
  }
  for (int r : options.ranks) add_dependencies(s, r);
  for (const WalkStream& st : streams_) unfinished_ += st.done() ? 0 : 1;
}

int ScheduleWalk::id_of(int rank, int channel) const {
  return first_[rank] < 0 ? -1 : first_[rank] + channel;
}

void ScheduleWalk::add_dependencies(const Schedule& s, int rank) {
  const std::vector<Dependency> deps = s.dependencies(rank);  // sorted by (channel, op)
  for (std::size_t i = 0; i < deps.size(); ++i) {
    const Dependency& d = deps[i];
    const int after = id_of(rank, d.after_channel);
    streams_[id_of(rank, d.channel)].deps_.push_back({d.op, d.after_op, after, i});
    streams_[after].releases_.emplace_back(d.after_op, i);
  }
  for (int c = 0; c < channels_; ++c) {
    auto& rel = streams_[id_of(rank, c)].releases_;
    std::stable_sort(rel.begin(), rel.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
  }
}

bool ScheduleWalk::round() {
  bool progress = false;
  for (WalkStream& st : streams_) {
    if (!st.done()) progress |= advance(st.id());
  }
  return progress;
}

bool ScheduleWalk::advance(int id) {
  WalkStream& st = streams_[id];
  hooks_.enter(st);
  if (st.wait_ != WalkWait::kNone) {  // a round retries a stream nobody woke
    const auto g = guard();
    park(st, WalkWait::kNone, -1);
  }
  bool progress = false;
  while (!st.done()) {
    const Op& op = st.cursor_.op();
    if (!st.started_ && !start(st, op, progress)) return progress;
    if (!receives(op.kind) && !sends(op.kind)) {
      hooks_.apply_local(st, op);
    } else if (!walk_pieces(st, op, progress)) {
      return progress;
    }
    complete(st, op);
    progress = true;
  }
  return progress;
}

bool ScheduleWalk::start(WalkStream& st, const Op& op, bool& progress) {
  if (!dependencies_met(st, progress)) return false;
  if (credits_) {
    const auto g = guard();  // other threads add connections too
    auto conn = [&](int from, int to) { return &conns_[connection_key(st.channel_, from, to)]; };
    st.in_ = receives(op.kind) ? conn(op.recv_peer, st.rank_) : nullptr;
    st.out_ = sends(op.kind) ? conn(st.rank_, op.send_peer) : nullptr;
  }
  hooks_.begin(st, op);
  st.started_ = true;
  return true;
}

bool ScheduleWalk::dependencies_met(WalkStream& st, bool& progress) {
  while (st.next_dep_ < st.deps_.size() && st.deps_[st.next_dep_].op == st.index()) {
    const WalkStream::Dep& d = st.deps_[st.next_dep_];
    {
      const auto g = guard();
      if (streams_[d.after].done_ops_ <= d.after_op) {
        park(st, WalkWait::kDependency, d.after);
        return false;
      }
    }
    hooks_.depend(st, d.index);
    ++st.next_dep_;
    progress = true;
  }
  return true;
}

// Rules 3-5: piece by piece, each received (if the op receives) and then sent on (if it sends),
// resuming at the piece and half where the stream last had to wait.
bool ScheduleWalk::walk_pieces(WalkStream& st, const Op& op, bool& progress) {
  const std::uint64_t pieces = piece_count(op.bytes, payload_);
  while (st.piece_ < pieces) {
    WalkPiece p;
    p.offset = st.piece_ * payload_;
    p.bytes = static_cast<std::size_t>(std::min(payload_, op.bytes - std::min(p.offset, op.bytes)));
    if (receives(op.kind) && !st.received_) {
      if (!receive(st, op, p)) return false;
      st.received_ = true;
      progress = true;
    }
    if (sends(op.kind) && !send(st, op, p)) return false;
    st.received_ = false;
    ++st.piece_;
    progress = true;
  }
  return true;
}

bool ScheduleWalk::receive(WalkStream& st, const Op& op, WalkPiece piece) {
  const int sender = id_of(op.recv_peer, st.channel_);
  if (credits_) {
    const auto g = guard();
    if (st.in_->posted == st.in_->consumed) {
      st.in_->parked_receiver = st.id_;
      park(st, WalkWait::kData, sender);
      return false;
    }
    piece.seq = st.in_->consumed;
  }
  const bool got = hooks_.receive(st, op, piece);  // without the lock: it moves the bytes
  const auto g = guard();
  if (!got) {
    park(st, WalkWait::kData, sender);
    return false;
  }
  if (credits_) {
    ++st.in_->consumed;
    wake(std::exchange(st.in_->parked_sender, -1), WalkWait::kSlot, st.id_);
  }
  return true;
}

bool ScheduleWalk::send(WalkStream& st, const Op& op, WalkPiece piece) {
  const int receiver = id_of(op.send_peer, st.channel_);
  if (credits_) {
    const auto g = guard();
    if (st.out_->posted - st.out_->consumed >= slots_) {
      st.out_->parked_sender = st.id_;
      park(st, WalkWait::kSlot, receiver);
      return false;
    }
    piece.seq = st.out_->posted;
  }
  const bool sent = hooks_.send(st, op, piece);
  const auto g = guard();
  if (!sent) {
    park(st, WalkWait::kSlot, receiver);
    return false;
  }
  bytes_sent_ += piece.bytes;
  if (credits_) {
    ++st.out_->posted;
    wake(std::exchange(st.out_->parked_receiver, -1), WalkWait::kData, st.id_);
  }
  return true;
}

void ScheduleWalk::complete(WalkStream& st, const Op& op) {
  hooks_.end(st, op);
  while (st.next_release_ < st.releases_.size() &&
         st.releases_[st.next_release_].first == st.index()) {
    hooks_.release(st, st.releases_[st.next_release_].second);
    ++st.next_release_;
  }
  st.cursor_.next();  // `op` is gone from here on
  st.started_ = false;
  st.piece_ = 0;
  const auto g = guard();
  ++st.done_ops_;
  ++ops_;
  if (st.done()) --unfinished_;
  if (st.releases_.empty()) return;  // nobody depends on this channel
  for (int c = 0; c < channels_; ++c) {
    wake(st.id_ - st.channel_ + c, WalkWait::kDependency, st.id_);
  }
}

void ScheduleWalk::park(WalkStream& st, WalkWait wait, int waits_for) {
  st.wait_ = wait;
  st.waits_for_ = waits_for;
}

// Wakes `id` only if it still waits for `by` in that way: a round may have moved a stream on
// since it parked, leaving its old registration behind.
void ScheduleWalk::wake(int id, WalkWait on, int by) {
  if (id < 0) return;
  WalkStream& st = streams_[id];
  if (st.wait_ != on || st.waits_for_ != by) return;
  park(st, WalkWait::kNone, -1);
  hooks_.ready(id);
}

void ScheduleWalk::for_each_stuck(
    const std::function<void(const WalkStream&, std::string_view)>& f) const {
  // Indexed by WalkWait.
  static constexpr const char* kWhy[] = {"made no progress", "waits for data",
                                         "waits for a free slot", "waits for a dependency"};
  for (const WalkStream& st : streams_) {
    if (!st.done()) f(st, kWhy[static_cast<int>(st.wait_)]);
  }
}

std::string ScheduleWalk::stuck_report(std::string_view executor) const {
  constexpr int kMaxListed = 8;
  std::string msg = fmt::format("{}: the schedule cannot finish; stuck:", executor);
  int listed = 0;
  int more = 0;
  for_each_stuck([&](const WalkStream& st, std::string_view why) {
    if (listed == kMaxListed) {
      ++more;
      return;
    }
    msg += fmt::format("{} {} {}", listed == 0 ? "" : ";",
                       detail::op_label(st.rank(), st.channel(), st.index(), st.op()), why);
    ++listed;
  });
  return more > 0 ? fmt::format("{}; and {} more streams", msg, more) : msg;
}

}  // namespace collsim
