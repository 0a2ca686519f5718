// Queues a schedule on the GPUs. The host walks every (rank, channel) stream round-robin, each as
// far as it can: a piece is queued when what it waits for has been queued (the sender's copy
// into a slot before the receiver's wait for it; the consumption of the piece `slots` earlier
// before the copy that reuses its slot), so every cudaStreamWaitEvent waits for an event record
// already queued, and an event is re-recorded only after every wait for its previous record was
// queued. Nothing on the host waits for a GPU until the run's end.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_plan.hpp"
#include "backends/cuda/device_kernels.hpp"
#include "backends/piece_walk.hpp"
#include "topology/error.hpp"

namespace collsim {

namespace {}  // namespace

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

cudaEvent_t new_event(int device, bool timing) {
  use_device(device);
  cudaEvent_t e = nullptr;
  cuda_check(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming),
             "cudaEventCreateWithFlags");
  return e;
}

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

struct Stream {
  Stream(int r, int c, OpCursor k) : rank(r), channel(c), cursor(std::move(k)) {}
  int rank;
  int channel;
  OpCursor cursor;
  std::vector<std::pair<Dependency, cudaEvent_t>> waits;       // this stream's, by op
  std::vector<std::pair<std::uint64_t, cudaEvent_t>> records;  // to record after op, by op
  std::size_t next_wait = 0;
  std::size_t next_record = 0;
  std::uint64_t piece = 0;
  bool received = false;
  bool started = false;
  const std::byte* outgoing = nullptr;
  CudaConn* in = nullptr;
  CudaConn* out = nullptr;
  std::uint64_t done_ops = 0;
  cudaEvent_t op_start = nullptr;
};

class CudaRun {
 public:
  CudaRun(CudaBackend::Plan& p, const Schedule& s, const RunOptions& o) : p_(p), s_(s), o_(o) {
    payload_ = std::max<std::uint64_t>(1, s.info().fifo.slot_payload);
    slots_ = static_cast<std::uint64_t>(std::max(1, s.info().fifo.slots));
    divisor_ = s.info().redop == ReduceOp::kAvg ? s.rank_count() : 0;
    for (int r : p.dev->ranks()) {
      first_stream_.push_back(static_cast<int>(streams_.size()));
      for (int c = 0; c < s.channel_count(); ++c) streams_.emplace_back(r, c, s.cursor(r, c));
      const std::vector<Dependency> deps = s.dependencies(r);
      for (std::size_t i = 0; i < deps.size(); ++i) {
        const Dependency& d = deps[i];
        stream(r, d.channel).waits.push_back({d, p.dep_events[r][i]});
        stream(r, d.after_channel).records.push_back({d.after_op, p.dep_events[r][i]});
      }
      for (int c = 0; c < s.channel_count(); ++c) {
        auto& rec = stream(r, c).records;
        std::stable_sort(rec.begin(), rec.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
      }
    }
    for (CudaConn& c : p.conns) c.sent_count = c.consumed_count = 0;
  }

  RunResult run() {
    RunResult res;
    res.rank_time.assign(s_.rank_count(), Time());
    p_.dev->begin();
    // Whatever happens, the devices must not stay parked behind their gates.
    struct OpenGates {
      DeviceRanks& dev;
      ~OpenGates() { dev.open_gates(); }
    } guard{*p_.dev};
    while (true) {
      bool progress = false;
      bool done = true;
      for (Stream& st : streams_) {
        if (st.cursor.done()) continue;
        use_device(p_.dev->device(st.rank));
        progress |= advance(st);
        done &= st.cursor.done();
      }
      if (done) break;
      if (!progress) {
        RunResult ignored;
        p_.dev->end(&ignored);  // let what was queued drain before reporting
        throw BackendError(stuck_message());
      }
    }
    p_.dev->end(&res);
    for (const auto& [t, start, end] : timed_) {
      res.op_timings.push_back({t.rank, t.channel, t.index, t.op,
                                p_.dev->since_start(t.rank, start),
                                p_.dev->since_start(t.rank, end)});
      cudaEventDestroy(start);
      cudaEventDestroy(end);
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
  Stream& stream(int rank, int channel) {
    const auto it = std::find(p_.dev->ranks().begin(), p_.dev->ranks().end(), rank);
    return streams_[first_stream_[it - p_.dev->ranks().begin()] + channel];
  }

  void queued(const Stream& st) { p_.dev->count_enqueued(st.rank); }

  void reduce(const Stream& st, void* dst, const void* a, const void* b, std::size_t n, bool post) {
    launch_reduce(s_.info().dtype, s_.info().redop, dst, a, b, n, post ? divisor_ : 0,
                  p_.dev->stream(st.rank, st.channel));
    queued(st);
  }

  void copy(const Stream& st, void* dst, const void* src, std::size_t n) {
    if (n == 0 || dst == src) return;
    cuda_check(
        cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, p_.dev->stream(st.rank, st.channel)),
        "cudaMemcpyAsync");
    queued(st);
  }

  void wait(const Stream& st, cudaEvent_t e) {
    cuda_check(cudaStreamWaitEvent(p_.dev->stream(st.rank, st.channel), e, 0),
               "cudaStreamWaitEvent");
    queued(st);
  }

  void record(const Stream& st, cudaEvent_t e) {
    cuda_check(cudaEventRecord(e, p_.dev->stream(st.rank, st.channel)), "cudaEventRecord");
    queued(st);
  }

  // Queues the consumption of the connection's next piece; false if it was not sent yet.
  bool receive(Stream& st, const Op& op, std::uint64_t off, std::size_t len) {
    CudaConn& in = *st.in;
    const std::uint64_t k = in.consumed_count;
    if (in.sent_count <= k) return false;
    wait(st, in.sent[k % slots_]);
    const std::byte* slot = in.fifo + (k % slots_) * in.slot_bytes;
    std::byte* d = writes_dst(op.kind) ? p_.dev->ptr(st.rank, op.dst) + off : nullptr;
    const std::byte* src = reads_src(op.kind) ? p_.dev->ptr(st.rank, op.src) + off : nullptr;
    switch (op.kind) {
      case OpKind::kRecv:
        copy(st, d, slot, len);
        break;
      case OpKind::kRecvReduce:
        reduce(st, d, d, slot, len, op.postop);
        break;
      case OpKind::kRecvReduceCopy:
        reduce(st, d, src, slot, len, op.postop);
        break;
      case OpKind::kRecvReduceSend:
        reduce(st, p_.dev->staging(st.rank, st.channel), src, slot, len, op.postop);
        st.outgoing = p_.dev->staging(st.rank, st.channel);
        break;
      case OpKind::kRecvReduceCopySend:
        reduce(st, d, src, slot, len, op.postop);
        st.outgoing = d;
        break;
      case OpKind::kRecvCopySend:
        copy(st, d, slot, len);
        st.outgoing = d;
        break;
      default:
        break;
    }
    record(st, in.consumed[k % slots_]);
    ++in.consumed_count;
    return true;
  }

  // Queues the copy of the next piece into the receiver's slot; false if the FIFO is full.
  bool send(Stream& st, const Op& op, std::uint64_t off, std::size_t len) {
    CudaConn& out = *st.out;
    const std::uint64_t k = out.sent_count;
    if (k >= slots_) {
      if (out.consumed_count <= k - slots_) return false;
      wait(st, out.consumed[k % slots_]);
    }
    const std::byte* from = receives(op.kind) ? st.outgoing : p_.dev->ptr(st.rank, op.src) + off;
    if (len > 0) {
      cuda_check(cudaMemcpyPeerAsync(out.fifo + (k % slots_) * out.slot_bytes,
                                     p_.dev->device(out.to), from, p_.dev->device(st.rank), len,
                                     p_.dev->stream(st.rank, st.channel)),
                 "cudaMemcpyPeerAsync");
      queued(st);
    }
    record(st, out.sent[k % slots_]);
    ++out.sent_count;
    bytes_sent_ += len;
    return true;
  }

  bool advance(Stream& st) {
    bool progress = false;
    while (!st.cursor.done()) {
      const Op& op = st.cursor.op();
      const std::uint64_t index = st.cursor.index();
      while (st.next_wait < st.waits.size() && st.waits[st.next_wait].first.op == index) {
        const auto& [d, e] = st.waits[st.next_wait];
        if (stream(st.rank, d.after_channel).done_ops <= d.after_op) return progress;
        wait(st, e);
        ++st.next_wait;
        progress = true;
      }
      if (!st.started) {
        st.started = true;
        if (receives(op.kind))
          st.in = &p_.conns[p_.conn_index.at({st.channel, op.recv_peer, st.rank})];
        if (sends(op.kind))
          st.out = &p_.conns[p_.conn_index.at({st.channel, st.rank, op.send_peer})];
        if (o_.record_ops) {
          st.op_start = new_event(p_.dev->device(st.rank), true);
          record(st, st.op_start);
        }
      }
      if (!receives(op.kind) && !sends(op.kind)) {
        std::byte* d = p_.dev->ptr(st.rank, op.dst);
        if (op.kind == OpKind::kCopy) {
          copy(st, d, p_.dev->ptr(st.rank, op.src), op.bytes);
        } else {
          reduce(st, d, d, p_.dev->ptr(st.rank, op.src), op.bytes, op.postop);
        }
      } else {
        const PieceWalk w = walk_pieces(
            st.piece, st.received, op, payload_, progress,
            [&](std::uint64_t off, std::size_t len) { return receive(st, op, off, len); },
            [&](std::uint64_t off, std::size_t len) { return send(st, op, off, len); });
        if (w == PieceWalk::kBlocked) return progress;
      }
      if (o_.record_ops) {
        cudaEvent_t end = new_event(p_.dev->device(st.rank), true);
        record(st, end);
        timed_.push_back({OpTiming{st.rank, st.channel, index, op, {}, {}}, st.op_start, end});
      }
      while (st.next_record < st.records.size() && st.records[st.next_record].first == index) {
        record(st, st.records[st.next_record].second);
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
    StuckReport report("cuda");
    for (const Stream& st : streams_) {
      if (st.cursor.done()) continue;
      const Op& op = st.cursor.op();
      const char* why = receives(op.kind) && !st.received ? "waits for data"
                        : sends(op.kind)                  ? "waits for a free slot"
                                                          : "waits for a dependency";
      report.add(st.rank, st.channel, st.cursor.index(), op, why);
    }
    return report.str();
  }

  struct Timed {
    OpTiming timing;
    cudaEvent_t start;
    cudaEvent_t end;
  };

  CudaBackend::Plan& p_;
  const Schedule& s_;
  const RunOptions& o_;
  std::uint64_t payload_ = 1;
  std::uint64_t slots_ = 8;
  int divisor_ = 0;
  std::vector<Stream> streams_;
  std::vector<int> first_stream_;
  std::vector<Timed> timed_;
  std::uint64_t ops_ = 0;
  std::uint64_t bytes_sent_ = 0;
};

}  // namespace

RunResult CudaBackend::run(const Schedule& s, HostBuffers& buffers, const RunOptions& options) {
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
