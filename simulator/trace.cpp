// Writes the Trace Event Format by hand, streaming (a DOM of a large trace would need several
// times its size in memory). Every string we emit is our own ASCII (kinds, device names), so
// escaping is limited to quotes and backslashes.
#include "simulator/trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <ostream>

namespace collsim {

namespace {

std::string escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// Microseconds with picosecond decimals.
std::string ts(Time t) { return fmt::format("{}.{:06}", t.ps() / 1000000, t.ps() % 1000000); }

std::string_view coll_name(Collective c) {
  static constexpr std::array<std::string_view, kCollectiveCount> kNames = {
      "AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce",
      "Gather",    "Scatter",   "AllToAll",      "Barrier",   "SendRecv"};
  return kNames[static_cast<int>(c)];
}

std::string_view redop_name(ReduceOp op, DataType t) {
  switch (op) {
    case ReduceOp::kSum:
      return "Sum";
    case ReduceOp::kProd:
      return "Prod";
    case ReduceOp::kMin:
    case ReduceOp::kMax:
      return "MinMax";
    case ReduceOp::kAvg:
      return is_floating(t) ? "PreMulSum" : "SumPostDiv";
  }
  return "Sum";
}

class Writer {
 public:
  explicit Writer(std::ostream& out) : out_(out) {
    out_ << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  }
  ~Writer() { out_ << "\n]}\n"; }
  void event(const std::string& body) {
    out_ << (first_ ? "" : ",\n") << '{' << body << '}';
    first_ = false;
  }

 private:
  std::ostream& out_;
  bool first_ = true;
};

void write_links(Writer& w, const Topology& topo, const Result& r, const TraceRecorder& rec,
                 const TraceOptions& o, int pid) {
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
    const std::string name = escape(fmt::format("{}->{} ({})", topo.device(link.src).name,
                                                topo.device(link.dst).name, to_string(link.kind)));
    const double cap_per_bucket = rec.link_capacity[busiest[i].link.value] * width * 1e-12;
    for (int k = 0; k <= nb; ++k) {
      const double util = k < nb ? load[i * nb + k] / cap_per_bucket : 0.0;
      const Time at = Time::from_ps(static_cast<std::int64_t>(k * width));
      w.event(
          fmt::format(R"("name":"{}","ph":"C","pid":{},"tid":0,"ts":{},"args":{{"util":{:.4f}}})",
                      name, pid, ts(at), util));
    }
  }
}

}  // namespace

std::string nccl_kernel_name(const ScheduleInfo& info) {
  std::string algo;
  if (info.algorithm == "ring" || info.algorithm == "ring2d") {
    algo = "RING";
  } else if (info.algorithm == "tree" || info.algorithm == "dbtree") {
    algo = "TREE";
  } else {
    for (char c : info.algorithm)
      algo += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  std::string proto;
  for (char c : to_string(info.protocol))
    proto += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (info.collective == Collective::kSendRecv) return "ncclDevKernel_SendRecv";
  if (is_reduction(info.collective)) {
    return fmt::format("ncclDevKernel_{}_{}_{}_{}_{}", coll_name(info.collective),
                       redop_name(info.redop, info.dtype), to_string(info.dtype), algo, proto);
  }
  return fmt::format("ncclDevKernel_{}_{}_{}", coll_name(info.collective), algo, proto);
}

void write_trace(std::ostream& out, const Schedule& s, const Topology& topo, const Result& r,
                 const TraceRecorder& rec, const TraceOptions& options) {
  Writer w(out);
  const ScheduleInfo& info = s.info();
  const std::string kernel = nccl_kernel_name(info);
  for (int rank = 0; rank < s.rank_count(); ++rank) {
    const std::string gpu =
        rank < topo.rank_count() ? topo.device(topo.gpu_of(Rank{rank})).name : std::string("?");
    w.event(fmt::format(
        R"J("name":"process_name","ph":"M","pid":{},"tid":0,"args":{{"name":"rank {} ({})"}})J",
        rank, rank, escape(gpu)));
    w.event(fmt::format(
        R"("name":"process_sort_index","ph":"M","pid":{},"tid":0,"args":{{"sort_index":{}}})", rank,
        rank));
    w.event(fmt::format(
        R"("name":"thread_name","ph":"M","pid":{},"tid":0,"args":{{"name":"kernel"}})", rank));
    for (int c = 0; c < s.channel_count(); ++c) {
      w.event(fmt::format(
          R"("name":"thread_name","ph":"M","pid":{},"tid":{},"args":{{"name":"channel {}"}})", rank,
          c + 1, c));
    }
    const Time finish = r.rank_finish.at(static_cast<std::size_t>(rank));
    w.event(fmt::format(
        R"("name":"{}","cat":"kernel","ph":"X","pid":{},"tid":0,"ts":0.000000,"dur":{},"args":{{"bytes":{},"ranks":{},"channels":{}}})",
        kernel, rank, ts(finish), info.bytes.count(), info.ranks, info.channels));
  }
  for (const TraceOpRecord& o : rec.ops) {
    std::string peers;
    if (receives(o.op.kind)) peers += fmt::format(R"(,"from":{})", o.op.recv_peer);
    if (sends(o.op.kind)) peers += fmt::format(R"(,"to":{})", o.op.send_peer);
    w.event(fmt::format(
        R"("name":"{}","cat":"op","ph":"X","pid":{},"tid":{},"ts":{},"dur":{},"args":{{"op":{},"bytes":{}{}}})",
        to_string(o.op.kind), o.rank, o.channel + 1, ts(o.start), ts(o.end - o.start), o.index,
        o.op.bytes, peers));
    if (o.send_flow != 0) {
      w.event(
          fmt::format(R"("name":"data","cat":"flow","ph":"s","id":{},"pid":{},"tid":{},"ts":{})",
                      o.send_flow, o.rank, o.channel + 1, ts(o.start)));
    }
    if (o.recv_flow != 0) {
      w.event(fmt::format(
          R"("name":"data","cat":"flow","ph":"f","bp":"e","id":{},"pid":{},"tid":{},"ts":{})",
          o.recv_flow, o.rank, o.channel + 1, ts(o.start)));
    }
  }
  write_links(w, topo, r, rec, options, s.rank_count());
}

}  // namespace collsim
