#include "algorithms/ir/format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>
#include <sstream>

namespace collsim {

namespace {

std::string ref(const BufferRef& r) { return fmt::format("{}+{}", to_string(r.buffer), r.offset); }

std::string switch_name(int actor, const SwitchActor& a) {
  return a.site == SwitchSite::kNvSwitch
             ? fmt::format("switch {} (of rank {})", actor, a.anchor)
             : fmt::format("network switch {} (of rank {}'s NIC)", actor, a.anchor);
}

}  // namespace

std::string format_op(const Op& op) {
  std::string peers;
  if (receives(op.kind)) peers += fmt::format("from {}", op.recv_peer);
  if (sends(op.kind)) peers += fmt::format("{}to {}", peers.empty() ? "" : " ", op.send_peer);
  std::string operands;
  if (reads_src(op.kind)) operands += "src " + ref(op.src);
  if (writes_dst(op.kind))
    operands += (operands.empty() ? "" : "  ") + std::string("dst ") + ref(op.dst);
  return fmt::format("{:<22} {:<13} {:<36} {:>9} B{}", to_string(op.kind), peers, operands,
                     op.bytes, op.postop ? "  postop" : "");
}

void write_schedule(std::ostream& out, const Schedule& s, std::uint64_t max_ops_per_channel) {
  const ScheduleInfo& i = s.info();
  out << fmt::format("schedule: {} by {}, protocol {}, {} {}\n", to_string(i.collective),
                     i.algorithm, to_string(i.protocol), to_string(i.dtype), to_string(i.redop));
  // Tree algorithms run several IR channels (streams) per NCCL channel: say which is which.
  const std::string channels =
      i.channels == i.requested_channels
          ? fmt::format("channels {}", i.channels)
          : fmt::format("channels {} ({} IR channels, {} per NCCL channel)", i.requested_channels,
                        i.channels, i.channels / std::max(1, i.requested_channels));
  out << fmt::format("ranks {}, {}, count {} ({} B), root {}\n", i.ranks, channels, i.count,
                     i.bytes.count(), i.root);
  out << fmt::format("chunk {} B in {} slices; fifo {} slots x {} B, payload {} B\n", i.chunk_bytes,
                     i.slices, i.fifo.slots, i.fifo.slot_bytes, i.fifo.slot_payload);
  for (int r = 0; r < s.actor_count(); ++r) {
    const std::string actor =
        s.is_switch(r) ? switch_name(r, i.switches[static_cast<std::size_t>(r - i.ranks)])
                       : fmt::format("rank {}", r);
    out << fmt::format("{}: input {} B, output {} B, scratch {} B\n", actor,
                       s.buffer_bytes(r, BufferKind::kInput),
                       s.buffer_bytes(r, BufferKind::kOutput),
                       s.buffer_bytes(r, BufferKind::kScratch));
    for (const Dependency& d : s.dependencies(r)) {
      out << fmt::format("  depends: channel {} op {} after channel {} op {}\n", d.channel, d.op,
                         d.after_channel, d.after_op);
    }
    for (int c = 0; c < s.channel_count(); ++c) {
      OpCursor k = s.cursor(r, c);
      out << fmt::format("  channel {}: {} ops\n", c, k.size());
      for (; !k.done() && k.index() < max_ops_per_channel; k.next()) {
        out << fmt::format("  {:>6}  {}\n", k.index(), format_op(k.op()));
      }
      if (!k.done()) out << fmt::format("     ... {} more ops\n", k.size() - k.index());
    }
  }
}

std::string format_schedule(const Schedule& s, std::uint64_t max_ops_per_channel) {
  std::ostringstream out;
  write_schedule(out, s, max_ops_per_channel);
  return out.str();
}

}  // namespace collsim
