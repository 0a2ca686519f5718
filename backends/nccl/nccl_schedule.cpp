// A schedule through ncclSend / ncclRecv, in rounds (nccl_backend.hpp). Each round advances every
// local stream as far as it can (algorithms/ir/schedule_walk.hpp): a piece the previous group
// received is consumed, local ops become kernels, sends become pending, and a stream stops at a
// receive the next group has to post; then one NCCL group with every stream's pending sends and
// its next receive. A stream thus has at most one receive in flight, and its sends are issued no
// earlier than the schedule allows (after the data they carry was produced).
#include <algorithm>

#include "backends/cuda/device_walk.hpp"
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
};

class NcclRun final : public DeviceWalkHooks {
 public:
  NcclRun(const Schedule& s, NcclComms& comms, DeviceRanks& dev, const RunOptions& o)
      : DeviceWalkHooks(s, dev, o),
        ranks_(s.rank_count()),
        comms_(comms),
        payload_(std::max<std::uint64_t>(1, s.info().fifo.slot_payload)),
        // NCCL's own p2p buffering is the FIFO: the walk counts no credits.
        walk_(s, *this, {.ranks = dev.ranks(), .fifo_credits = false, .lock = nullptr}),
        data_(walk_.size()) {}

  RunResult run() {
    RunResult res;
    res.rank_time.assign(ranks_, Time());
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
    res.op_timings = op_timings();
    res.ops = walk_.ops();
    res.bytes_sent = walk_.bytes_sent();
    return res;
  }

 private:
  std::byte* staging(const WalkStream& st) const { return dev_.staging(st.rank(), st.channel()); }
  std::byte* landing(const WalkStream& st) const {
    return staging(st) + std::max<std::uint64_t>(16, payload_);
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

  int ranks_;
  NcclComms& comms_;
  std::uint64_t payload_;
  ScheduleWalk walk_;
  std::vector<StreamData> data_;  // by stream id
};

}  // namespace

RunResult run_nccl_schedule(const Schedule& s, NcclComms& comms, DeviceRanks& dev,
                            const RunOptions& options) {
  NcclRun run(s, comms, dev, options);
  return run.run();
}

}  // namespace collsim
