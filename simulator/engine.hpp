// The discrete-event executor behind simulate() (internal to simulator/).
//
// State is per stream (rank x channel: its cursor, current op and piece, when its channel is
// free) and per connection (channel, sender, receiver: pieces posted and consumed, and two rings
// of `slots` times, the arrival of each unconsumed piece and the instant each slot frees at the
// sender). Nothing grows with the op count.
//
// Events are only needed where a stream must wait for a moment it cannot act before: a piece not
// yet arrived, a slot not yet freed, its own channel still pushing, a dependency. A stream that
// blocks on something not yet known (a piece still unsent, a slot still unconsumed) raises a flag
// on the connection instead, and whoever makes it known wakes it at the right time. In the
// contention-free model a bandwidth-bound ring therefore costs about one event per piece. The
// max-min model adds one event per flow end, and re-rates the flows that started and ended at an
// instant together once no event is left at it (FlowNetwork::settle).
//
// Engine<Net> is instantiated for AlphaBetaNetwork and FlowNetwork (engine.cpp,
// engine_setup.cpp).
#pragma once

#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "algorithms/ir/schedule.hpp"
#include "simulator/cost_params.hpp"
#include "simulator/event_queue.hpp"
#include "simulator/id_index.hpp"
#include "simulator/network.hpp"
#include "simulator/simulate.hpp"
#include "simulator/symmetry.hpp"

namespace collsim::detail {

// Hot fields first: advance() touches the first cache line on every piece. The current op
// itself stays in the cursor (valid until complete_op() moves it on); only its kind and size are
// copied here.
struct StreamState {
  Time busy;  // when the channel finishes pushing its last piece
  Time wake_at;
  std::uint64_t wake_seq = kNoEvent;  // the pending wake's event; older ones are superseded
  std::uint64_t op_bytes = 0;
  std::uint32_t piece = 0;  // next piece of the current op
  std::uint32_t pieces = 0;
  std::int32_t in_conn = -1;  // current op's connections
  std::int32_t out_conn = -1;
  OpKind op_kind = OpKind::kCopy;
  bool active = false;     // an op is loaded
  bool in_flight = false;  // max-min: a piece is being pushed, its end is an event
  bool wake_pending = false;
  bool done = false;
  bool dep_waiting = false;
  bool forwarding = false;      // cut-through: a forwarded piece's input is still to be consumed
  std::uint64_t completed = 0;  // ops completed (= index of the current op)
  std::uint64_t op_count = 0;
  std::int32_t send_peer = -1;  // last peers resolved, and their connections
  std::int32_t send_conn = -1;
  std::int32_t recv_peer = -1;
  std::int32_t recv_conn = -1;
  std::uint32_t dep_next = 0;  // into deps_ (this stream's range)
  std::uint32_t dep_end = 0;
  Time op_start;
  Time last_done;  // completion of the last op
  std::unique_ptr<OpStream> cursor;
};

struct ConnState {
  std::uint32_t route = 0;
  std::uint32_t sender = 0;  // stream ids
  std::uint32_t receiver = 0;
  std::uint32_t ring = 0;  // into times_: slot k at ring + 2k (arrival), ring + 2k + 1 (credit)
  // Trace: the recorded send op whose last piece is still on the wire (-1: none); its slice ends
  // when that piece's last byte has left, not when it was posted. (Fills ring's padding: a
  // trace holds at most 2,000,000 ops.)
  std::int32_t trace_open_op = -1;
  std::uint64_t posted = 0;
  std::uint64_t consumed = 0;
  std::uint64_t wire_bytes = 0;
  std::uint32_t send_ops = 0;  // ops completed on each side (trace flow ids)
  std::uint32_t recv_ops = 0;
  std::uint32_t trace_piece = 0;  // max-min + trace: the recorded piece in flight
  std::uint32_t weight = 1;       // NCCL channels its channel stands for (ChannelFold)
  bool sender_waiting = false;
  bool receiver_waiting = false;
  bool staged_read = false;  // RouteInfo::staged_read of its route
  bool proxied = false;      // RouteInfo::proxied of its route
  // Cut-through: the receiver forwards and waits only for the next piece's first line, not its
  // arrival; and it has sent its copy of the piece, whose end waits for this one's arrival.
  bool receiver_waits_head = false;
  bool forward_waiting = false;
};

// events_so_far() (simulate.hpp): each engine adds its events in batches.
inline std::atomic<std::uint64_t> g_events{0};

template <class Net>
class Engine {
 public:
  Engine(const Schedule& s, const Topology& topo, const SimOptions& o, const CostParams& costs);
  Result run();
  // Max-min: a lower bound on run()'s total from the ops' bytes (bytes_floor), not simulating;
  // one above `enough` once it is known to pass it.
  Time lower_bound(Time enough) { return bytes_floor(enough); }

 private:
  // engine_setup.cpp
  void init_streams();
  std::uint32_t connection(int channel, int sender, int receiver);
  std::uint32_t route_between(int from_device, int to_device, int channel);
  Result collect();
  // Fills r.links and r.bottleneck from the wire bytes each link carried.
  void link_usage(Result& r, std::vector<std::uint64_t>& bytes) const;
  [[noreturn]] void report_stuck() const;

  // lattice.cpp: a ring whose ops move at most one piece, without events, where that is exact;
  // nothing when it is not.
  std::optional<Result> run_lattice();

  // engine.cpp
  void advance(std::uint32_t sid);
  bool begin_op(std::uint32_t sid);
  bool dependencies_met(std::uint32_t sid);
  void complete_op(std::uint32_t sid, Time t);
  // The receiver is done with piece j at `done`: its slot frees a route's latency later.
  void consume(ConnState& c, std::uint64_t j, Time done);
  // `gate`: a cut-through forward's input piece, whose arrival its own piece cannot precede
  // (nullptr: none).
  void post(std::uint32_t sid, std::uint32_t cid, std::uint64_t payload,
            const Time* gate = nullptr);
  // A cut-through forward's piece has left its sender at `sent` (its flow's end) and its input
  // piece has arrived: the piece's end is the later of the two, and the input is consumed.
  void finish_forward(std::uint32_t sid, Time sent);
  // Piece `q` of `cid` has its arrival (max-min, or a cut-through forward's end): the receiver
  // that waited for it goes on, a forward of it ending (finish_forward) or a receive waking.
  // Inlined: flow_done runs it for every max-min piece (out of line it cost BM_FlatSwitchRingFull
  // about 2 % of its event rate, 4.40 against 4.52 M events/s, medians of five runs each).
  [[gnu::always_inline]] void release_receiver(std::uint32_t cid, std::uint64_t q);
  void flow_done(std::uint32_t cid);
  void wake(std::uint32_t sid, Time t);
  // One more event processed; every kEventBatch of them are added to events_so_far().
  void count_event() {
    if (++events_ % kEventBatch == 0) g_events.fetch_add(kEventBatch, std::memory_order_relaxed);
  }
  Result gave_up() const;
  // Max-min: a lower bound on the run's time, from its ops' bytes; the walk stops once the
  // bound passes `enough`.
  Time bytes_floor(Time enough);
  // A piece's arrival and its slot's credit sit side by side: the receiver reads one and writes
  // the other, and so does the sender, so each touches one cache line, not two.
  std::uint64_t slot(std::uint64_t j) const {
    return slot_mask_ != 0 ? j & slot_mask_ : j % slots_;
  }
  // Wire bytes of a piece of `payload` bytes: the protocol's flags and padding, rounded up.
  std::uint64_t wire_bytes(std::uint64_t payload) const {
    return wire_per_byte_ == 1.0 ? payload
                                 : static_cast<std::uint64_t>(
                                       std::ceil(static_cast<double>(payload) * wire_per_byte_));
  }
  Time arrival(const ConnState& c, std::uint64_t j) const { return times_[c.ring + 2 * slot(j)]; }
  Time& arrival(ConnState& c, std::uint64_t j) { return times_[c.ring + 2 * slot(j)]; }
  Time& credit(ConnState& c, std::uint64_t j) { return times_[c.ring + 2 * slot(j) + 1]; }
  // A host-staged piece's time to read back out of host memory: the time it took to write in
  // (under max-min its flow's start until it ends). Only for connections with staged_read.
  Time& read_time(const ConnState& c, std::uint64_t j) { return reads_[c.ring / 2 + slot(j)]; }
  // When a piece's first line reaches its receiver (its post plus the route's latency): where a
  // forwarding op may start on it under cut-through. Only when cut_through_.
  Time& head(const ConnState& c, std::uint64_t j) { return heads_[c.ring / 2 + slot(j)]; }
  // wire_time() for the common sizes, computed once (same value, without the long double
  // division per piece).
  Time transmit(std::uint32_t cid, std::uint32_t route, std::uint64_t wire);
  Time reduce_time(std::uint64_t bytes) const {
    return bytes == payload_ ? reduce_full_ : wire_time(static_cast<double>(bytes), reduce_rate_);
  }
  // Whether stream `sid` belongs to a switch actor (schedule.hpp, "Switch actors"): it reduces
  // at the switch's rate, which it holds while it does (a GPU's reduction is a delay per piece).
  bool is_switch(std::uint32_t sid) const { return sid >= first_switch_stream_; }
  // What stream `sid`'s sender spends on a non-empty piece besides moving it: the protocol's
  // step overhead on a GPU's channel; a switch's own multicast and reduction have none.
  Time step_overhead(std::uint32_t sid) const {
    return is_switch(sid) ? Time() : proto_.step_overhead;
  }
  // An NVSwitch reduces at switch_reduce_rate_; a network switch (SHARP) at its ports' rate,
  // which its links already charge: free.
  Time switch_reduce_time(std::uint32_t sid, std::uint64_t bytes) const {
    return switch_reduce_rate_ > 0 && sid < first_network_switch_stream_
               ? wire_time(static_cast<double>(bytes), switch_reduce_rate_)
               : Time();
  }

  const Schedule& sched_;
  const Topology& topo_;
  const SimOptions& opts_;
  const CostParams& costs_;
  const ProtocolCost& proto_;
  TraceRecorder* trace_;
  int ranks_;
  int period_;  // ranks simulated: ranks_, or one period of a rank symmetry (symmetry.hpp)
  // Per link, the one standing for its orbit under that symmetry; empty when links are not
  // shared between periods (RankSymmetry::link_image).
  std::vector<std::int32_t> link_image_;
  int channels_ = 0;  // IR channels simulated: all, or the copies' representatives
  ChannelFold fold_;  // simulated channel -> schedule channel and weight (symmetry.hpp)
  std::uint64_t slots_;
  std::uint64_t slot_mask_;  // slots_ - 1 when a power of two (> 1), else 0
  std::uint64_t payload_;
  std::uint64_t full_wire_;        // wire bytes of a full piece
  Time reduce_full_;               // reduction delay of a full piece
  double wire_per_byte_;           // 1 / protocol efficiency
  double wire_cap_;                // a channel's cap in wire bytes/s (infinity: none)
  double reduce_rate_;             // bytes/s; 0 = free
  double switch_reduce_rate_ = 0;  // per stream of a switch actor, bytes/s; 0 = free
  double copy_rate_;
  // The schedule runs on NCCL's point-to-point kernel (ScheduleInfo::p2p), whose channels give
  // their sends and their receives warps of their own (src/device/sendrecv.h: nSendWarpPerWork
  // and nRecvWarpPerWork): a receive that reads its piece back out of host memory holds the
  // receiving warps, not the channel's sends: recv_busy_[stream] is when they are done with
  // the last piece (kept apart from StreamState, whose size the hot loop feels; empty unless
  // p2p_warps_).
  bool p2p_warps_ = false;
  std::vector<Time> recv_busy_;
  // CostParams::line_forwarding on an LL or LL128 schedule: LL and LL128 carry a flag in every
  // line, so an op that receives and sends forwards the lines as they come, one pass of the
  // channel's threads at a time (ProtocolGeometry::pass_bytes; NCCL src/device/prims_ll.h,
  // prims_ll128.h): a piece forwarded over NVLink or PCIe starts once its input's first pass is
  // in and ends no earlier than one pass after the input's arrival. Simple's flag follows a whole
  // slice, and the network's proxy sends whole steps: store and forward there. A schedule whose
  // pieces all fit in one pass forwards store and forward too, and leaves this off. The lattice
  // (lattice.cpp) models store and forward only, so it stands aside while this is on.
  bool cut_through_ = false;
  double pass_wire_ = 0;       // ProtocolGeometry::pass_bytes, when cut_through_
  std::vector<Time> heads_;    // per slot as times_ / 2, sized when cut_through_
  std::vector<Time> sent_at_;  // per stream: a forward's flow end awaiting its input
  std::vector<Time> last_pass_;  // per stream: a forward's last pass, pushed after its input is in
  // One pass of a `wire`-byte piece over `r` at the route's rate (RouteInfo::rate; the whole
  // piece if it is smaller).
  Time pass_time(std::uint64_t wire, const RouteInfo& r) const {
    if (!(r.rate > 0)) return Time();
    return wire_time(std::min(pass_wire_, static_cast<double>(wire)), r.rate);
  }
  std::uint32_t first_switch_stream_ =
      0;                               // streams are actor-major: the ranks', then the switches'
  std::uint32_t first_network_switch_stream_ = 0;  // the NVSwitches' first, then the network's
  std::vector<int> gpu_;               // schedule rank -> cluster rank
  std::vector<int> device_;  // schedule actor (ranks, then switches) -> topology device id

  std::vector<StreamState> streams_;
  std::vector<Dependency> deps_;  // per stream ranges (StreamState::dep_next/dep_end)
  std::vector<std::vector<std::pair<std::uint32_t, std::uint64_t>>> waiters_;  // by stream
  std::vector<ConnState> conns_;
  std::vector<Time> times_;
  std::vector<Time> reads_;  // per slot as times_ / 2, sized once a staged connection exists
  IdIndex conn_index_;
  std::vector<RouteInfo> routes_;
  std::vector<Time> full_tx_;  // contention-free: per route, transmit time of a full piece
  std::vector<std::uint32_t> route_links_;
  IdIndex route_index_;
  // The distinct link sequences between two devices: (from, to) -> the last route (index into
  // routes_) that added one, and per route the one added before it for the same pair
  // (IdIndex::kNone ends the chain). A chain, not a vector per pair: an all-to-all of N GPUs
  // has N^2 pairs.
  IdIndex pair_head_;
  std::vector<std::uint32_t> pair_next_;
  std::vector<double> link_capacity_;

  EventQueue queue_;
  std::optional<Net> net_;
  Time now_;
  Time give_up_after_ = Time::max();  // SimOptions::give_up_after
  const std::atomic<std::int64_t>* give_up_live_ = nullptr;  // SimOptions::give_up_live
  // Past either bound: the run cannot beat what it is compared with.
  bool past_bound(Time t) const { return t > give_up_now(give_up_after_, give_up_live_); }
  std::uint64_t events_ = 0;
  std::uint64_t pieces_ = 0;
  std::uint64_t ops_ = 0;
  std::size_t peak_ = 0;
};

}  // namespace collsim::detail
