#include "backends/cpu_backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>

#include "algorithms/ir/schedule_walk.hpp"
#include "backends/reduce_kernels.hpp"
#include "topology/error.hpp"

namespace collsim {

namespace {

using Clock = std::chrono::steady_clock;
using Piece = std::vector<std::byte>;

Time elapsed(Clock::time_point a, Clock::time_point b) {
  return ns(
      static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count()));
}

// A connection's FIFO: one buffer per slot. The walk's credits order the two ends (a slot is
// written only after its previous piece was consumed, read only after it was posted), so the
// buffers need no lock of their own, and they circulate instead of being allocated per piece:
// a send fills or swaps in a slot, a receive swaps the piece out for its previous buffer.
using Slots = std::vector<Piece>;

// What a stream keeps beyond the walk's state; touched only by the thread advancing it.
struct StreamData {
  Piece piece;                          // the piece received last
  const std::byte* outgoing = nullptr;  // what a fused op passes on: in `piece`, or its dst
  Slots* in = nullptr;
  Slots* out = nullptr;
  bool started = false;
  Clock::time_point first;
  Clock::time_point last;
  Clock::time_point op_start;
  std::vector<OpTiming> timings;  // with RunOptions::record_ops
};

class CpuRun final : public WalkHooks {
 public:
  CpuRun(const Schedule& s, HostBuffers& buffers, const RunOptions& o)
      : s_(s),
        buffers_(buffers),
        options_(o),
        slots_(static_cast<std::size_t>(std::max(1, s.info().fifo.slots))),
        divisor_(s.info().redop == ReduceOp::kAvg ? s.rank_count() : 0),
        walk_(s, *this, {.ranks = {}, .fifo_credits = true, .lock = &m_}),
        data_(walk_.size()) {
    for (int r = 0; r < s.actor_count(); ++r) {  // switch actors reduce in their scratch
      scratch_.emplace_back(s.buffer_bytes(r, BufferKind::kScratch));
    }
    for (int id = 0; id < walk_.size(); ++id) queue_.push_back(id);
  }

  RunResult run() {
    start_ = Clock::now();
    int threads = options_.threads > 0 ? options_.threads
                                       : static_cast<int>(std::thread::hardware_concurrency());
    threads = std::clamp(threads, 1, std::max(1, walk_.size()));
    last_progress_ = start_;
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back([this] { work(); });
    work();
    for (auto& t : pool) t.join();
    if (error_) std::rethrow_exception(error_);
    if (!walk_.finished()) throw BackendError(walk_.stuck_report("cpu backend"));
    return result();
  }

 private:
  RunResult result() {
    RunResult res;
    res.wall = elapsed(start_, Clock::now());
    res.rank_time.assign(s_.rank_count(), Time());
    std::vector<Clock::time_point> first(s_.rank_count(), Clock::time_point::max());
    std::vector<Clock::time_point> last(s_.rank_count(), Clock::time_point::min());
    for (int id = 0; id < walk_.size(); ++id) {
      const StreamData& d = data_[id];
      const int rank = walk_.stream(id).rank();
      if (!d.started || s_.is_switch(rank)) continue;
      first[rank] = std::min(first[rank], d.first);
      last[rank] = std::max(last[rank], d.last);
    }
    for (int r = 0; r < s_.rank_count(); ++r) {
      if (first[r] != Clock::time_point::max()) res.rank_time[r] = elapsed(first[r], last[r]);
    }
    res.ops = walk_.ops();
    res.bytes_sent = walk_.bytes_sent();
    for (StreamData& d : data_) {  // streams are in (rank, channel) order, ops in index order
      res.op_timings.insert(res.op_timings.end(), d.timings.begin(), d.timings.end());
    }
    return res;
  }

  // A worker: advances the streams the walk declares ready until none is left and none runs
  // (finished, or stuck), or until nothing moved for RunOptions::stall_timeout.
  void work() {
    std::unique_lock<std::mutex> lk(m_);
    while (true) {
      while (queue_.empty() && !stop_) {
        if (active_ == 0) {  // nothing runs and nothing can: finished or stuck
          stop_ = true;
          cv_.notify_all();
          break;
        }
        if (cv_.wait_for(lk, std::chrono::milliseconds(200)) == std::cv_status::timeout &&
            Clock::now() - last_progress_ > options_.stall_timeout) {
          stop_ = true;
          cv_.notify_all();
        }
      }
      if (stop_) return;
      const int id = queue_.front();
      queue_.pop_front();
      ++active_;
      lk.unlock();
      try {
        walk_.advance(id);
      } catch (...) {
        lk.lock();
        if (!error_) error_ = std::current_exception();
        stop_ = true;
        --active_;
        cv_.notify_all();
        return;
      }
      lk.lock();
      --active_;
      last_progress_ = Clock::now();
    }
  }

  // The walk calls this with m_ held.
  void ready(int id) override {
    queue_.push_back(id);
    cv_.notify_one();
  }

  std::byte* address(const WalkStream& st, const BufferRef& ref) override {
    switch (ref.buffer) {
      case BufferKind::kInput:
        return buffers_.input[st.rank()].data() + ref.offset;
      case BufferKind::kOutput:
        return buffers_.output[st.rank()].data() + ref.offset;
      case BufferKind::kScratch:
        return scratch_[st.rank()].data() + ref.offset;
    }
    return nullptr;
  }

  void copy(const WalkStream&, std::byte* dst, const std::byte* src, std::size_t n) override {
    if (n > 0) std::memmove(dst, src, n);
  }

  void reduce(const WalkStream&, std::byte* dst, const std::byte* a, const std::byte* b,
              std::size_t n, bool postop) override {
    collsim::reduce(s_.info().dtype, s_.info().redop, dst, a, b, n, postop ? divisor_ : 0);
  }

  Slots* fifo(int channel, int from, int to) {
    std::lock_guard<std::mutex> lk(m_);  // either end may be the first to ask
    Slots& f = fifos_[connection_key(channel, from, to)];
    if (f.empty()) f.resize(slots_);
    return &f;
  }

  void begin(const WalkStream& st, const Op& op) override {
    StreamData& d = data_[st.id()];
    const auto now = Clock::now();
    if (!d.started) {
      d.started = true;
      d.first = now;
    }
    d.op_start = now;
    d.in = receives(op.kind) ? fifo(st.channel(), op.recv_peer, st.rank()) : nullptr;
    d.out = sends(op.kind) ? fifo(st.channel(), st.rank(), op.send_peer) : nullptr;
  }

  void end(const WalkStream& st, const Op& op) override {
    StreamData& d = data_[st.id()];
    d.last = Clock::now();
    if (options_.record_ops) {
      d.timings.push_back({st.rank(), st.channel(), st.index(), op, elapsed(start_, d.op_start),
                           elapsed(start_, d.last)});
    }
  }

  // Takes the piece out of its slot and applies it (recv-reduce-send in place).
  bool receive(const WalkStream& st, const Op& op, const WalkPiece& p) override {
    StreamData& d = data_[st.id()];
    d.piece.swap((*d.in)[p.seq % slots_]);
    d.outgoing = apply(st, op, p, d.piece.data(), d.piece.data());
    // recv-copy-send passes on the piece as it came: its buffer travels on, no copy of dst.
    if (op.kind == OpKind::kRecvCopySend) d.outgoing = d.piece.data();
    return true;
  }

  bool send(const WalkStream& st, const Op& op, const WalkPiece& p) override {
    StreamData& d = data_[st.id()];
    Piece& slot = (*d.out)[p.seq % slots_];
    if (receives(op.kind) && d.outgoing == d.piece.data()) {
      slot.swap(d.piece);
    } else {
      const std::byte* from = receives(op.kind) ? d.outgoing : address(st, op.src) + p.offset;
      slot.assign(from, from + p.bytes);
    }
    return true;
  }

  const Schedule& s_;
  HostBuffers& buffers_;
  RunOptions options_;
  std::size_t slots_;
  int divisor_;
  std::vector<Piece> scratch_;

  // Guards the walk's shared state and everything below it.
  std::mutex m_;
  ScheduleWalk walk_;
  std::vector<StreamData> data_;  // by stream id
  std::unordered_map<std::uint64_t, Slots> fifos_;
  std::condition_variable cv_;
  std::deque<int> queue_;
  int active_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
  Clock::time_point last_progress_;
  Clock::time_point start_;
};

}  // namespace

RunResult CpuBackend::run(const Schedule& s, HostBuffers& buffers, const RunOptions& options) {
  check_buffers(s, buffers);
  CpuRun run(s, buffers, options);
  return run.run();
}

}  // namespace collsim
