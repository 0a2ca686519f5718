// The abstract run behind validate()'s deadlock check: the schedule walk (schedule_walk.hpp) with
// piece counters instead of data. Every stream advances as far as it can; a stream that cannot
// advance parks on the one thing it waits for (a piece on an incoming connection, a free slot on
// an outgoing one, or another channel's progress) and is woken when that changes. The
// processes are deterministic and every wait is on one named event, so (as for Kahn process
// networks) whether the run completes does not depend on the order streams are advanced in.
#include <fmt/format.h>

#include <deque>
#include <vector>

#include "algorithms/ir/schedule_walk.hpp"
#include "algorithms/ir/validate_detail.hpp"
#include "topology/error.hpp"

namespace collsim::detail {

namespace {

class AbstractRun final : public WalkHooks {
 public:
  explicit AbstractRun(const Schedule& s) : walk_(s, *this) {
    for (int id = 0; id < walk_.size(); ++id) queue_.push_back(id);
  }

  void run() {
    while (!queue_.empty()) {
      const int id = queue_.front();
      queue_.pop_front();
      walk_.advance(id);
    }
    for (int id = 0; id < walk_.size(); ++id) {
      if (!walk_.stream(id).done()) report(id);
    }
  }

 private:
  // No data: only the walk's piece counts move.
  std::byte* address(const WalkStream&, const BufferRef&) override { return nullptr; }
  void copy(const WalkStream&, std::byte*, const std::byte*, std::size_t) override {}
  void reduce(const WalkStream&, std::byte*, const std::byte*, const std::byte*, std::size_t,
              bool) override {}
  bool receive(const WalkStream&, const Op&, const WalkPiece&) override { return true; }
  bool send(const WalkStream&, const Op&, const WalkPiece&) override { return true; }
  void ready(int id) override { queue_.push_back(id); }

  std::string label(int id) const {
    const WalkStream& st = walk_.stream(id);
    if (st.done()) return fmt::format("rank {} channel {} (finished)", st.rank(), st.channel());
    return op_label(st.rank(), st.channel(), st.index(), st.op());
  }

  static const char* verb(WalkWait w) {
    switch (w) {
      case WalkWait::kData:
        return "waits for data from ";
      case WalkWait::kSlot:
        return "waits for a free slot at ";
      case WalkWait::kDependency:
        return "waits (dependency) for ";
      case WalkWait::kNone:
        break;
    }
    return "waits for ";
  }

  // Follows the waits from a stuck stream until one repeats, and names that cycle.
  [[noreturn]] void report(int start) const {
    std::vector<int> seen_at(walk_.size(), -1);
    std::vector<int> path;
    int id = start;
    while (id >= 0 && seen_at[id] < 0 && !walk_.stream(id).done()) {
      seen_at[id] = static_cast<int>(path.size());
      path.push_back(id);
      id = walk_.stream(id).waits_for();
    }
    const std::size_t from = (id >= 0 && seen_at[id] >= 0) ? seen_at[id] : 0;
    std::string msg = "schedule deadlocks: " + label(path[from]);
    for (std::size_t k = from; k < path.size(); ++k) {
      msg += k == from ? " " : ", which ";
      msg += verb(walk_.stream(path[k]).wait());
      if (k + 1 < path.size()) {
        msg += label(path[k + 1]);
      } else if (id >= 0) {
        const WalkStream& st = walk_.stream(id);
        msg += fmt::format("rank {} channel {} op {}", st.rank(), st.channel(), st.index());
      } else {
        msg += "nothing";
      }
    }
    throw ScheduleError(msg);
  }

  ScheduleWalk walk_;
  std::deque<int> queue_;
};

}  // namespace

void check_deadlock(const Schedule& s) {
  AbstractRun run(s);
  run.run();
}

}  // namespace collsim::detail
