// The latency lattice: a ring AllReduce whose ops move at most one piece each (RingLattice,
// schedule.hpp), evaluated cell by cell without events where that gives the event simulation's
// result exactly.
//
// Why. A small message on many ranks is a ring of 2(n-1) steps in which nearly every piece is
// empty: 8 B on 24,576 GPUs fills one segment per channel and leaves 24,575 empty, so the event
// simulation spends 2.4 G events passing latencies on (docs/scale.md). Those pieces use no link,
// so their times follow from a few sums and maxima; only the pieces that carry data meet the
// network.
//
// What the engine does with a piece, restated for cell (p, i): the member at ring position p
// running its op i (engine.cpp advance, consume, post, flow_done), S slices a step, `slots` FIFO
// slots a connection:
//   t(p, i) = max( free(p)                         its own previous op (and that op's send)
//                  A(p-1, i-S) [+ reduction]       the piece it receives, sent by p-1 at op i-S
//                  t(p+1, i-slots+S) + clat(p) )   the slot it sends into, freed when p+1
//                                                  consumed the piece `slots` before
//   empty piece:  A(p, i) = t + lat(p),               free(p) = t
//   data piece:   A(p, i) = t + tx + lat(p),          free(p) = t + tx + step overhead
// with lat(p) the route p -> p+1's latency (links + the protocol's per-hop excess), clat(p) its
// credit's (links + LL's excess, network.hpp RouteInfo::credit_latency) and every member
// starting at the launch. Contention-free, tx is what the engine charges (the route's
// share of its bottleneck). Under max-min a data piece alone on its links moves at
// min(link capacity / copies, channel cap), which is what the progressive filling of
// flow_network.cpp gives a lone class, ending at t + wire_time(wire, rate); the lattice records
// every data piece's interval on every link it crosses, and if two of them meet on a link
// (touching counts: the event order at a shared instant can then move one by a picosecond), it
// gives up and the event simulation runs instead.
//
// Within an op index the cells are independent (each reads op i-S or op i-slots+S, both
// earlier when slots > S), so the lattice sweeps op by op over arrays of positions: one fused,
// vectorisable pass per op, then the few cells that hold data, and memory of (slots + S + 2) x n
// times per channel.
// tests/simulator/lattice_test.cpp compares it with the event simulation, time and every rank's
// finish to the picosecond.
#include <algorithm>

#include "simulator/engine.hpp"
#include "simulator/flow_network.hpp"

namespace collsim::detail {

namespace {

// A data piece on one link, for the overlap check.
struct LinkSpan {
  std::uint32_t link;
  std::int64_t start;
  std::int64_t end;
  bool operator<(const LinkSpan& o) const {
    return link != o.link ? link < o.link : start != o.start ? start < o.start : end < o.end;
  }
};

// One op index over every position, every piece taken as empty:
//   t[p] = max(free[p], a_in[p-1], cr[p+1] + clat[p]);  free[p] = t[p];  a_out[p] = t[p] + lat[p]
// (the terms and the send only where the op has them; positions wrap around the ring).
template <bool kRecv, bool kCredit, bool kSend>
void sweep_as(int n, std::int64_t* free, const std::int64_t* a_in, const std::int64_t* cr,
              const std::int64_t* lat, const std::int64_t* clat, std::int64_t* t,
              std::int64_t* a_out) {
  const auto cell = [&](int p, int prev, int next) {
    std::int64_t v = free[p];
    if constexpr (kRecv) v = std::max(v, a_in[prev]);
    if constexpr (kCredit) v = std::max(v, cr[next] + clat[p]);
    t[p] = v;
    free[p] = v;
    if constexpr (kSend) a_out[p] = v + lat[p];
  };
  cell(0, n - 1, 1 % n);
  for (int p = 1; p + 1 < n; ++p) cell(p, p - 1, p + 1);
  if (n > 1) cell(n - 1, n - 2, 0);
}

void sweep(int n, bool recv, bool credit, bool send, std::int64_t* free, const std::int64_t* a_in,
           const std::int64_t* cr, const std::int64_t* lat, const std::int64_t* clat,
           std::int64_t* t, std::int64_t* a_out) {
  if (!recv) return sweep_as<false, false, true>(n, free, a_in, cr, lat, clat, t, a_out);
  if (!send) return sweep_as<true, false, false>(n, free, a_in, cr, lat, clat, t, a_out);
  if (credit) return sweep_as<true, true, true>(n, free, a_in, cr, lat, clat, t, a_out);
  sweep_as<true, false, true>(n, free, a_in, cr, lat, clat, t, a_out);
}

// The most data pieces the lattice takes under max-min, where it keeps each piece's interval on
// every link of its route for the overlap check (24 bytes each): at 2 Mi pieces and routes of up
// to 8 links (GPU, PCIe, NIC, leaf, spine and back) that is at most 400 MB. A ring with more data
// pieces than that is no longer a small message, and the event simulation (or a shortcut) runs.
// The contention-free lattice keeps no intervals and has no such bound.
constexpr std::uint64_t kMaxDataPieces = 2u << 20;

}  // namespace

template <class Net>
std::optional<Result> Engine<Net>::run_lattice() {
  if (trace_ != nullptr || period_ != ranks_ || sched_.actor_count() != sched_.rank_count()) {
    return std::nullopt;
  }
  const std::optional<RingLattice> lat = sched_.source()->ring_lattice();
  if (!lat) return std::nullopt;
  const int n = lat->n;
  const int S = lat->slices;
  if (n != ranks_ || S < 1 || slots_ <= static_cast<std::uint64_t>(S)) return std::nullopt;
  std::uint64_t data_pieces = 0;
  for (int c = 0; c < channels_; ++c) {
    const int actual = fold_.simulated[c];
    if (lat->ops(actual) == 0) continue;
    if (lat->piece_bytes(actual, 0, 0) > payload_) return std::nullopt;  // several pieces an op
    data_pieces += static_cast<std::uint64_t>(lat->nonempty(actual)) * S * (2 * n - 2);
  }
  if (!Net::kKnowsFinish && data_pieces > kMaxDataPieces) return std::nullopt;

  const auto slots = static_cast<std::int64_t>(slots_);
  const std::int64_t launch = proto_.launch.ps();
  const std::int64_t overhead = proto_.step_overhead.ps();
  std::vector<Time> finish(static_cast<std::size_t>(ranks_), proto_.launch);
  std::vector<std::uint64_t> link_bytes(topo_.links().size(), 0);
  std::vector<LinkSpan> spans;
  std::uint64_t cells = 0, sent = 0;

  // Per position: route to the next, its latency and its credit's; the times of the last `slots`
  // ops (credits) and the arrivals of the last S (receives); the member's own free time.
  std::vector<std::uint32_t> route(static_cast<std::size_t>(n));
  std::vector<std::int64_t> lat_ps(static_cast<std::size_t>(n));
  std::vector<std::int64_t> clat_ps(static_cast<std::size_t>(n));
  std::vector<std::int64_t> t_rows(static_cast<std::size_t>(slots * n));
  std::vector<std::int64_t> a_rows(static_cast<std::size_t>(S + 1) * n);
  std::vector<std::int64_t> free_at(static_cast<std::size_t>(n));

  for (int c = 0; c < channels_; ++c) {
    const int actual = fold_.simulated[c];
    const std::uint64_t ops = lat->ops(actual);
    if (ops == 0) continue;
    const std::vector<int>& order = lat->order[static_cast<std::size_t>(actual)];
    const std::uint32_t weight = fold_.weight[c];
    for (int p = 0; p < n; ++p) {
      const int from = order[static_cast<std::size_t>(p)];
      const int to = order[static_cast<std::size_t>((p + 1) % n)];
      route[p] = route_between(device_[from], device_[to], actual);
      // A receive that reads out of host memory holds its channel (engine.cpp): not a lattice.
      if (routes_[route[p]].staged_read) return std::nullopt;
      lat_ps[p] = routes_[route[p]].latency.ps();
      clat_ps[p] = routes_[route[p]].credit_latency.ps();
    }
    // A data piece's time on the wire, as transmit() / FlowNetwork time it.
    const auto tx_of = [&](std::uint32_t rt, std::uint64_t wire) {
      const RouteInfo& ri = routes_[rt];
      if constexpr (Net::kKnowsFinish) {
        return wire == full_wire_ ? full_tx_[rt] : Net{}.start(ri, wire, Time(), 0, weight);
      } else {
        double rate = ri.cap;
        for (std::uint32_t k = 0; k < ri.link_count; ++k) {
          const double cap = link_capacity_[route_links_[ri.first_link + k]];
          rate = std::min(rate, cap / static_cast<double>(weight));
        }
        return wire_time(static_cast<double>(wire), rate);
      }
    };
    std::fill(free_at.begin(), free_at.end(), launch);
    const int nonempty = lat->nonempty(actual);
    for (std::uint64_t i = 0; i < ops; ++i) {
      const auto step = static_cast<int>(i / static_cast<std::uint64_t>(S));
      const auto q = static_cast<int>(i % static_cast<std::uint64_t>(S));
      const bool recv = step >= 1;
      const bool send = step <= 2 * n - 3;
      const bool credit = send && i >= slots_;
      const bool reduce = step >= 1 && step <= n - 1;
      const auto row = [n](std::vector<std::int64_t>& rows, std::uint64_t k, std::uint64_t count) {
        return &rows[static_cast<std::size_t>(k % count) * static_cast<std::size_t>(n)];
      };
      std::int64_t* t = row(t_rows, i, slots_);
      const std::int64_t* cr = credit ? row(t_rows, i - slots_ + S, slots_) : nullptr;
      const std::uint64_t a_count = static_cast<std::uint64_t>(S) + 1;
      const std::int64_t* a_in = recv ? row(a_rows, i - S, a_count) : nullptr;  // A(., i - S)
      std::int64_t* a_out = row(a_rows, i, a_count);                              // A(., i)
      // Every cell as if its piece were empty (one fused, vectorisable pass).
      sweep(n, recv, credit, send, free_at.data(), a_in, cr, lat_ps.data(), clat_ps.data(), t,
            a_out);
      // The cells that hold data: the reduction of what they receive, and their piece's time
      // on the wire.
      for (int seg = 0; seg < nonempty; ++seg) {
        const std::uint64_t bytes = lat->piece_bytes(actual, seg, q);
        if (bytes == 0) continue;
        const int p = (seg + step) % n;
        if (reduce && reduce_rate_ > 0) {
          t[p] = std::max(t[p], a_in[(p + n - 1) % n] + reduce_time(bytes).ps());
          free_at[p] = t[p];
          a_out[p] = t[p] + lat_ps[p];
        }
        if (!send) continue;
        const std::uint64_t wire = wire_bytes(bytes);
        const std::int64_t end = t[p] + tx_of(route[p], wire).ps();
        a_out[p] = end + lat_ps[p];
        free_at[p] = end + overhead;
        const RouteInfo& ri = routes_[route[p]];
        for (std::uint32_t k = 0; k < ri.link_count; ++k) {
          const std::uint32_t l = route_links_[ri.first_link + k];
          link_bytes[l] += wire * weight;
          if constexpr (!Net::kKnowsFinish) spans.push_back({l, t[p], end});
        }
      }
      if (send) sent += static_cast<std::uint64_t>(n);
      cells += static_cast<std::uint64_t>(n);
    }
    // The last op receives only: each member is done when it has consumed the last piece.
    const std::int64_t* last =
        &t_rows[static_cast<std::size_t>(static_cast<std::int64_t>(ops - 1) % slots) * n];
    for (int p = 0; p < n; ++p) {
      Time& f = finish[static_cast<std::size_t>(order[static_cast<std::size_t>(p)])];
      f = std::max(f, Time::from_ps(last[p]));
    }
  }
  if constexpr (!Net::kKnowsFinish) {
    // Two data pieces on one link at once would have shared it: not a lattice after all.
    std::sort(spans.begin(), spans.end());
    for (std::size_t k = 1; k < spans.size(); ++k) {
      if (spans[k].link == spans[k - 1].link && spans[k].start <= spans[k - 1].end) {
        return std::nullopt;
      }
    }
  }

  Result r;
  r.rank_finish = std::move(finish);
  for (Time f : r.rank_finish) r.total = std::max(r.total, f);
  r.simulated_ranks = ranks_;
  r.nccl_channels = fold_.nccl_channels;
  r.simulated_channels = fold_.nccl_simulated;
  link_usage(r, link_bytes);
  r.lattice_cells = cells;
  r.pieces = sent;
  r.ops = cells;
  if (past_bound(r.total)) {
    Result g;
    g.total = r.total;
    g.gave_up = true;
    g.lattice_cells = cells;
    return g;
  }
  return r;
}

template std::optional<Result> Engine<AlphaBetaNetwork>::run_lattice();
template std::optional<Result> Engine<FlowNetwork>::run_lattice();

}  // namespace collsim::detail
