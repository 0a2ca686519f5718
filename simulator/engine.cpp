// The hot loop: streams advancing piece by piece (see engine.hpp and simulate.hpp for the model).
#include "simulator/engine.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "simulator/flow_network.hpp"
#include "simulator/trace.hpp"

namespace collsim::detail {

namespace {

bool is_local(OpKind k) { return k == OpKind::kCopy || k == OpKind::kReduce; }

}  // namespace

template <class Net>
Result Engine<Net>::run() {
  if (opts_.lattice && !cut_through_) {
    if (std::optional<Result> r = run_lattice()) return *std::move(r);
  }
  if constexpr (!Net::kKnowsFinish) {
    if (const Time bound = give_up_now(give_up_after_, give_up_live_); bound < Time::max()) {
      const Time floor = bytes_floor(bound);
      if (floor > bound) {
        now_ = floor;
        return gave_up();
      }
    }
  }
  init_streams();
  if constexpr (Net::kKnowsFinish) {
    net_.emplace();
  } else {
    net_.emplace(link_capacity_, route_links_, queue_);
  }
  const Time launch = proto_.launch;
  for (std::uint32_t sid = 0; sid < streams_.size(); ++sid) wake(sid, launch);
  for (;;) {
    if constexpr (!Net::kKnowsFinish) {
      // The flows that started and ended at this instant are re-rated together once it is over.
      if (net_->unsettled() && !queue_.more_at_last_time()) net_->settle(now_);
    }
    if (queue_.empty()) break;
    peak_ = std::max(peak_, queue_.size());
    const Event e = queue_.pop();
    now_ = e.time();
    if (e.kind() == EventKind::kWake) {
      const std::uint32_t sid = e.target();
      StreamState& s = streams_[sid];
      if (!s.wake_pending || s.wake_seq != e.seq()) continue;
      s.wake_pending = false;
      if (past_bound(now_)) return gave_up();
      count_event();
      advance(sid);
    } else if constexpr (!Net::kKnowsFinish) {
      std::uint32_t cid = 0;
      if (!net_->finish(e.target(), e.seq(), now_, cid)) continue;
      if (past_bound(now_)) return gave_up();
      count_event();
      flow_done(cid);
    }
  }
  for (const StreamState& s : streams_) {
    if (!s.done) report_stuck();
  }
  return collect();
}

// A lower bound on the run's time under max-min, from its ops' bytes alone: no piece leaves
// before the launch, and then
//  - the flows on a link never carry more than its capacity between them, so the busiest link
//    needs its wire bytes (the simulated actors' sends, each folded channel's times its copies)
//    over its capacity;
//  - a stream pushes one piece at a time, each at most at its channel's cap, and a GPU's stream
//    then holds its channel for the protocol's step overhead (flow_done), so the busiest stream
//    needs its wire bytes over the cap plus one overhead per non-empty piece it sends.
// A run that must end after give_up_after is given up before it starts. (Not under the
// contention-free model, whose connections never share a link and can together exceed it.) The
// walk stops as soon as the bound passes `enough`: the ops seen so far already bound the run.
template <class Net>
Time Engine<Net>::bytes_floor(Time enough) {
  // The max-min fill's residual: kBytesFloorSlack (simulate.hpp).
  const auto floor_of = [&](double seconds) {
    return proto_.launch +
           Time::from_ps(static_cast<std::int64_t>(seconds * (1 - kBytesFloorSlack) * 1e12));
  };
  const double enough_seconds =
      enough == Time::max()
          ? std::numeric_limits<double>::infinity()
          : static_cast<double>((enough - proto_.launch).ps()) * 1e-12 / (1 - kBytesFloorSlack);
  std::vector<double> wire(link_capacity_.size(), 0.0);
  double stream_seconds = 0;
  for (int r = 0; r < period_; ++r) {
    for (int c = 0; c < channels_; ++c) {
      const int actual = fold_.simulated[c];
      const double weight = fold_.weight[c];
      const double overhead =
          static_cast<double>(step_overhead(static_cast<std::uint32_t>(r * channels_ + c)).ps()) *
          1e-12;
      int peer = -1;
      std::uint32_t route = 0;
      double seconds = 0;
      for (auto k = sched_.source()->stream(r, actual); k->index() < k->size(); k->next()) {
        const Op& op = k->op();
        if (!sends(op.kind) || op.bytes == 0) continue;
        if (op.send_peer != peer) {
          peer = op.send_peer;
          route = route_between(device_[r], device_[peer], actual);
        }
        const RouteInfo& ri = routes_[route];
        const double bytes = static_cast<double>(op.bytes) * wire_per_byte_;
        // Each non-empty piece is followed by the step overhead.
        seconds +=
            bytes / ri.cap + static_cast<double>((op.bytes + payload_ - 1) / payload_) * overhead;
        if (seconds > enough_seconds) return floor_of(seconds);
        for (std::uint32_t i = 0; i < ri.link_count; ++i) {
          const std::uint32_t l = route_links_[ri.first_link + i];
          wire[l] += bytes * weight;
          if (wire[l] / link_capacity_[l] > enough_seconds) {
            return floor_of(wire[l] / link_capacity_[l]);
          }
        }
      }
      stream_seconds = std::max(stream_seconds, seconds);
    }
  }
  double seconds = stream_seconds;
  for (std::size_t l = 0; l < wire.size(); ++l) {
    if (wire[l] > 0) seconds = std::max(seconds, wire[l] / link_capacity_[l]);
  }
  return floor_of(seconds);
}

// Every live event leads to work at its instant or later on a stream that has not finished (a
// wake is only scheduled for an active or waiting stream; a flow's end delivers a piece still to
// be consumed), so the run ends after `now_`.
template <class Net>
Result Engine<Net>::gave_up() const {
  Result r;
  r.total = now_;
  r.events = events_;
  r.gave_up = true;
  return r;
}

template <class Net>
void Engine<Net>::wake(std::uint32_t sid, Time t) {
  StreamState& s = streams_[sid];
  if (s.wake_pending && s.wake_at <= t) return;
  s.wake_pending = true;
  s.wake_at = t;
  s.wake_seq = queue_.push(t, EventKind::kWake, sid);
}

template <class Net>
bool Engine<Net>::dependencies_met(std::uint32_t sid) {
  StreamState& s = streams_[sid];
  while (s.dep_next < s.dep_end && deps_[s.dep_next].op < s.completed) ++s.dep_next;
  for (std::uint32_t d = s.dep_next; d < s.dep_end && deps_[d].op == s.completed; ++d) {
    const Dependency& dep = deps_[d];
    const std::uint32_t after = sid - static_cast<std::uint32_t>(dep.channel) +
                                static_cast<std::uint32_t>(dep.after_channel);
    if (streams_[after].completed > dep.after_op) continue;
    waiters_[after].emplace_back(sid, dep.after_op);
    s.dep_waiting = true;
    return false;
  }
  s.dep_waiting = false;
  return true;
}

template <class Net>
bool Engine<Net>::begin_op(std::uint32_t sid) {
  StreamState& s = streams_[sid];
  if (s.completed == s.op_count) {
    s.done = true;
    return false;
  }
  if (s.dep_end > s.dep_next && !dependencies_met(sid)) return false;
  const Op& op = s.cursor->op();
  s.op_kind = op.kind;
  s.op_bytes = op.bytes;
  s.active = true;
  s.piece = 0;
  s.op_start = std::max(now_, s.busy);
  s.in_conn = s.out_conn = -1;
  if (is_local(op.kind)) {
    s.pieces = 1;
    return true;
  }
  s.pieces =
      static_cast<std::uint32_t>(std::max<std::uint64_t>(1, (op.bytes + payload_ - 1) / payload_));
  const int rank = static_cast<int>(sid) / channels_;
  const int channel = static_cast<int>(sid) % channels_;
  if (receives(op.kind)) {
    if (op.recv_peer != s.recv_peer) {
      s.recv_peer = op.recv_peer;
      s.recv_conn = static_cast<std::int32_t>(connection(channel, op.recv_peer, rank));
    }
    s.in_conn = s.recv_conn;
  }
  if (sends(op.kind)) {
    if (op.send_peer != s.send_peer) {
      s.send_peer = op.send_peer;
      s.send_conn = static_cast<std::int32_t>(connection(channel, rank, op.send_peer));
    }
    s.out_conn = s.send_conn;
  }
  return true;
}

template <class Net>
void Engine<Net>::complete_op(std::uint32_t sid, Time t) {
  StreamState& s = streams_[sid];
  ++ops_;
  if (trace_ != nullptr) {
    TraceOpRecord rec;
    rec.rank = static_cast<std::int32_t>(sid) / channels_;
    rec.channel = fold_.simulated[sid % static_cast<std::uint32_t>(channels_)];
    rec.index = s.completed;
    rec.op = s.cursor->op();
    rec.start = s.op_start;
    rec.end = t;
    if (s.out_conn >= 0) {
      const std::uint64_t k = conns_[s.out_conn].send_ops;
      rec.send_flow = (static_cast<std::uint64_t>(s.out_conn) << 24 | k) + 1;
    }
    if (s.in_conn >= 0) {
      const std::uint64_t k = conns_[s.in_conn].recv_ops;
      rec.recv_flow = (static_cast<std::uint64_t>(s.in_conn) << 24 | k) + 1;
    }
    if (s.out_conn >= 0) {
      // A send occupies its channel until its last piece has left: known now without
      // contention, at flow_done under max-min.
      ConnState& c = conns_[s.out_conn];
      rec.end = std::max(rec.end, trace_->pieces[c.trace_piece].end);
      if (!Net::kKnowsFinish) c.trace_open_op = static_cast<std::int32_t>(trace_->ops.size());
    }
    trace_->ops.push_back(rec);
  }
  if (s.out_conn >= 0) ++conns_[s.out_conn].send_ops;
  if (s.in_conn >= 0) ++conns_[s.in_conn].recv_ops;
  s.active = false;
  ++s.completed;
  s.last_done = t;
  s.cursor->next();
  auto& w = waiters_[sid];
  if (!w.empty()) {
    // Wake every stream whose dependency this completion satisfies; keep the others.
    std::size_t keep = 0;
    for (std::size_t i = 0; i < w.size(); ++i) {
      if (w[i].second < s.completed) {
        wake(w[i].first, t);
      } else {
        w[keep++] = w[i];
      }
    }
    w.resize(keep);
  }
}

template <class Net>
void Engine<Net>::consume(ConnState& c, std::uint64_t j, Time done) {
  ++c.consumed;
  const RouteInfo& r = routes_[c.route];
  const Time freed = done + r.credit_latency;
  credit(c, j) = freed;  // slot of piece j serves piece j + slots
  if (c.sender_waiting && c.posted == j + slots_) {
    c.sender_waiting = false;
    wake(c.sender, freed);
  }
}

template <class Net>
void Engine<Net>::post(std::uint32_t sid, std::uint32_t cid, std::uint64_t payload,
                       const Time* gate) {
  ConnState& c = conns_[cid];
  StreamState& s = streams_[sid];
  const std::uint64_t q = c.posted++;
  const std::uint64_t wire = payload == payload_ ? full_wire_ : wire_bytes(payload);
  c.wire_bytes += wire;
  ++pieces_;
  const RouteInfo& r = routes_[c.route];
  // An empty piece (a ring step over an empty segment) occupies no link: it only carries the
  // step's latency, whatever the network model, and needs no flow.
  const Time tx = wire == 0 ? Time() : transmit(cid, c.route, wire);
  if (c.staged_read) read_time(c, q) = tx == kPending ? now_ : tx;  // max-min: its start
  if (trace_ != nullptr) {
    c.trace_piece = static_cast<std::uint32_t>(trace_->pieces.size());
    trace_->pieces.push_back({c.route, now_, tx == kPending ? now_ : now_ + tx, wire});
  }
  if (cut_through_) {
    const Time pass = pass_time(wire, r);
    head(c, q) = now_ + r.latency + pass;
    if (gate != nullptr) last_pass_[sid] = pass;
  }
  if (Net::kKnowsFinish || wire == 0) {
    // Contention-free, the input's arrival is known: it was set when its piece was posted.
    const Time sent = gate != nullptr ? std::max(now_ + tx, *gate + last_pass_[sid]) : now_ + tx;
    s.busy = sent + (wire == 0 ? Time() : step_overhead(sid));
    arrival(c, q) = sent + r.latency;
    if (c.receiver_waiting && c.consumed == q) {
      c.receiver_waiting = false;
      wake(c.receiver, c.receiver_waits_head ? head(c, q) : arrival(c, q));
    }
    if (gate != nullptr) {
      ConnState& in = conns_[s.in_conn];
      consume(in, in.consumed, sent);
    }
  } else {
    arrival(c, q) = kPending;
    s.in_flight = true;
    s.forwarding = gate != nullptr;
    if (c.receiver_waiting && c.receiver_waits_head && c.consumed == q) {
      c.receiver_waiting = false;
      wake(c.receiver, head(c, q));
    }
  }
}

template <class Net>
void Engine<Net>::finish_forward(std::uint32_t sid, Time sent) {
  StreamState& s = streams_[sid];
  const auto out_id = static_cast<std::uint32_t>(s.out_conn);
  ConnState& in = conns_[s.in_conn];
  sent = std::max(sent, arrival(in, in.consumed) + last_pass_[sid]);
  s.forwarding = false;
  s.in_flight = false;
  s.busy = sent + step_overhead(sid);
  consume(in, in.consumed, sent);
  ConnState& c = conns_[out_id];
  const std::uint64_t q = c.posted - 1;
  arrival(c, q) = sent + routes_[c.route].latency;
  release_receiver(out_id, q);
  advance(sid);
}

template <class Net>
inline void Engine<Net>::release_receiver(std::uint32_t cid, std::uint64_t q) {
  ConnState& c = conns_[cid];
  if (c.consumed != q) return;
  const std::uint32_t receiver = c.receiver;
  if (c.forward_waiting) {
    // The receiver forwarded this piece cut-through and has sent its copy: that ends now. It
    // advances the receiver's stream, which may open connections: `c` is not used after it.
    c.forward_waiting = false;
    finish_forward(receiver, sent_at_[receiver]);
  } else if (c.receiver_waiting) {
    c.receiver_waiting = false;
    wake(receiver, arrival(c, q));
  }
}

template <class Net>
void Engine<Net>::flow_done(std::uint32_t cid) {
  ConnState& c = conns_[cid];
  const std::uint64_t q = c.posted - 1;
  if (c.staged_read) read_time(c, q) = now_ - read_time(c, q);
  if (trace_ != nullptr) {
    trace_->pieces[c.trace_piece].end = now_;
    if (c.trace_open_op >= 0) {
      TraceOpRecord& op = trace_->ops[static_cast<std::size_t>(c.trace_open_op)];
      op.end = std::max(op.end, now_);
      c.trace_open_op = -1;
    }
  }
  StreamState& s = streams_[c.sender];
  if (s.forwarding) {
    // A cut-through forward: its piece ends once its input has arrived too.
    ConnState& in = conns_[s.in_conn];
    if (arrival(in, in.consumed) == kPending) {
      in.forward_waiting = true;
      sent_at_[c.sender] = now_;
      return;
    }
    finish_forward(c.sender, now_);
    return;
  }
  arrival(c, q) = now_ + routes_[c.route].latency;
  s.in_flight = false;
  s.busy = now_ + step_overhead(c.sender);  // the step's own overhead after the data
  const std::uint32_t sender = c.sender;
  release_receiver(cid, q);  // may move conns_: `c` is not used after it
  advance(sender);
}

template <class Net>
Time Engine<Net>::transmit(std::uint32_t cid, std::uint32_t route, std::uint64_t wire) {
  if constexpr (Net::kKnowsFinish) {
    if (wire == full_wire_) return full_tx_[route];
  }
  return net_->start(routes_[route], wire, now_, cid, conns_[cid].weight);
}

template <class Net>
void Engine<Net>::advance(std::uint32_t sid) {
  StreamState& s = streams_[sid];
  while (!s.in_flight) {
    if (!s.active && !begin_op(sid)) {
      if (s.done) {
        s.last_done = std::max(s.last_done, s.busy);
        if (p2p_warps_) s.last_done = std::max(s.last_done, recv_busy_[sid]);
      }
      return;
    }
    const OpKind kind = s.op_kind;
    // A receive on NCCL's point-to-point kernel waits for its own warps, not for the sends'.
    const bool recv_warps = p2p_warps_ && s.out_conn < 0 && s.in_conn >= 0;
    Time ready = std::max(now_, recv_warps ? recv_busy_[sid] : s.busy);
    if (is_local(kind)) {
      if (ready > now_) return wake(sid, ready);
      const double rate = kind == OpKind::kCopy ? copy_rate_ : reduce_rate_;
      s.busy = now_ + (rate > 0 ? wire_time(static_cast<double>(s.op_bytes), rate) : Time());
      complete_op(sid, s.busy);
      continue;
    }
    const std::uint64_t done_bytes = static_cast<std::uint64_t>(s.piece) * payload_;
    const std::uint64_t bytes =
        s.op_bytes > done_bytes ? std::min(payload_, s.op_bytes - done_bytes) : 0;
    ConnState* in = s.in_conn >= 0 ? &conns_[s.in_conn] : nullptr;
    ConnState* out = s.out_conn >= 0 ? &conns_[s.out_conn] : nullptr;
    std::uint64_t j = 0;
    // Cut-through: a piece this op forwards may leave as its first line comes in.
    const bool cut = cut_through_ && in != nullptr && out != nullptr && bytes > 0 &&
                     !in->staged_read && !out->proxied && !is_switch(sid);
    if (in != nullptr) {
      j = in->consumed;
      if (j >= in->posted || (!cut && arrival(*in, j) == kPending)) {
        in->receiver_waiting = true;
        in->receiver_waits_head = cut;
        return;
      }
      Time at = cut ? head(*in, j) : arrival(*in, j);
      if (!cut && reduce_rate_ > 0 && bytes > 0 && reduces(kind) && !is_switch(sid)) {
        at += reduce_time(bytes);
      }
      ready = std::max(ready, at);
    }
    if (out != nullptr && out->posted >= slots_) {
      if (out->consumed + slots_ <= out->posted) {
        out->sender_waiting = true;
        return;
      }
      ready = std::max(ready, credit(*out, out->posted));
    }
    if (ready > now_) return wake(sid, ready);
    Time done = now_;
    if (in != nullptr) {
      if (in->staged_read && out == nullptr && bytes > 0) {
        // NCCL's receive copies the piece out of host memory (the SHM buffer or the proxy's
        // bounce buffer): its channel's threads read it across PCIe, at the rate it was written,
        // and hold the channel and the slot until they have. A receive that also sends overlaps
        // the read with its own push; on the point-to-point kernel the read holds only the
        // receiving warps, and the channel's sends go on.
        Time& warps = recv_warps ? recv_busy_[sid] : s.busy;
        warps = now_ + read_time(*in, j);
        done = warps;
      }
      if (!cut) consume(*in, j, done);
    }
    if (cut) {
      // The input is consumed once the piece has gone on (post or finish_forward).
      post(sid, static_cast<std::uint32_t>(s.out_conn), bytes, &arrival(*in, j));
    } else if (out != nullptr) {
      post(sid, static_cast<std::uint32_t>(s.out_conn), bytes);
    }
    if (is_switch(sid) && bytes > 0 && reduces(kind)) {
      // The switch's reducer is a throughput resource: it stays busy with this piece.
      s.busy = now_ + switch_reduce_time(sid, bytes);
      done = s.busy;
    }
    if (++s.piece == s.pieces) complete_op(sid, done);
  }
}

// The rest of the engine is instantiated in engine_setup.cpp.
template Result Engine<AlphaBetaNetwork>::run();
template Result Engine<FlowNetwork>::run();

}  // namespace collsim::detail
