// Queues a schedule on the GPUs. The host walks every (rank, channel) stream round-robin, each as
// far as it can (algorithms/ir/schedule_walk.hpp, its FIFO credits counting what was queued): a
// piece is queued when what it waits for has been queued (the sender's copy into a slot before
// the receiver's wait for it; the consumption of the piece `slots` earlier before the copy that
// reuses its slot), so every cudaStreamWaitEvent waits for an event record already queued, and
// an event is re-recorded only after every wait for its previous record was queued. Nothing on
// the host waits for a GPU until the run's end.
#include <algorithm>
#include <map>

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_plan.hpp"
#include "backends/cuda/device_walk.hpp"
#include "topology/error.hpp"

namespace collsim {

// Errors are ignored: a destructor cannot report them.
CudaBackend::Plan::~Plan() {
  if (dev) dev->open_gates();
  for (CudaConn& c : conns) {
    cudaSetDevice(dev->device(c.to));
    cudaDeviceSynchronize();
    cudaFree(c.fifo);
    for (cudaEvent_t e : c.sent) cudaEventDestroy(e);
    for (cudaEvent_t e : c.consumed) cudaEventDestroy(e);
  }
  for (auto& v : dep_events) {
    for (cudaEvent_t e : v) cudaEventDestroy(e);
  }
}

namespace {

std::unique_ptr<CudaBackend::Plan> make_plan(const Schedule& s, const std::vector<int>& ranks,
                                             const std::vector<int>& devices) {
  auto p = std::make_unique<CudaBackend::Plan>();
  p->source = s.source();
  p->info = s.info();
  p->devices = devices;
  const std::uint64_t payload = std::max<std::uint64_t>(1, s.info().fifo.slot_payload);
  const int slots = std::max(1, s.info().fifo.slots);
  std::uint64_t biggest = 1;
  for (int r : ranks) {
    for (int c = 0; c < s.channel_count(); ++c) {
      for (OpCursor k = s.cursor(r, c); !k.done(); k.next()) {
        const Op& op = k.op();
        if (!sends(op.kind)) continue;
        const std::uint64_t piece = std::min(payload, op.bytes);
        biggest = std::max(biggest, piece);
        auto [it, fresh] =
            p->conn_index.try_emplace({c, r, op.send_peer}, static_cast<int>(p->conns.size()));
        if (fresh) p->conns.push_back(CudaConn{r, op.send_peer});
        p->conns[it->second].slot_bytes = std::max(p->conns[it->second].slot_bytes, piece);
      }
    }
  }
  p->dev = std::make_unique<DeviceRanks>(s, ranks, devices, biggest);
  for (CudaConn& c : p->conns) {
    const int to = p->dev->device(c.to);
    use_device(to);
    cuda_check(cudaMalloc(reinterpret_cast<void**>(&c.fifo),
                          std::max<std::uint64_t>(1, c.slot_bytes * slots)),
               "cudaMalloc");
    for (int k = 0; k < slots; ++k) {
      c.sent.push_back(new_event(p->dev->device(c.from), false));
      c.consumed.push_back(new_event(to, false));
    }
  }
  p->dep_events.resize(s.rank_count());
  for (int r : ranks) {
    for (std::size_t i = 0; i < s.dependencies(r).size(); ++i) {
      p->dep_events[r].push_back(new_event(p->dev->device(r), false));
    }
  }
  return p;
}

bool fits(const CudaBackend::Plan& p, const Schedule& s, const std::vector<int>& devices) {
  return p.source == s.source() && p.devices == devices && p.info.ranks == s.info().ranks &&
         p.info.channels == s.info().channels && p.info.count == s.info().count &&
         p.info.fifo.slots == s.info().fifo.slots &&
         p.info.fifo.slot_payload == s.info().fifo.slot_payload;
}

// What a stream keeps beyond the walk's state.
struct StreamData {
  const std::byte* outgoing = nullptr;  // what a fused op passes on
  CudaConn* in = nullptr;
  CudaConn* out = nullptr;
};

class CudaRun final : public DeviceWalkHooks {
 public:
  CudaRun(CudaBackend::Plan& p, const Schedule& s, const RunOptions& o)
      : DeviceWalkHooks(s, *p.dev, o, &p.dep_events),
        p_(p),
        slots_(static_cast<std::uint64_t>(std::max(1, s.info().fifo.slots))),
        walk_(s, *this, {.ranks = p.dev->ranks(), .fifo_credits = true, .lock = nullptr}),
        data_(walk_.size()) {}

  RunResult run() {
    RunResult res;
    res.rank_time.assign(p_.info.ranks, Time());
    dev_.begin();
    // Whatever happens, the devices must not stay parked behind their gates.
    struct OpenGates {
      DeviceRanks& dev;
      ~OpenGates() { dev.open_gates(); }
    } guard{dev_};
    while (!walk_.finished()) {
      if (!walk_.round()) {
        RunResult ignored;
        dev_.end(&ignored);  // let what was queued drain before reporting
        throw BackendError(walk_.stuck_report("cuda backend"));
      }
    }
    dev_.end(&res);
    res.op_timings = op_timings();
    res.ops = walk_.ops();
    res.bytes_sent = walk_.bytes_sent();
    return res;
  }

 private:
  void begin(const WalkStream& st, const Op& op) override {
    DeviceWalkHooks::begin(st, op);
    StreamData& d = data_[st.id()];
    if (receives(op.kind)) {
      d.in = &p_.conns[p_.conn_index.at({st.channel(), op.recv_peer, st.rank()})];
    }
    if (sends(op.kind)) {
      d.out = &p_.conns[p_.conn_index.at({st.channel(), st.rank(), op.send_peer})];
    }
  }

  // Queues the consumption of piece p.seq of the connection, which the walk saw queued.
  bool receive(const WalkStream& st, const Op& op, const WalkPiece& p) override {
    StreamData& sd = data_[st.id()];
    CudaConn& in = *sd.in;
    const std::uint64_t k = p.seq % slots_;
    wait(st, in.sent[k]);
    sd.outgoing =
        apply(st, op, p, in.fifo + k * in.slot_bytes, dev_.staging(st.rank(), st.channel()));
    record(st, in.consumed[k]);
    return true;
  }

  // Queues the copy of piece p.seq into the receiver's slot, after the consumption of the piece
  // that used the slot before (the walk saw that consumption queued).
  bool send(const WalkStream& st, const Op& op, const WalkPiece& p) override {
    const StreamData& sd = data_[st.id()];
    CudaConn& out = *sd.out;
    const std::uint64_t k = p.seq % slots_;
    if (p.seq >= slots_) wait(st, out.consumed[k]);
    const std::byte* from = receives(op.kind) ? sd.outgoing : address(st, op.src) + p.offset;
    if (p.bytes > 0) {
      cuda_check(cudaMemcpyPeerAsync(out.fifo + k * out.slot_bytes, dev_.device(out.to), from,
                                     dev_.device(st.rank()), p.bytes, stream(st)),
                 "cudaMemcpyPeerAsync");
      dev_.count_enqueued(st.rank());
    }
    record(st, out.sent[k]);
    return true;
  }

  CudaBackend::Plan& p_;
  std::uint64_t slots_;
  ScheduleWalk walk_;
  std::vector<StreamData> data_;  // by stream id
};

}  // namespace

RunResult CudaBackend::run(const Schedule& s, HostBuffers& buffers, const RunOptions& options) {
  refuse_switch_actors(s, "cuda");
  const std::vector<int> ranks = local_ranks(s);
  check_buffers(s, buffers, ranks);
  std::vector<int> devices;
  for (int r : ranks) devices.push_back(device_of(r));
  const bool fresh = !plan_ || !fits(*plan_, s, devices);
  if (fresh) {
    plan_.reset();  // free the old device memory before allocating the new
    plan_ = make_plan(s, ranks, devices);
  }
  if (fresh || !options.same_inputs) plan_->dev->upload_inputs(buffers);
  CudaRun run(*plan_, s, options);
  RunResult res = run.run();
  if (!options.discard_outputs) plan_->dev->download_outputs(buffers);
  return res;
}

}  // namespace collsim
