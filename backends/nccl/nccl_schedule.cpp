// A schedule through ncclSend / ncclRecv, in rounds (nccl_backend.hpp). Each round: consume what
// the previous round received; advance every local stream as far as it can without receiving
// (local ops become kernels, sends become pending); then one NCCL group with every stream's
// pending sends and its next receive. A stream thus has at most one receive in flight, and its
// sends are issued no earlier than the schedule allows (after the data they carry was produced).
#include <fmt/format.h>

#include <algorithm>

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/device_kernels.hpp"
#include "backends/cuda/device_ranks.hpp"
#include "backends/nccl/nccl_backend.hpp"
#include "backends/nccl/nccl_check.hpp"
#include "backends/nccl/nccl_comms.hpp"
#include "backends/piece_walk.hpp"
#include "topology/error.hpp"

namespace collsim {

namespace {

struct PendingSend {
  const std::byte* data;
  std::size_t bytes;
  int peer;
};

struct Stream {
  Stream(int r, int c, OpCursor k) : rank(r), channel(c), cursor(std::move(k)) {}
  int rank;
  int channel;
  OpCursor cursor;
  std::vector<std::pair<Dependency, cudaEvent_t>> waits;
  std::vector<std::pair<std::uint64_t, cudaEvent_t>> records;
  std::size_t next_wait = 0;
  std::size_t next_record = 0;
  std::uint64_t piece = 0;
  bool received = false;     // the current piece's receive completed and was consumed
  bool recv_posted = false;  // in the group just ended
  bool want_recv = false;    // for the next group
  std::size_t recv_bytes = 0;
  std::vector<PendingSend> sends;
  const std::byte* outgoing = nullptr;
  bool started = false;
  std::uint64_t done_ops = 0;
  cudaEvent_t op_start = nullptr;
};

class NcclRun {
 public:
  NcclRun(const Schedule& s, NcclComms& comms, DeviceRanks& dev, const RunOptions& o)
      : s_(s), comms_(comms), dev_(dev), o_(o) {
    payload_ = std::max<std::uint64_t>(1, s.info().fifo.slot_payload);
    divisor_ = s.info().redop == ReduceOp::kAvg ? s.rank_count() : 0;
    for (int r : dev.ranks()) {
      const std::size_t first = streams_.size();
      for (int c = 0; c < s.channel_count(); ++c) streams_.emplace_back(r, c, s.cursor(r, c));
      for (const Dependency& d : s.dependencies(r)) {
        cudaEvent_t e = event(r, false);
        streams_[first + d.channel].waits.push_back({d, e});
        streams_[first + d.after_channel].records.push_back({d.after_op, e});
      }
      for (std::size_t c = first; c < streams_.size(); ++c) {
        std::stable_sort(streams_[c].records.begin(), streams_[c].records.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
      }
    }
  }

  ~NcclRun() {
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
  }
  NcclRun(const NcclRun&) = delete;
  NcclRun& operator=(const NcclRun&) = delete;

  RunResult run() {
    RunResult res;
    res.rank_time.assign(s_.rank_count(), Time());
    dev_.begin();
    dev_.open_gates();  // NCCL may wait for the GPU inside its calls: never queue behind a gate
    while (true) {
      bool progress = false;
      for (Stream& st : streams_) {
        if (st.recv_posted) consume(st);
      }
      bool done = true;
      bool comm = false;
      for (Stream& st : streams_) {
        use_device(dev_.device(st.rank));
        progress |= step(st);
        done &= st.cursor.done();
        comm |= st.want_recv || !st.sends.empty();
      }
      if (!comm) {
        if (done) break;
        if (!progress) {
          dev_.end(&res);
          throw BackendError(stuck_message());
        }
        continue;
      }
      group();
    }
    dev_.end(&res);
    for (const Timed& t : timed_) {
      res.op_timings.push_back({t.timing.rank, t.timing.channel, t.timing.index, t.timing.op,
                                dev_.since_start(t.timing.rank, t.start),
                                dev_.since_start(t.timing.rank, t.end)});
    }
    std::sort(res.op_timings.begin(), res.op_timings.end(),
              [](const OpTiming& a, const OpTiming& b) {
                return std::tie(a.rank, a.channel, a.index) < std::tie(b.rank, b.channel, b.index);
              });
    res.ops = ops_;
    res.bytes_sent = bytes_sent_;
    return res;
  }

 private:
  cudaEvent_t event(int rank, bool timing) {
    use_device(dev_.device(rank));
    cudaEvent_t e = nullptr;
    cuda_check(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming),
               "cudaEventCreateWithFlags");
    events_.push_back(e);
    return e;
  }

  cudaStream_t stream(const Stream& st) const { return dev_.stream(st.rank, st.channel); }
  std::byte* staging(const Stream& st) const { return dev_.staging(st.rank, st.channel); }
  std::byte* landing(const Stream& st) const {
    return staging(st) + std::max<std::uint64_t>(16, payload_);
  }

  void reduce(const Stream& st, void* dst, const void* a, const void* b, std::size_t n, bool post) {
    launch_reduce(s_.info().dtype, s_.info().redop, dst, a, b, n, post ? divisor_ : 0, stream(st));
    dev_.count_enqueued(st.rank);
  }

  void copy(const Stream& st, void* dst, const void* src, std::size_t n) {
    if (n == 0 || dst == src) return;
    cuda_check(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, stream(st)),
               "cudaMemcpyAsync");
    dev_.count_enqueued(st.rank);
  }

  // One NCCL group: every stream's pending sends and its next receive.
  void group() {
    nccl_check(ncclGroupStart(), "ncclGroupStart");
    for (Stream& st : streams_) {
      ncclComm_t comm = comms_.get(st.channel, st.rank);
      for (const PendingSend& p : st.sends) {
        nccl_check(ncclSend(p.data, p.bytes, ncclUint8, p.peer, comm, stream(st)), "ncclSend",
                   comm);
      }
      st.sends.clear();
      if (st.want_recv) {
        const int from = st.cursor.op().recv_peer;
        nccl_check(ncclRecv(landing(st), st.recv_bytes, ncclUint8, from, comm, stream(st)),
                   "ncclRecv", comm);
        st.want_recv = false;
        st.recv_posted = true;
      }
    }
    nccl_check(ncclGroupEnd(), "ncclGroupEnd");
  }

  // Applies the piece that landed: copies or reduces it where the op says.
  void consume(Stream& st) {
    use_device(dev_.device(st.rank));
    const Op& op = st.cursor.op();
    const std::uint64_t off = st.piece * payload_;
    const std::size_t len = st.recv_bytes;
    const std::byte* in = landing(st);
    std::byte* d = writes_dst(op.kind) ? dev_.ptr(st.rank, op.dst) + off : nullptr;
    const std::byte* src = reads_src(op.kind) ? dev_.ptr(st.rank, op.src) + off : nullptr;
    switch (op.kind) {
      case OpKind::kRecv:
        copy(st, d, in, len);
        break;
      case OpKind::kRecvReduce:
        reduce(st, d, d, in, len, op.postop);
        break;
      case OpKind::kRecvReduceCopy:
        reduce(st, d, src, in, len, op.postop);
        break;
      case OpKind::kRecvReduceSend:
        reduce(st, staging(st), src, in, len, op.postop);
        st.outgoing = staging(st);
        break;
      case OpKind::kRecvReduceCopySend:
        reduce(st, d, src, in, len, op.postop);
        st.outgoing = d;
        break;
      case OpKind::kRecvCopySend:
        copy(st, d, in, len);
        st.outgoing = d;
        break;
      default:
        break;
    }
    st.recv_posted = false;
    st.received = true;
  }

  // Advances a stream up to its next receive; true if it did anything.
  bool step(Stream& st) {
    bool progress = false;
    while (!st.cursor.done()) {
      const Op& op = st.cursor.op();
      const std::uint64_t index = st.cursor.index();
      while (st.next_wait < st.waits.size() && st.waits[st.next_wait].first.op == index) {
        const auto& [d, e] = st.waits[st.next_wait];
        if (streams_[&st - &streams_[0] - st.channel + d.after_channel].done_ops <= d.after_op) {
          return progress;
        }
        cuda_check(cudaStreamWaitEvent(stream(st), e, 0), "cudaStreamWaitEvent");
        ++st.next_wait;
        progress = true;
      }
      if (!st.started) {
        st.started = true;
        if (o_.record_ops) {
          st.op_start = event(st.rank, true);
          cuda_check(cudaEventRecord(st.op_start, stream(st)), "cudaEventRecord");
        }
      }
      if (!receives(op.kind) && !sends(op.kind)) {
        std::byte* d = dev_.ptr(st.rank, op.dst);
        if (op.kind == OpKind::kCopy) {
          copy(st, d, dev_.ptr(st.rank, op.src), op.bytes);
        } else {
          reduce(st, d, d, dev_.ptr(st.rank, op.src), op.bytes, op.postop);
        }
      } else {
        // A receive is only requested here: the group call posts it, and marks the piece
        // received when the group completes.
        const PieceWalk w = walk_pieces(
            st.piece, st.received, op, payload_, progress,
            [&](std::uint64_t, std::size_t len) {
              st.want_recv = true;
              st.recv_bytes = len;
              return false;
            },
            [&](std::uint64_t off, std::size_t len) {
              const std::byte* data =
                  receives(op.kind) ? st.outgoing : dev_.ptr(st.rank, op.src) + off;
              st.sends.push_back({data, len, op.send_peer});
              bytes_sent_ += len;
              return true;
            });
        if (w == PieceWalk::kBlocked) return progress;
      }
      if (o_.record_ops) {
        cudaEvent_t end = event(st.rank, true);
        cuda_check(cudaEventRecord(end, stream(st)), "cudaEventRecord");
        timed_.push_back({OpTiming{st.rank, st.channel, index, op, {}, {}}, st.op_start, end});
      }
      while (st.next_record < st.records.size() && st.records[st.next_record].first == index) {
        cuda_check(cudaEventRecord(st.records[st.next_record].second, stream(st)),
                   "cudaEventRecord");
        ++st.next_record;
      }
      st.piece = 0;
      st.started = false;
      ++st.done_ops;
      ++ops_;
      progress = true;
      st.cursor.next();
    }
    return progress;
  }

  std::string stuck_message() const {
    StuckReport report("nccl");
    for (const Stream& st : streams_) {
      if (!st.cursor.done()) {
        report.add(st.rank, st.channel, st.cursor.index(), st.cursor.op(),
                   "waits for a dependency");
      }
    }
    return report.str();
  }

  struct Timed {
    OpTiming timing;
    cudaEvent_t start;
    cudaEvent_t end;
  };

  const Schedule& s_;
  NcclComms& comms_;
  DeviceRanks& dev_;
  const RunOptions& o_;
  std::uint64_t payload_ = 1;
  int divisor_ = 0;
  std::vector<Stream> streams_;
  std::vector<cudaEvent_t> events_;
  std::vector<Timed> timed_;
  std::uint64_t ops_ = 0;
  std::uint64_t bytes_sent_ = 0;
};

}  // namespace

RunResult run_nccl_schedule(const Schedule& s, NcclComms& comms, DeviceRanks& dev,
                            const RunOptions& options) {
  NcclRun run(s, comms, dev, options);
  return run.run();
}

}  // namespace collsim
