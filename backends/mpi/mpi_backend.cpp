#include "backends/mpi/mpi_backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <thread>
#include <utility>

#include "algorithms/ir/schedule_walk.hpp"
#include "backends/mpi/mpi_world.hpp"
#include "backends/reduce_kernels.hpp"
#include "topology/error.hpp"

namespace collsim {

namespace {

using Clock = std::chrono::steady_clock;

Time elapsed(Clock::time_point a, Clock::time_point b) {
  return ns(
      static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count()));
}

// Receiving end of connection (channel, from -> this rank): R posted receives into slot buffers.
struct InConn {
  int from = 0;
  int channel = 0;
  std::uint64_t total = 0;  // pieces in one run
  std::uint64_t posted = 0;
  std::uint64_t consumed = 0;
  std::vector<std::vector<std::byte>> slots = {};
  std::vector<MPI_Request> req = {};
};

// Sending end (channel, this rank -> to): at most S unmatched MPI_Issend, from staging buffers.
struct OutConn {
  int to = 0;
  int channel = 0;
  std::uint64_t posted = 0;
  std::uint64_t matched = 0;
  std::vector<std::vector<std::byte>> staging = {};
  std::vector<MPI_Request> req = {};
};

}  // namespace

struct MpiBackend::Plan {
  std::shared_ptr<const OpSource> source;  // held, so that a fresh schedule never aliases it
  ScheduleInfo info;
  int rank = 0;
  int recv_window = 0;  // R
  int send_window = 1;  // S
  std::vector<InConn> in;
  std::vector<OutConn> out;
  std::map<std::pair<int, int>, int> in_index;   // (channel, from) -> in
  std::map<std::pair<int, int>, int> out_index;  // (channel, to) -> out
  std::vector<std::byte> scratch;

  bool fits(const Schedule& s, int r) const {
    return source == s.source() && rank == r && info.ranks == s.info().ranks &&
           info.channels == s.info().channels && info.count == s.info().count &&
           info.fifo.slot_payload == s.info().fifo.slot_payload &&
           info.fifo.slots == s.info().fifo.slots;
  }
};

namespace {

std::unique_ptr<MpiBackend::Plan> make_plan(const Schedule& s, int rank) {
  auto p = std::make_unique<MpiBackend::Plan>();
  p->source = s.source();
  p->info = s.info();
  p->rank = rank;
  const int slots = std::max(1, s.info().fifo.slots);
  p->recv_window = slots / 2;
  p->send_window = slots - p->recv_window;
  const std::uint64_t payload = std::max<std::uint64_t>(1, s.info().fifo.slot_payload);
  std::map<std::pair<int, int>, std::uint64_t> in_max, out_max;
  for (int c = 0; c < s.channel_count(); ++c) {
    for (OpCursor k = s.cursor(rank, c); !k.done(); k.next()) {
      const Op& op = k.op();
      const std::uint64_t pieces = piece_count(op.bytes, payload);
      const std::uint64_t biggest = std::min(payload, op.bytes);
      if (receives(op.kind)) {
        auto [it, fresh] =
            p->in_index.try_emplace({c, op.recv_peer}, static_cast<int>(p->in.size()));
        if (fresh) p->in.push_back(InConn{op.recv_peer, c});
        p->in[it->second].total += pieces;
        in_max[{c, op.recv_peer}] = std::max(in_max[{c, op.recv_peer}], biggest);
      }
      if (sends(op.kind)) {
        auto [it, fresh] =
            p->out_index.try_emplace({c, op.send_peer}, static_cast<int>(p->out.size()));
        if (fresh) p->out.push_back(OutConn{op.send_peer, c});
        out_max[{c, op.send_peer}] = std::max(out_max[{c, op.send_peer}], biggest);
      }
    }
  }
  for (InConn& in : p->in) {
    const std::size_t n = static_cast<std::size_t>(std::max(1, p->recv_window));
    in.slots.assign(n, std::vector<std::byte>(in_max[{in.channel, in.from}]));
    in.req.assign(n, MPI_REQUEST_NULL);
  }
  for (OutConn& out : p->out) {
    out.staging.assign(p->send_window, std::vector<std::byte>(out_max[{out.channel, out.to}]));
    out.req.assign(p->send_window, MPI_REQUEST_NULL);
  }
  p->scratch.resize(s.buffer_bytes(rank, BufferKind::kScratch));
  return p;
}

// What a channel keeps beyond the walk's state.
struct StreamData {
  // A fused op's piece: where its outgoing bytes are, and whether the send window had room when
  // it was received (recv-reduce-send then reduced straight into the next staging buffer).
  const std::byte* outgoing = nullptr;
  bool room = false;
  std::vector<std::byte> held;  // recv-reduce-send's result when there was no room
  InConn* in = nullptr;
  OutConn* out = nullptr;
  Clock::time_point op_start;
  std::vector<OpTiming> timings;
};

class MpiRun final : public WalkHooks {
 public:
  MpiRun(const Schedule& s, HostBuffers& b, const RunOptions& o, MpiBackend::Plan& p, MPI_Comm comm)
      : s_(s),
        b_(b),
        o_(o),
        p_(p),
        comm_(comm),
        divisor_(s.info().redop == ReduceOp::kAvg ? s.rank_count() : 0),
        // The other end of every connection is another process: MPI's windows are the credits.
        walk_(s, *this, {.ranks = {p.rank}, .fifo_credits = false, .lock = nullptr}),
        data_(walk_.size()) {}

  RunResult run() {
    start_ = Clock::now();
    for (InConn& in : p_.in) {
      in.posted = in.consumed = 0;
      top_up(in);
    }
    for (OutConn& out : p_.out) out.posted = out.matched = 0;
    Clock::time_point last_progress = start_;
    int idle = 0;
    while (true) {
      bool progress = walk_.round();
      for (OutConn& out : p_.out) progress |= reap(out);
      if (walk_.finished() && unmatched() == 0) break;
      if (progress) {
        last_progress = Clock::now();
        idle = 0;
      } else {
        if (++idle % 64 == 0) std::this_thread::yield();  // oversubscribed runs need the core
        if (Clock::now() - last_progress > o_.stall_timeout) throw BackendError(stuck_message());
      }
    }
    RunResult res;
    const auto end = Clock::now();
    res.wall = elapsed(start_, end);
    res.rank_time.assign(s_.rank_count(), Time());
    res.rank_time[p_.rank] =
        elapsed(start_, last_op_end_ == Clock::time_point() ? start_ : last_op_end_);
    res.ops = walk_.ops();
    res.bytes_sent = walk_.bytes_sent();
    for (StreamData& d : data_) {
      res.op_timings.insert(res.op_timings.end(), d.timings.begin(), d.timings.end());
    }
    return res;
  }

 private:
  std::byte* address(const WalkStream&, const BufferRef& ref) override {
    switch (ref.buffer) {
      case BufferKind::kInput:
        return b_.input[p_.rank].data() + ref.offset;
      case BufferKind::kOutput:
        return b_.output[p_.rank].data() + ref.offset;
      case BufferKind::kScratch:
        return p_.scratch.data() + ref.offset;
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

  // Keeps min(total, consumed + R) receives posted.
  void top_up(InConn& in) {
    const std::uint64_t want = std::min<std::uint64_t>(in.total, in.consumed + p_.recv_window);
    while (in.posted < want) post_recv(in);
  }

  void post_recv(InConn& in) {
    const std::size_t slot = in.posted % in.slots.size();
    mpi_check(MPI_Irecv(in.slots[slot].data(), static_cast<int>(in.slots[slot].size()), MPI_BYTE,
                        in.from, in.channel, comm_, &in.req[slot]),
              "MPI_Irecv");
    ++in.posted;
  }

  // Notices sends that were matched; true if any was.
  bool reap(OutConn& out) {
    bool any = false;
    while (out.matched < out.posted) {
      int flag = 0;
      mpi_check(MPI_Test(&out.req[out.matched % out.req.size()], &flag, MPI_STATUS_IGNORE),
                "MPI_Test");
      if (!flag) break;
      ++out.matched;
      any = true;
    }
    return any;
  }

  std::uint64_t unmatched() const {
    std::uint64_t n = 0;
    for (const OutConn& out : p_.out) n += out.posted - out.matched;
    return n;
  }

  bool window_free(OutConn& out) {
    reap(out);
    return out.posted - out.matched < static_cast<std::uint64_t>(p_.send_window);
  }

  void begin(const WalkStream& st, const Op& op) override {
    StreamData& d = data_[st.id()];
    d.op_start = Clock::now();
    if (receives(op.kind)) d.in = &p_.in[p_.in_index.at({st.channel(), op.recv_peer})];
    if (sends(op.kind)) d.out = &p_.out[p_.out_index.at({st.channel(), op.send_peer})];
  }

  void end(const WalkStream& st, const Op& op) override {
    const auto now = Clock::now();
    StreamData& d = data_[st.id()];
    if (o_.record_ops) {
      d.timings.push_back({p_.rank, st.channel(), st.index(), op, elapsed(start_, d.op_start),
                           elapsed(start_, now)});
    }
    last_op_end_ = now;
  }

  // Receives and applies the piece; false if it has not arrived.
  bool receive(const WalkStream& st, const Op& op, const WalkPiece& p) override {
    StreamData& sd = data_[st.id()];
    InConn& in = *sd.in;
    if (in.posted == in.consumed) post_recv(in);  // R = 0: receives are posted on demand
    const std::size_t slot = in.consumed % in.slots.size();
    int flag = 0;
    MPI_Status status;
    mpi_check(MPI_Test(&in.req[slot], &flag, &status), "MPI_Test");
    if (!flag) return false;
    int got = 0;
    mpi_check(MPI_Get_count(&status, MPI_BYTE, &got), "MPI_Get_count");
    if (static_cast<std::size_t>(got) != p.bytes) {
      throw BackendError(fmt::format(
          "mpi backend: rank {} channel {} op {} ({}): received a piece of {} B from rank {}, "
          "expected {} B (the sender's schedule differs from this rank's)",
          p_.rank, st.channel(), st.index(), describe(op), got, in.from, p.bytes));
    }
    std::byte* scratch = nullptr;
    if (sends(op.kind)) {
      sd.room = window_free(*sd.out);
      if (!sd.room) sd.held.resize(p.bytes);
      scratch = sd.room ? sd.out->staging[sd.out->posted % sd.out->staging.size()].data()
                        : sd.held.data();
    }
    sd.outgoing = apply(st, op, p, in.slots[slot].data(), scratch);
    ++in.consumed;
    top_up(in);
    return true;
  }

  // Posts the piece from the connection's next staging buffer; false if the FIFO is full.
  bool send(const WalkStream& st, const Op& op, const WalkPiece& p) override {
    StreamData& sd = data_[st.id()];
    OutConn& out = *sd.out;
    const std::size_t slot = out.posted % out.staging.size();
    std::byte* buf = out.staging[slot].data();
    // With room at receive time nothing else has posted here since: the window still has room.
    if (!(receives(op.kind) && sd.room) && !window_free(out)) return false;
    const std::byte* from = receives(op.kind) ? sd.outgoing : address(st, op.src) + p.offset;
    if (from != buf && p.bytes > 0) std::memcpy(buf, from, p.bytes);
    mpi_check(MPI_Issend(buf, static_cast<int>(p.bytes), MPI_BYTE, out.to, out.channel, comm_,
                         &out.req[slot]),
              "MPI_Issend");
    ++out.posted;
    return true;
  }

  std::string stuck_message() const {
    std::string msg = fmt::format("mpi backend: rank {} made no progress for {} ms;", p_.rank,
                                  o_.stall_timeout.count());
    bool first = true;
    walk_.for_each_stuck([&](const WalkStream& st, std::string_view why) {
      msg += fmt::format("{} channel {} op {} ({}) {}", first ? "" : ";", st.channel(), st.index(),
                         describe(st.op()), why);
      first = false;
    });
    if (first) msg += fmt::format(" {} sends not yet received", unmatched());
    return msg;
  }

  const Schedule& s_;
  HostBuffers& b_;
  const RunOptions& o_;
  MpiBackend::Plan& p_;
  MPI_Comm comm_;
  int divisor_;
  ScheduleWalk walk_;
  std::vector<StreamData> data_;  // by channel
  Clock::time_point start_;
  Clock::time_point last_op_end_;
};

}  // namespace

MpiBackend::MpiBackend() : world_(std::make_unique<MpiWorld>()) {}

MpiBackend::~MpiBackend() = default;

ProcessGroup& MpiBackend::processes() { return *world_; }

int MpiBackend::preferred_ranks() const { return world_->size(); }

std::vector<int> MpiBackend::local_ranks(const Schedule& s) const {
  if (s.rank_count() != world_->size()) {
    throw BackendError(fmt::format(
        "mpi backend: the schedule has {} ranks but the job has {} processes (start it with "
        "mpirun -np {}, or ask for --ranks {})",
        s.rank_count(), world_->size(), s.rank_count(), world_->size()));
  }
  return {world_->index()};
}

Backend::Placement MpiBackend::placement(int rank) const {
  return {0, fmt::format("[cpu] MPI process {}", rank)};
}

RunResult MpiBackend::run(const Schedule& s, HostBuffers& buffers, const RunOptions& options) {
  refuse_switch_actors(s, "mpi");
  if (failed_) {
    throw BackendError("mpi backend: a previous run failed; its messages may still be in flight");
  }
  const std::vector<int> mine = local_ranks(s);
  check_buffers(s, buffers, mine);
  if (!plan_ || !plan_->fits(s, mine.front())) plan_ = make_plan(s, mine.front());
  try {
    MpiRun run(s, buffers, options, *plan_, world_->comm());
    return run.run();
  } catch (...) {
    failed_ = true;
    throw;
  }
}

}  // namespace collsim
