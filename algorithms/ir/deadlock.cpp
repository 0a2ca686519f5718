// The abstract run behind validate()'s deadlock check: the execution semantics of schedule.hpp
// with piece counters instead of data. Every stream advances as far as it can; a stream that
// cannot advance parks on the one thing it waits for (a piece on an incoming connection, a free
// slot on an outgoing one, or another channel's progress) and is woken when that changes. The
// processes are deterministic and every wait is on one named event, so (as for Kahn process
// networks) whether the run completes does not depend on the order streams are advanced in.
#include <fmt/format.h>

#include <deque>
#include <unordered_map>
#include <vector>

#include "algorithms/ir/validate_detail.hpp"
#include "topology/error.hpp"

namespace collsim::detail {

namespace {

enum class Wait { kNone, kRecv, kSend, kDependency };

struct Conn {
  std::uint64_t posted = 0;
  std::uint64_t consumed = 0;
  int parked_sender = -1;
  int parked_receiver = -1;
};

struct Stream {
  Stream(int r, int c, OpCursor k) : rank(r), channel(c), cursor(std::move(k)) {}
  int rank = 0;
  int channel = 0;
  OpCursor cursor;
  std::vector<Dependency> deps;  // of this channel, sorted by op
  std::size_t next_dep = 0;
  std::uint64_t piece = 0;
  bool recv_done = false;  // of the current piece (fused ops)
  bool finished = false;
  Wait wait = Wait::kNone;
  int waits_for = -1;           // stream id
  std::vector<int> dependants;  // streams parked on this stream's progress
};

class AbstractRun {
 public:
  explicit AbstractRun(const Schedule& s) : s_(s), slots_(s.info().fifo.slots) {
    payload_ = s.info().fifo.slot_payload == 0 ? 1 : s.info().fifo.slot_payload;
    const int channels = s.channel_count();
    for (int r = 0; r < s.rank_count(); ++r) {
      const std::vector<Dependency> deps = s.dependencies(r);
      for (int c = 0; c < channels; ++c) {
        Stream st(r, c, s.cursor(r, c));
        for (const Dependency& d : deps) {
          if (d.channel == c) st.deps.push_back(d);
        }
        streams_.push_back(std::move(st));
        queue_.push_back(static_cast<int>(streams_.size()) - 1);
      }
    }
  }

  void run() {
    while (!queue_.empty()) {
      const int id = queue_.front();
      queue_.pop_front();
      advance(id);
    }
    for (std::size_t i = 0; i < streams_.size(); ++i) {
      if (!streams_[i].finished) report(static_cast<int>(i));
    }
  }

 private:
  int id_of(int rank, int channel) const { return rank * s_.channel_count() + channel; }

  Conn& conn(int channel, int from, int to) { return conns_[connection_key(channel, from, to)]; }

  void wake(int id) {
    Stream& st = streams_[id];
    if (st.wait == Wait::kNone) return;
    st.wait = Wait::kNone;
    queue_.push_back(id);
  }

  void park(int id, Wait w, int target) {
    streams_[id].wait = w;
    streams_[id].waits_for = target;
  }

  void advance(int id) {
    Stream& st = streams_[id];
    while (!st.cursor.done()) {
      const Op& op = st.cursor.op();
      const std::uint64_t index = st.cursor.index();
      // Dependencies of this op.
      while (st.next_dep < st.deps.size() && st.deps[st.next_dep].op == index) {
        const Dependency& d = st.deps[st.next_dep];
        const int target = id_of(st.rank, d.after_channel);
        if (streams_[target].cursor.index() <= d.after_op) {
          park(id, Wait::kDependency, target);
          streams_[target].dependants.push_back(id);
          return;
        }
        ++st.next_dep;
      }
      const std::uint64_t pieces = piece_count(op.bytes, payload_);
      while (st.piece < pieces && (receives(op.kind) || sends(op.kind))) {
        if (receives(op.kind) && !st.recv_done) {
          Conn& in = conn(st.channel, op.recv_peer, st.rank);
          if (in.posted == in.consumed) {
            in.parked_receiver = id;
            park(id, Wait::kRecv, id_of(op.recv_peer, st.channel));
            return;
          }
          ++in.consumed;
          if (in.parked_sender >= 0) {
            wake(in.parked_sender);
            in.parked_sender = -1;
          }
          st.recv_done = true;
        }
        if (sends(op.kind)) {
          Conn& out = conn(st.channel, st.rank, op.send_peer);
          if (out.posted - out.consumed >= static_cast<std::uint64_t>(slots_)) {
            out.parked_sender = id;
            park(id, Wait::kSend, id_of(op.send_peer, st.channel));
            return;
          }
          ++out.posted;
          if (out.parked_receiver >= 0) {
            wake(out.parked_receiver);
            out.parked_receiver = -1;
          }
        }
        st.recv_done = false;
        ++st.piece;
      }
      st.piece = 0;
      st.recv_done = false;
      st.cursor.next();
      for (int d : st.dependants) wake(d);
      st.dependants.clear();
    }
    st.finished = true;
  }

  std::string label(int id) const {
    const Stream& st = streams_[id];
    if (st.cursor.done()) {
      return fmt::format("rank {} channel {} (finished)", st.rank, st.channel);
    }
    return op_label(st.rank, st.channel, st.cursor.index(), st.cursor.op());
  }

  // Follows the waits from a stuck stream until one repeats, and names that cycle.
  [[noreturn]] void report(int start) const {
    std::vector<int> seen_at(streams_.size(), -1);
    std::vector<int> path;
    int id = start;
    while (id >= 0 && seen_at[id] < 0 && !streams_[id].finished) {
      seen_at[id] = static_cast<int>(path.size());
      path.push_back(id);
      id = streams_[id].waits_for;
    }
    const std::size_t from = (id >= 0 && seen_at[id] >= 0) ? seen_at[id] : 0;
    std::string msg = "schedule deadlocks: " + label(path[from]);
    for (std::size_t k = from; k < path.size(); ++k) {
      msg += k == from ? " " : ", which ";
      switch (streams_[path[k]].wait) {
        case Wait::kRecv:
          msg += "waits for data from ";
          break;
        case Wait::kSend:
          msg += "waits for a free slot at ";
          break;
        case Wait::kDependency:
          msg += "waits (dependency) for ";
          break;
        case Wait::kNone:
          msg += "waits for ";
          break;
      }
      if (k + 1 < path.size()) {
        msg += label(path[k + 1]);
      } else if (id >= 0) {
        const Stream& st = streams_[id];
        msg += fmt::format("rank {} channel {} op {}", st.rank, st.channel, st.cursor.index());
      } else {
        msg += "nothing";
      }
    }
    throw ScheduleError(msg);
  }

  const Schedule& s_;
  int slots_;
  std::uint64_t payload_;
  std::vector<Stream> streams_;
  std::deque<int> queue_;
  std::unordered_map<std::uint64_t, Conn> conns_;
};

}  // namespace

void check_deadlock(const Schedule& s) {
  AbstractRun run(s);
  run.run();
}

}  // namespace collsim::detail
