// Streams the JSON by hand, as simulator/trace.cpp does: every string written is our own ASCII
// (op kinds, algorithm names), so nothing needs escaping beyond what the names can hold.
#include "backends/trace_export.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <ostream>
#include <tuple>

namespace collsim {

namespace {

// Microseconds with picosecond decimals (the simulator's precision).
std::string ts(Time t) {
  const std::int64_t ps = std::max<std::int64_t>(0, t.ps());
  return fmt::format("{}.{:06}", ps / 1000000, ps % 1000000);
}

class Writer {
 public:
  explicit Writer(std::ostream& out) : out_(out) {
    out_ << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  }
  ~Writer() { out_ << "\n]}\n"; }
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  void event(const std::string& body) {
    out_ << (first_ ? "" : ",\n") << '{' << body << '}';
    first_ = false;
  }

 private:
  std::ostream& out_;
  bool first_ = true;
};

}  // namespace

void write_measured_trace(std::ostream& out, const Schedule& s, const std::vector<OpTiming>& ops,
                          std::string_view backend) {
  const ScheduleInfo& info = s.info();
  std::vector<Time> finish(s.rank_count());
  for (const OpTiming& o : ops) {
    if (o.rank >= 0 && o.rank < s.rank_count()) finish[o.rank] = std::max(finish[o.rank], o.end);
  }
  Writer w(out);
  const std::string name = fmt::format("{} {} {} ({})", to_string(info.collective), info.algorithm,
                                       to_string(info.protocol), backend);
  for (int rank = 0; rank < s.rank_count(); ++rank) {
    w.event(fmt::format(
        R"J("name":"process_name","ph":"M","pid":{},"tid":0,"args":{{"name":"rank {} ({})"}})J",
        rank, rank, backend));
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
    w.event(fmt::format(
        R"("name":"{}","cat":"kernel","ph":"X","pid":{},"tid":0,"ts":0.000000,"dur":{},"args":{{"bytes":{},"ranks":{},"channels":{}}})",
        name, rank, ts(finish[rank]), info.bytes.count(), info.ranks, info.channels));
  }
  // Flow ids: the k-th piece stream on connection (channel, from, to), numbered on first sight.
  std::map<std::tuple<int, int, int, std::uint64_t>, std::uint64_t> flow_ids;
  std::map<std::tuple<int, int, int>, std::uint64_t> sent, received;
  auto flow = [&](int channel, int from, int to, std::uint64_t k) {
    const auto [it, fresh] = flow_ids.try_emplace({channel, from, to, k}, flow_ids.size() + 1);
    return it->second;
  };
  for (const OpTiming& o : ops) {
    std::string peers;
    if (receives(o.op.kind)) peers += fmt::format(R"(,"from":{})", o.op.recv_peer);
    if (sends(o.op.kind)) peers += fmt::format(R"(,"to":{})", o.op.send_peer);
    w.event(fmt::format(
        R"("name":"{}","cat":"op","ph":"X","pid":{},"tid":{},"ts":{},"dur":{},"args":{{"op":{},"bytes":{}{}}})",
        to_string(o.op.kind), o.rank, o.channel + 1, ts(o.start), ts(o.end - o.start), o.index,
        o.op.bytes, peers));
    if (sends(o.op.kind)) {
      const std::uint64_t k = sent[{o.channel, o.rank, o.op.send_peer}]++;
      w.event(fmt::format(
          R"("name":"data","cat":"flow","ph":"s","id":{},"pid":{},"tid":{},"ts":{})",
          flow(o.channel, o.rank, o.op.send_peer, k), o.rank, o.channel + 1, ts(o.start)));
    }
    if (receives(o.op.kind)) {
      const std::uint64_t k = received[{o.channel, o.op.recv_peer, o.rank}]++;
      w.event(fmt::format(
          R"("name":"data","cat":"flow","ph":"f","bp":"e","id":{},"pid":{},"tid":{},"ts":{})",
          flow(o.channel, o.op.recv_peer, o.rank, k), o.rank, o.channel + 1, ts(o.start)));
    }
  }
}

}  // namespace collsim
