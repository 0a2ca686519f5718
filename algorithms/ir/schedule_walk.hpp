// The one walk of a schedule that every executor shares: the CPU, MPI, CUDA and NCCL backends
// and validate()'s deadlock check all run schedule.hpp's execution semantics through it, and
// differ only in how they move bytes.
//
// The walk keeps, per (rank, channel) stream, the op cursor, the op's cross-channel dependencies
// (rule 1), the FIFO piece the op has reached (rules 3-5) and what the stream waits for. With
// FIFO credits on (every rank of the schedule in this walk) it also counts, per connection, the
// pieces posted and consumed: a send waits while `slots` pieces are outstanding, a receive until
// a piece was posted (rules 2-4). Without them (MPI: the peer is another process; NCCL: its own
// buffering) the executor's hooks decide by refusing a piece.
//
// The executor supplies WalkHooks: its memory (`address`, `copy`, `reduce`: the walk applies the
// op kinds with them), `receive` and `send` one piece, `begin` / `end` around every op (op
// timings), `depend` / `release` at cross-channel dependencies (the GPU backends order their
// streams with events there), `ready` when a parked stream can move again. advance(id) runs one
// stream as far as it can and parks it on the one thing it waits for. Executors either advance
// every stream in rounds until a round makes no progress (MPI, CUDA, NCCL) or advance only the
// streams `ready` names (CPU, deadlock check). What is stuck then is named by stuck_report(), never
// left to hang.
//
//   struct Mine final : WalkHooks { ... };   // address, copy, reduce, receive, send
//   Mine hooks;
//   ScheduleWalk walk(s, hooks);
//   while (walk.round()) {}
//   if (!walk.finished()) throw BackendError(walk.stuck_report("my backend"));
//
// Threads: with WalkOptions::lock set, several threads may advance different streams at once.
// The walk then takes that mutex around its shared state (credits, waits, dependencies) and
// calls the hooks without it, except `ready`, which is called with it held.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "algorithms/ir/schedule.hpp"

namespace collsim {

// Pieces an op's transfer is cut into (schedule.hpp rule 3).
inline std::uint64_t piece_count(std::uint64_t bytes, std::uint64_t payload) {
  return bytes == 0 ? 1 : (bytes + payload - 1) / payload;
}

// A connection (channel, sender, receiver) packed into one key (ranks below 2^24).
inline std::uint64_t connection_key(int channel, int from, int to) {
  return (static_cast<std::uint64_t>(channel) << 48) |
         (static_cast<std::uint64_t>(static_cast<std::uint32_t>(from)) << 24) |
         static_cast<std::uint64_t>(static_cast<std::uint32_t>(to));
}

// What a parked stream waits for.
enum class WalkWait { kNone, kData, kSlot, kDependency };

// One piece of an op's transfer: bytes [offset, offset + bytes) of the op.
struct WalkPiece {
  std::uint64_t offset = 0;
  std::size_t bytes = 0;
  // With FIFO credits, the piece's number on its connection (its slot is seq % slots).
  std::uint64_t seq = 0;
};

// One (rank, channel) stream as the walk keeps it; executors read it, the walk changes it.
class WalkStream {
 public:
  WalkStream(int id, int rank, int channel, OpCursor cursor)
      : id_(id), rank_(rank), channel_(channel), cursor_(std::move(cursor)) {}
  int id() const { return id_; }  // index in the walk: streams of a rank are consecutive
  int rank() const { return rank_; }
  int channel() const { return channel_; }
  bool done() const { return cursor_.done(); }
  std::uint64_t index() const { return cursor_.index(); }  // the current op
  const Op& op() const { return cursor_.op(); }            // requires !done()
  WalkWait wait() const { return wait_; }
  // The stream it waits for: the peer for data or a slot, the other channel for a dependency;
  // -1 when that stream is not in this walk.
  int waits_for() const { return waits_for_; }

 private:
  friend class ScheduleWalk;
  // One connection's FIFO credits (schedule.hpp rule 3): pieces posted and consumed so far, and
  // the stream parked on each end (-1: none).
  struct Conn {
    std::uint64_t posted = 0;
    std::uint64_t consumed = 0;
    int parked_sender = -1;
    int parked_receiver = -1;
  };
  struct Dep {
    std::uint64_t op;
    std::uint64_t after_op;
    int after;          // stream id
    std::size_t index;  // in the schedule's dependencies(rank)
  };
  int id_;
  int rank_;
  int channel_;
  OpCursor cursor_;
  std::vector<Dep> deps_;  // of this stream, by op
  std::size_t next_dep_ = 0;
  std::vector<std::pair<std::uint64_t, std::size_t>> releases_;  // (after_op, index), by op
  std::size_t next_release_ = 0;
  bool started_ = false;  // the current op's dependencies are met and begin() was called
  std::uint64_t piece_ = 0;
  bool received_ = false;  // piece `piece_` was received (a fused op has still to send it)
  Conn* in_ = nullptr;     // the current op's connections, with FIFO credits
  Conn* out_ = nullptr;
  std::uint64_t done_ops_ = 0;
  WalkWait wait_ = WalkWait::kNone;
  int waits_for_ = -1;
};

// What an executor supplies: its memory (address, copy, reduce), its transport (receive, send)
// and what it does at the walk's events. `receive` and `send` may refuse a piece (return false)
// while it has not arrived or there is no room; the walk then parks the stream and offers the
// same piece later. With FIFO credits the walk calls them only once the credit is there.
class WalkHooks {
 public:
  virtual ~WalkHooks() = default;

  // Where st.rank() keeps `ref`, and the two operations every op's data work is made of.
  virtual std::byte* address(const WalkStream& st, const BufferRef& ref) = 0;
  virtual void copy(const WalkStream& st, std::byte* dst, const std::byte* src, std::size_t n) = 0;
  virtual void reduce(const WalkStream& st, std::byte* dst, const std::byte* a, const std::byte* b,
                      std::size_t n, bool postop) = 0;

  // Receives `piece` and applies it (apply() below); for a fused op it also keeps the bytes that
  // send() will pass on.
  virtual bool receive(const WalkStream& st, const Op& op, const WalkPiece& piece) = 0;
  // Posts `piece`: the op's source bytes, or for a fused op what receive() kept.
  virtual bool send(const WalkStream& st, const Op& op, const WalkPiece& piece) = 0;

  // Before the walk advances `st` (the GPU backends make its device current).
  virtual void enter(const WalkStream& /*st*/) {}
  // Once per op, when its dependencies are met, before any of its work.
  virtual void begin(const WalkStream& /*st*/, const Op& /*op*/) {}
  // The op completed; st.index() is still its index.
  virtual void end(const WalkStream& /*st*/, const Op& /*op*/) {}
  // `st` passed dependency `index` (of dependencies(st.rank())): what it waited for completed.
  virtual void depend(const WalkStream& /*st*/, std::size_t /*index*/) {}
  // `st` completed the op that dependency `index` waits for; called before anyone can pass it.
  virtual void release(const WalkStream& /*st*/, std::size_t /*index*/) {}
  // Stream `id`, parked, can move again (called with WalkOptions::lock held).
  virtual void ready(int /*id*/) {}

  // What an op does with a received piece whose bytes are at `in` (schedule.hpp's op kinds),
  // through copy() and reduce(). Returns where a fused op's outgoing bytes are: `scratch` (room
  // for the piece) for recv-reduce-send, the op's dst for the others; nullptr if it sends none.
  const std::byte* apply(const WalkStream& st, const Op& op, const WalkPiece& piece,
                         const std::byte* in, std::byte* scratch);
  // A copy or reduce op, all of it.
  void apply_local(const WalkStream& st, const Op& op);
};

struct WalkOptions {
  std::vector<int> ranks;      // the actors to walk; empty: every rank and switch actor
  bool fifo_credits = true;    // count FIFO credits: needs every rank in the walk
  std::mutex* lock = nullptr;  // set when several threads call advance()
};

class ScheduleWalk {
 public:
  ScheduleWalk(const Schedule& s, WalkHooks& hooks, WalkOptions options = {});
  ScheduleWalk(const ScheduleWalk&) = delete;
  ScheduleWalk& operator=(const ScheduleWalk&) = delete;

  int size() const { return static_cast<int>(streams_.size()); }
  const WalkStream& stream(int id) const { return streams_[id]; }

  // Runs stream `id` until it finishes or must wait; true if it did anything.
  bool advance(int id);
  // Advances every unfinished stream once; true if any did anything.
  bool round();

  // With WalkOptions::lock, read these with it held (or after the threads stopped).
  bool finished() const { return unfinished_ == 0; }
  std::uint64_t ops() const { return ops_; }
  std::uint64_t bytes_sent() const { return bytes_sent_; }

  // Every unfinished stream in id order, with what it waits for ("waits for data", "waits for a
  // free slot", "waits for a dependency"; "made no progress" when it is not parked).
  void for_each_stuck(const std::function<void(const WalkStream&, std::string_view why)>& f) const;
  // "<executor>: the schedule cannot finish; stuck: rank 0 channel 0 op 8 (send to rank 1,
  // 8 B) waits for a free slot; ...; and 3 more streams": the first 8 stuck streams.
  std::string stuck_report(std::string_view executor) const;

 private:
  // WalkOptions::lock held, if there is one, for a section touching shared state.
  std::unique_lock<std::mutex> guard() const {
    return lock_ ? std::unique_lock<std::mutex>(*lock_) : std::unique_lock<std::mutex>();
  }
  int id_of(int rank, int channel) const;
  void add_dependencies(const Schedule& s, int rank);
  bool start(WalkStream& st, const Op& op, bool& progress);
  bool dependencies_met(WalkStream& st, bool& progress);
  bool walk_pieces(WalkStream& st, const Op& op, bool& progress);
  bool receive(WalkStream& st, const Op& op, WalkPiece piece);
  bool send(WalkStream& st, const Op& op, WalkPiece piece);
  void complete(WalkStream& st, const Op& op);
  // These two require the lock.
  static void park(WalkStream& st, WalkWait wait, int waits_for);
  void wake(int id, WalkWait on, int by);

  WalkHooks& hooks_;
  std::mutex* lock_;
  bool credits_;
  std::uint64_t payload_;
  std::uint64_t slots_;
  std::vector<int> first_;  // per rank of the schedule: its first stream's id, -1 if not walked
  int channels_;
  std::vector<WalkStream> streams_;
  std::unordered_map<std::uint64_t, WalkStream::Conn> conns_;
  int unfinished_ = 0;
  std::uint64_t ops_ = 0;
  std::uint64_t bytes_sent_ = 0;
};

}  // namespace collsim
