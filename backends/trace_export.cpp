// The layout is algorithms/ir/trace_events.hpp's, the one simulated traces use; what is particular
// to a measured run is only where flow ids come from (counted here, per connection, instead of
// assigned by the engine) and that times are wall-clock offsets from the traced run's start.
#include "backends/trace_export.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <ostream>
#include <tuple>

#include "algorithms/ir/trace_events.hpp"

namespace collsim {

void write_measured_trace(std::ostream& out, const Schedule& s, const std::vector<OpTiming>& ops,
                          std::string_view backend) {
  const ScheduleInfo& info = s.info();
  std::vector<Time> finish(s.rank_count());
  for (const OpTiming& o : ops) {
    if (o.rank >= 0 && o.rank < s.rank_count()) finish[o.rank] = std::max(finish[o.rank], o.end);
  }
  TraceEventWriter w(out);
  const std::string name = fmt::format("{} {} {} ({})", to_string(info.collective), info.algorithm,
                                       to_string(info.protocol), backend);
  for (int rank = 0; rank < s.rank_count(); ++rank) {
    w.rank_tracks(rank, backend, s.channel_count(), name, finish[rank], info);
  }
  // Flow ids: the k-th piece stream on connection (channel, from, to), numbered on first sight.
  std::map<std::tuple<int, int, int, std::uint64_t>, std::uint64_t> flow_ids;
  std::map<std::tuple<int, int, int>, std::uint64_t> sent, received;
  auto flow = [&](int channel, int from, int to, std::uint64_t k) {
    const auto [it, fresh] = flow_ids.try_emplace({channel, from, to, k}, flow_ids.size() + 1);
    return it->second;
  };
  for (const OpTiming& o : ops) {
    w.op_slice(o.rank, o.channel, o.index, o.op, o.start, o.end);
    if (sends(o.op.kind)) {
      const std::uint64_t k = sent[{o.channel, o.rank, o.op.send_peer}]++;
      w.flow_start(flow(o.channel, o.rank, o.op.send_peer, k), o.rank, o.channel, o.start);
    }
    if (receives(o.op.kind)) {
      const std::uint64_t k = received[{o.channel, o.op.recv_peer, o.rank}]++;
      w.flow_end(flow(o.channel, o.op.recv_peer, o.rank, k), o.rank, o.channel, o.start);
    }
  }
}

}  // namespace collsim
