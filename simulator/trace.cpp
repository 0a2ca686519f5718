// Writes the Trace Event Format by hand, streaming (a DOM of a large trace would need several
// times its size in memory): the rank and op layout through algorithms/ir/trace_events.hpp, shared
// with measured traces, and the link counters, which only a simulation has.
#include "simulator/trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>

namespace collsim {

namespace {

void write_links(TraceEventWriter& w, const Topology& topo, const Result& r,
                 const TraceRecorder& rec, const TraceOptions& o, int pid) {
  if (r.links.empty() || r.total.ps() <= 0 || rec.link_capacity.empty()) return;
  std::vector<LinkUsage> busiest = r.links;
  std::stable_sort(busiest.begin(), busiest.end(),
                   [](const LinkUsage& a, const LinkUsage& b) { return a.bytes > b.bytes; });
  if (static_cast<int>(busiest.size()) > o.max_link_counters) busiest.resize(o.max_link_counters);
  std::vector<int> slot(topo.links().size(), -1);
  for (std::size_t i = 0; i < busiest.size(); ++i)
    slot[busiest[i].link.value] = static_cast<int>(i);
  const int nb = std::max(1, o.counter_buckets);
  const double width = static_cast<double>(r.total.ps()) / nb;
  std::vector<double> load(busiest.size() * nb, 0.0);
  for (const TracePieceRecord& p : rec.pieces) {
    const double a = static_cast<double>(p.start.ps());
    const double b = std::max(a + 1, static_cast<double>(p.end.ps()));
    const double per_ps = static_cast<double>(p.wire_bytes) / (b - a);
    for (LinkId l : rec.routes[p.route]) {
      const int s = slot[l.value];
      if (s < 0) continue;
      for (int k = std::max(0, static_cast<int>(a / width)); k < nb && k * width < b; ++k) {
        const double lo = std::max(a, k * width);
        const double hi = std::min(b, (k + 1) * width);
        if (hi > lo) load[static_cast<std::size_t>(s) * nb + k] += per_ps * (hi - lo);
      }
    }
  }
  w.event(fmt::format(
      R"("name":"process_name","ph":"M","pid":{},"tid":0,"args":{{"name":"links"}})", pid));
  for (std::size_t i = 0; i < busiest.size(); ++i) {
    const Link& link = topo.link(busiest[i].link);
    const std::string name =
        json_escape(fmt::format("{}->{} ({})", topo.device(link.src).name,
                                topo.device(link.dst).name, to_string(link.kind)));
    const double cap_per_bucket = rec.link_capacity[busiest[i].link.value] * width * 1e-12;
    for (int k = 0; k <= nb; ++k) {
      const double util = k < nb ? load[i * nb + k] / cap_per_bucket : 0.0;
      const Time at = Time::from_ps(static_cast<std::int64_t>(k * width));
      w.event(
          fmt::format(R"("name":"{}","ph":"C","pid":{},"tid":0,"ts":{},"args":{{"util":{:.4f}}})",
                      name, pid, trace_timestamp(at), util));
    }
  }
}

}  // namespace

void write_trace(std::ostream& out, const Schedule& s, const Topology& topo, const Result& r,
                 const TraceRecorder& rec, const TraceOptions& options) {
  TraceEventWriter w(out);
  const std::string kernel = nccl_kernel_name(s.info());
  for (int rank = 0; rank < s.rank_count(); ++rank) {
    const std::string gpu =
        rank < topo.rank_count() ? topo.device(topo.gpu_of(Rank{rank})).name : std::string("?");
    w.rank_tracks(rank, gpu, s.channel_count(), kernel,
                  r.rank_finish.at(static_cast<std::size_t>(rank)), s.info());
  }
  for (const TraceOpRecord& o : rec.ops) {
    w.op_slice(o.rank, o.channel, o.index, o.op, o.start, o.end);
    if (o.send_flow != 0) w.flow_start(o.send_flow, o.rank, o.channel, o.start);
    if (o.recv_flow != 0) w.flow_end(o.recv_flow, o.rank, o.channel, o.start);
  }
  write_links(w, topo, r, rec, options, s.rank_count());
}

}  // namespace collsim
