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

#include "backends/piece_walk.hpp"
#include "backends/reduce_kernels.hpp"
#include "topology/error.hpp"

namespace collsim {

namespace {

using Clock = std::chrono::steady_clock;
using Piece = std::vector<std::byte>;

struct Conn {
  std::deque<Piece> fifo;
  int parked_sender = -1;
  int parked_receiver = -1;
};

enum class Wait { kNone, kRecv, kSend, kDependency };

struct Stream {
  Stream(int r, int c, OpCursor k) : rank(r), channel(c), cursor(std::move(k)) {}
  int rank;
  int channel;
  OpCursor cursor;
  std::vector<Dependency> deps;  // of this channel, sorted by op
  std::size_t next_dep = 0;
  // Progress inside the current op.
  std::uint64_t piece = 0;
  bool received = false;  // piece `piece` received and applied; its outgoing copy is in `out`
  Piece in;
  Piece out;
  Conn* in_conn = nullptr;
  Conn* out_conn = nullptr;
  // Shared state, guarded by the run's mutex.
  std::uint64_t done_ops = 0;
  bool finished = false;
  Wait wait = Wait::kNone;
  std::vector<int> dependants;
  // Worker-local timing.
  bool started = false;
  Clock::time_point first;
  Clock::time_point last;
  // With RunOptions::record_ops.
  bool op_started = false;
  Clock::time_point op_start;
  std::vector<OpTiming> timings;
};

// Piece buffers are recycled per worker thread: a buffer travels from its sender through the
// FIFO to its last receiver, whose next receive hands it back here. This keeps large pieces from
// being allocated (and page-faulted) over and over.
thread_local std::vector<Piece> t_pool;

Piece take_piece() {
  if (t_pool.empty()) return Piece();
  Piece p = std::move(t_pool.back());
  t_pool.pop_back();
  return p;
}

void give_piece(Piece&& p) {
  if (p.capacity() > 0 && t_pool.size() < 64) t_pool.push_back(std::move(p));
}

class CpuRun {
 public:
  CpuRun(const Schedule& s, HostBuffers& buffers, const RunOptions& o)
      : s_(s), buffers_(buffers), options_(o) {
    payload_ = std::max<std::uint64_t>(1, s.info().fifo.slot_payload);
    slots_ = static_cast<std::size_t>(std::max(1, s.info().fifo.slots));
    divisor_ = s.info().redop == ReduceOp::kAvg ? s.rank_count() : 0;
    for (int r = 0; r < s.rank_count(); ++r) {
      scratch_.emplace_back(s.buffer_bytes(r, BufferKind::kScratch));
      const std::vector<Dependency> deps = s.dependencies(r);
      for (int c = 0; c < s.channel_count(); ++c) {
        Stream st(r, c, s.cursor(r, c));
        for (const Dependency& d : deps) {
          if (d.channel == c) st.deps.push_back(d);
        }
        streams_.push_back(std::move(st));
      }
    }
    for (std::size_t i = 0; i < streams_.size(); ++i) queue_.push_back(static_cast<int>(i));
    unfinished_ = static_cast<int>(streams_.size());
  }

  RunResult run() {
    const auto start = Clock::now();
    start_ = start;
    int threads = options_.threads > 0 ? options_.threads
                                       : static_cast<int>(std::thread::hardware_concurrency());
    threads = std::clamp(threads, 1, std::max(1, static_cast<int>(streams_.size())));
    last_progress_ = start;
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back([this] { work(); });
    work();
    for (auto& t : pool) t.join();
    if (error_) std::rethrow_exception(error_);
    if (unfinished_ > 0) throw BackendError(stuck_message());
    RunResult res;
    res.wall = elapsed(start, Clock::now());
    res.rank_time.assign(s_.rank_count(), Time());
    std::vector<Clock::time_point> first(s_.rank_count(), Clock::time_point::max());
    std::vector<Clock::time_point> last(s_.rank_count(), Clock::time_point::min());
    for (const Stream& st : streams_) {
      if (!st.started) continue;
      first[st.rank] = std::min(first[st.rank], st.first);
      last[st.rank] = std::max(last[st.rank], st.last);
    }
    for (int r = 0; r < s_.rank_count(); ++r) {
      if (first[r] != Clock::time_point::max()) res.rank_time[r] = elapsed(first[r], last[r]);
    }
    res.ops = ops_;
    res.bytes_sent = bytes_sent_;
    if (options_.record_ops) {
      for (Stream& st : streams_) {  // streams are in (rank, channel) order, ops in index order
        res.op_timings.insert(res.op_timings.end(), st.timings.begin(), st.timings.end());
      }
    }
    return res;
  }

 private:
  static Time elapsed(Clock::time_point a, Clock::time_point b) {
    return ns(
        static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count()));
  }

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
        advance(id);
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

  // Requires m_ held.
  void wake(int id) {
    if (id < 0) return;
    Stream& st = streams_[id];
    if (st.wait == Wait::kNone) return;
    st.wait = Wait::kNone;
    queue_.push_back(id);
    cv_.notify_one();
  }

  std::byte* ptr(int rank, const BufferRef& ref) {
    switch (ref.buffer) {
      case BufferKind::kInput:
        return buffers_.input[rank].data() + ref.offset;
      case BufferKind::kOutput:
        return buffers_.output[rank].data() + ref.offset;
      case BufferKind::kScratch:
        return scratch_[rank].data() + ref.offset;
    }
    return nullptr;
  }

  void combine(std::byte* dst, const std::byte* a, const std::byte* b, std::size_t n, bool post) {
    reduce(s_.info().dtype, s_.info().redop, dst, a, b, n, post ? divisor_ : 0);
  }

  // Applies received piece `st.in` (bytes [off, off+len) of the op) and prepares `st.out`.
  void apply(Stream& st, const Op& op, std::uint64_t off, std::size_t len) {
    std::byte* d = writes_dst(op.kind) ? ptr(st.rank, op.dst) + off : nullptr;
    const std::byte* src = reads_src(op.kind) ? ptr(st.rank, op.src) + off : nullptr;
    switch (op.kind) {
      case OpKind::kRecv:
      case OpKind::kRecvCopySend:
        if (len > 0) std::memcpy(d, st.in.data(), len);
        break;
      case OpKind::kRecvReduce:
        combine(d, d, st.in.data(), len, op.postop);
        break;
      case OpKind::kRecvReduceCopy:
      case OpKind::kRecvReduceCopySend:
        combine(d, src, st.in.data(), len, op.postop);
        if (op.kind == OpKind::kRecvReduceCopySend && len > 0) std::memcpy(st.in.data(), d, len);
        break;
      case OpKind::kRecvReduceSend:
        combine(st.in.data(), src, st.in.data(), len, op.postop);
        break;
      default:
        break;
    }
    if (sends(op.kind)) st.out.swap(st.in);
  }

  void local(Stream& st, const Op& op) {
    std::byte* d = ptr(st.rank, op.dst);
    const std::byte* src = ptr(st.rank, op.src);
    if (op.kind == OpKind::kCopy) {
      if (op.bytes > 0) std::memmove(d, src, op.bytes);
    } else {
      combine(d, d, src, op.bytes, op.postop);
    }
  }

  // Runs stream `id` until it finishes or parks. Called without m_ held.
  void advance(int id) {
    Stream& st = streams_[id];
    if (!st.started && !st.cursor.done()) {
      st.started = true;
      st.first = Clock::now();
    }
    while (!st.cursor.done()) {
      const Op& op = st.cursor.op();
      const std::uint64_t index = st.cursor.index();
      if (st.piece == 0 && !st.received && st.next_dep < st.deps.size() &&
          st.deps[st.next_dep].op == index) {
        std::lock_guard<std::mutex> lk(m_);
        while (st.next_dep < st.deps.size() && st.deps[st.next_dep].op == index) {
          const Dependency& d = st.deps[st.next_dep];
          Stream& target = streams_[st.rank * s_.channel_count() + d.after_channel];
          if (target.done_ops <= d.after_op) {
            st.wait = Wait::kDependency;
            target.dependants.push_back(id);
            return;
          }
          ++st.next_dep;
        }
      }
      if (options_.record_ops && !st.op_started) {
        st.op_started = true;
        st.op_start = Clock::now();
      }
      if (!receives(op.kind) && !sends(op.kind)) {
        local(st, op);
      } else {
        if (st.piece == 0 && !st.received) {
          std::lock_guard<std::mutex> lk(m_);
          st.in_conn =
              receives(op.kind) ? &conns_[key(st.channel, op.recv_peer, st.rank)] : nullptr;
          st.out_conn = sends(op.kind) ? &conns_[key(st.channel, st.rank, op.send_peer)] : nullptr;
        }
        const std::uint64_t pieces = piece_count(op.bytes, payload_);
        while (st.piece < pieces) {
          const std::uint64_t off = st.piece * payload_;
          const std::size_t len =
              static_cast<std::size_t>(std::min(payload_, op.bytes - std::min(off, op.bytes)));
          if (!st.received) {
            if (receives(op.kind)) {
              {
                std::lock_guard<std::mutex> lk(m_);
                Conn& in = *st.in_conn;
                if (in.fifo.empty()) {
                  in.parked_receiver = id;
                  st.wait = Wait::kRecv;
                  return;
                }
                Piece old = std::exchange(st.in, std::move(in.fifo.front()));
                in.fifo.pop_front();
                give_piece(std::move(old));
                wake(std::exchange(in.parked_sender, -1));
              }
              apply(st, op, off, len);
            } else {
              st.out = take_piece();
              st.out.assign(ptr(st.rank, op.src) + off, ptr(st.rank, op.src) + off + len);
            }
            st.received = true;
          }
          if (sends(op.kind)) {
            std::lock_guard<std::mutex> lk(m_);
            Conn& out = *st.out_conn;
            if (out.fifo.size() >= slots_) {
              out.parked_sender = id;
              st.wait = Wait::kSend;
              return;
            }
            out.fifo.push_back(std::move(st.out));
            st.out = Piece();
            bytes_sent_ += len;
            wake(std::exchange(out.parked_receiver, -1));
          }
          st.received = false;
          ++st.piece;
        }
      }
      st.piece = 0;
      st.received = false;
      st.last = Clock::now();
      if (options_.record_ops) {
        st.timings.push_back({st.rank, st.channel, index, op, elapsed(start_, st.op_start),
                              elapsed(start_, st.last)});
        st.op_started = false;
      }
      st.cursor.next();
      std::lock_guard<std::mutex> lk(m_);
      ++st.done_ops;
      ++ops_;
      for (int d : st.dependants) wake(d);
      st.dependants.clear();
    }
    std::lock_guard<std::mutex> lk(m_);
    st.finished = true;
    --unfinished_;
  }

  static std::uint64_t key(int channel, int from, int to) {
    return (static_cast<std::uint64_t>(channel) << 48) |
           (static_cast<std::uint64_t>(static_cast<std::uint32_t>(from)) << 24) |
           static_cast<std::uint64_t>(static_cast<std::uint32_t>(to));
  }

  std::string stuck_message() const {
    StuckReport report("cpu");
    for (const Stream& st : streams_) {
      if (st.finished) continue;
      const char* why = st.wait == Wait::kRecv         ? "waits for data"
                        : st.wait == Wait::kSend       ? "waits for a free slot"
                        : st.wait == Wait::kDependency ? "waits for a dependency"
                                                       : "made no progress";
      report.add(st.rank, st.channel, st.cursor.index(), st.cursor.op(), why);
    }
    return report.str();
  }

  const Schedule& s_;
  HostBuffers& buffers_;
  RunOptions options_;
  std::uint64_t payload_ = 1;
  std::size_t slots_ = 8;
  int divisor_ = 0;
  std::vector<Piece> scratch_;
  std::vector<Stream> streams_;

  std::mutex m_;
  std::condition_variable cv_;
  std::deque<int> queue_;
  std::unordered_map<std::uint64_t, Conn> conns_;
  int active_ = 0;
  int unfinished_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
  Clock::time_point last_progress_;
  Clock::time_point start_;
  std::uint64_t ops_ = 0;
  std::uint64_t bytes_sent_ = 0;
};

}  // namespace

RunResult CpuBackend::run(const Schedule& s, HostBuffers& buffers, const RunOptions& options) {
  check_buffers(s, buffers);
  CpuRun run(s, buffers, options);
  return run.run();
}

}  // namespace collsim
