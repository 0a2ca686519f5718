// A schedule through ncclSend / ncclRecv, in rounds (nccl_backend.hpp). Each round advances every
// local stream as far as it can (algorithms/schedule_walk.hpp): a piece the previous group
// received is consumed, local ops become kernels, sends become pending, and a stream stops at a
// receive the next group has to post; then one NCCL group with every stream's pending sends and
// its next receive. A stream thus has at most one receive in flight, and its sends are issued no
// earlier than the schedule allows (after the data they carry was produced).
#include <fmt/format.h>

#include <algorithm>

#include "algorithms/schedule_walk.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/device_kernels.hpp"
#include "backends/cuda/device_ranks.hpp"
#include "backends/nccl/nccl_backend.hpp"
#include "backends/nccl/nccl_check.hpp"
#include "backends/nccl/nccl_comms.hpp"
#include "topology/error.hpp"

namespace collsim {

namespace {

struct PendingSend {
  const std::byte* data;
  std::size_t bytes;
  int peer;
};

// What a stream keeps beyond the walk's state: its part of the next NCCL group.
struct StreamData {
  bool want_recv = false;  // for the next group: a receive of recv_bytes from recv_peer
  bool landed = false;     // the receive the last group posted is in landing()
  std::size_t recv_bytes = 0;
  int recv_peer = 0;
  std::vector<PendingSend> sends;
  const std::byte* outgoing = nullptr;  // what a fused op passes on
  cudaEvent_t op_start = nullptr;
};

class NcclRun final : public WalkHooks {
 public:
  NcclRun(const Schedule& s, NcclComms& comms, DeviceRanks& dev, const RunOptions& o)
      : s_(s),
        comms_(comms),
        dev_(dev),
        o_(o),
        payload_(std::max<std::uint64_t>(1, s.info().fifo.slot_payload)),
        divisor_(s.info().redop == ReduceOp::kAvg ? s.rank_count() : 0),
        // NCCL's own p2p buffering is the FIFO: the walk counts no credits.
        walk_(s, *this, {.ranks = dev.ranks(), .fifo_credits = false, .lock = nullptr}),
        data_(walk_.size()),
        dep_events_(s.rank_count()) {
    for (int r : dev.ranks()) {
      for (std::size_t i = 0; i < s.dependencies(r).size(); ++i) {
        dep_events_[r].push_back(event(r, false));
      }
    }
  }

  ~NcclRun() override {
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
      const bool progress = walk_.round();
      if (communicates()) {
        group();
        continue;
      }
      if (walk_.finished()) break;
      if (!progress) {
        dev_.end(&res);
        throw BackendError(walk_.stuck_report("nccl backend"));
      }
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
    res.ops = walk_.ops();
    res.bytes_sent = walk_.bytes_sent();
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

  cudaStream_t stream(const WalkStream& st) const { return dev_.stream(st.rank(), st.channel()); }
  std::byte* staging(const WalkStream& st) const { return dev_.staging(st.rank(), st.channel()); }
  std::byte* landing(const WalkStream& st) const {
    return staging(st) + std::max<std::uint64_t>(16, payload_);
  }

  std::byte* address(const WalkStream& st, const BufferRef& ref) override {
    return dev_.ptr(st.rank(), ref);
  }

  void reduce(const WalkStream& st, std::byte* dst, const std::byte* a, const std::byte* b,
              std::size_t n, bool postop) override {
    launch_reduce(s_.info().dtype, s_.info().redop, dst, a, b, n, postop ? divisor_ : 0,
                  stream(st));
    dev_.count_enqueued(st.rank());
  }

  void copy(const WalkStream& st, std::byte* dst, const std::byte* src, std::size_t n) override {
    if (n == 0 || dst == src) return;
    cuda_check(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, stream(st)),
               "cudaMemcpyAsync");
    dev_.count_enqueued(st.rank());
  }

  void record(const WalkStream& st, cudaEvent_t e) {
    cuda_check(cudaEventRecord(e, stream(st)), "cudaEventRecord");
  }

  bool communicates() const {
    return std::any_of(data_.begin(), data_.end(),
                       [](const StreamData& d) { return d.want_recv || !d.sends.empty(); });
  }

  // One NCCL group: every stream's pending sends and its next receive.
  void group() {
    nccl_check(ncclGroupStart(), "ncclGroupStart");
    for (int id = 0; id < walk_.size(); ++id) {
      const WalkStream& st = walk_.stream(id);
      StreamData& d = data_[id];
      ncclComm_t comm = comms_.get(st.channel(), st.rank());
      for (const PendingSend& p : d.sends) {
        nccl_check(ncclSend(p.data, p.bytes, ncclUint8, p.peer, comm, stream(st)), "ncclSend",
                   comm);
      }
      d.sends.clear();
      if (d.want_recv) {
        nccl_check(ncclRecv(landing(st), d.recv_bytes, ncclUint8, d.recv_peer, comm, stream(st)),
                   "ncclRecv", comm);
        d.want_recv = false;
        d.landed = true;
      }
    }
    nccl_check(ncclGroupEnd(), "ncclGroupEnd");
  }

  void enter(const WalkStream& st) override { use_device(dev_.device(st.rank())); }

  void begin(const WalkStream& st, const Op&) override {
    if (!o_.record_ops) return;
    cudaEvent_t& start = data_[st.id()].op_start;
    start = event(st.rank(), true);
    record(st, start);
  }

  void end(const WalkStream& st, const Op& op) override {
    if (!o_.record_ops) return;
    cudaEvent_t end = event(st.rank(), true);
    record(st, end);
    timed_.push_back(
        {OpTiming{st.rank(), st.channel(), st.index(), op, {}, {}}, data_[st.id()].op_start, end});
  }

  void depend(const WalkStream& st, std::size_t index) override {
    cuda_check(cudaStreamWaitEvent(stream(st), dep_events_[st.rank()][index], 0),
               "cudaStreamWaitEvent");
  }

  void release(const WalkStream& st, std::size_t index) override {
    record(st, dep_events_[st.rank()][index]);
  }

  // A receive is only requested here (the next group posts it); once that group has completed,
  // the piece that landed is applied.
  bool receive(const WalkStream& st, const Op& op, const WalkPiece& p) override {
    StreamData& sd = data_[st.id()];
    if (!sd.landed) {
      sd.want_recv = true;
      sd.recv_bytes = p.bytes;
      sd.recv_peer = op.recv_peer;
      return false;
    }
    sd.landed = false;
    sd.outgoing = apply(st, op, p, landing(st), staging(st));
    return true;
  }

  // Sends wait for the next group too; the schedule allows them now.
  bool send(const WalkStream& st, const Op& op, const WalkPiece& p) override {
    StreamData& sd = data_[st.id()];
    const std::byte* data = receives(op.kind) ? sd.outgoing : address(st, op.src) + p.offset;
    sd.sends.push_back({data, p.bytes, op.send_peer});
    return true;
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
  std::uint64_t payload_;
  int divisor_;
  ScheduleWalk walk_;
  std::vector<StreamData> data_;                      // by stream id
  std::vector<std::vector<cudaEvent_t>> dep_events_;  // per rank, per dependency
  std::vector<cudaEvent_t> events_;                   // every event made, destroyed at the end
  std::vector<Timed> timed_;
};

}  // namespace

RunResult run_nccl_schedule(const Schedule& s, NcclComms& comms, DeviceRanks& dev,
                            const RunOptions& options) {
  NcclRun run(s, comms, dev, options);
  return run.run();
}

}  // namespace collsim
