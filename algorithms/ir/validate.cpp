#include "algorithms/ir/validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <unordered_map>
#include <vector>

#include "algorithms/ir/schedule_walk.hpp"
#include "algorithms/ir/validate_detail.hpp"
#include "topology/error.hpp"

namespace collsim {

namespace detail {

std::string op_label(int rank, int channel, std::uint64_t index, const Op& op) {
  return fmt::format("rank {} channel {} op {} ({})", rank, channel, index, describe(op));
}

}  // namespace detail

namespace {

using detail::op_label;

struct Buffers {
  std::uint64_t bytes[kBufferKindCount] = {0, 0, 0};
};

Buffers buffers_of(const Schedule& s, int rank) {
  Buffers b;
  for (int k = 0; k < kBufferKindCount; ++k) {
    b.bytes[k] = s.buffer_bytes(rank, static_cast<BufferKind>(k));
  }
  return b;
}

void check_region(const Schedule& s, int rank, int channel, std::uint64_t i, const Op& op,
                  const BufferRef& ref, const Buffers& b, std::string_view verb) {
  const std::uint64_t size = b.bytes[static_cast<int>(ref.buffer)];
  if (ref.offset > size || op.bytes > size - ref.offset) {
    (void)s;
    throw ScheduleError(
        fmt::format("buffer out of bounds: {} {} {} bytes [{}, {}) but the {} buffer holds {} B",
                    op_label(rank, channel, i, op), verb, to_string(ref.buffer), ref.offset,
                    ref.offset + op.bytes, to_string(ref.buffer), size));
  }
}

// Peers, postop and bounds of one op.
void check_op(const Schedule& s, int rank, int channel, std::uint64_t i, const Op& op,
              const Buffers& b) {
  const int n = s.actor_count();
  auto check_peer = [&](int peer, std::string_view role) {
    if (peer < 0 || peer >= n) {
      throw ScheduleError(fmt::format("bad peer: {} {} rank {}, but ranks are 0..{}",
                                      op_label(rank, channel, i, op), role, peer, n - 1));
    }
    if (peer == rank) {
      throw ScheduleError(
          fmt::format("bad peer: {} {} itself; use a copy", op_label(rank, channel, i, op), role));
    }
  };
  if (receives(op.kind)) check_peer(op.recv_peer, "receives from");
  if (sends(op.kind)) check_peer(op.send_peer, "sends to");
  if (op.postop && !reduces(op.kind)) {
    throw ScheduleError(
        fmt::format("bad postop: {} does not reduce", op_label(rank, channel, i, op)));
  }
  if (reads_src(op.kind)) check_region(s, rank, channel, i, op, op.src, b, "reads");
  if (writes_dst(op.kind)) check_region(s, rank, channel, i, op, op.dst, b, "writes");
}

struct Endpoint {
  int rank;
  std::uint64_t index;
  std::uint64_t bytes;
};
struct Connection {
  std::vector<Endpoint> sends;
  std::vector<Endpoint> recvs;
};

// Counts first (a missing op shifts every later pair), then sizes.
void check_matching(const Schedule& s, const std::map<std::uint64_t, Connection>& conns) {
  auto label = [&](const Endpoint& e, int channel) {
    return op_label(e.rank, channel, e.index, s.op(e.rank, channel, e.index));
  };
  for (const auto& [key, c] : conns) {
    const int channel = static_cast<int>(key >> 48);
    const int from = static_cast<int>((key >> 24) & 0xFFFFFF);
    const int to = static_cast<int>(key & 0xFFFFFF);
    if (c.recvs.size() > c.sends.size()) {
      const Endpoint& e = c.recvs[c.sends.size()];
      throw ScheduleError(
          fmt::format("schedule deadlocks: {} waits for a send that rank {} channel {} never posts",
                      label(e, channel), from, channel));
    }
    if (c.sends.size() > c.recvs.size()) {
      const Endpoint& e = c.sends[c.recvs.size()];
      throw ScheduleError(
          fmt::format("unmatched send: {} has no matching recv on rank {} channel {}",
                      label(e, channel), to, channel));
    }
  }
  for (const auto& [key, c] : conns) {
    const int channel = static_cast<int>(key >> 48);
    for (std::size_t k = 0; k < c.sends.size(); ++k) {
      if (c.sends[k].bytes != c.recvs[k].bytes) {
        throw ScheduleError(fmt::format("mismatched sizes: {} matches {}",
                                        label(c.sends[k], channel), label(c.recvs[k], channel)));
      }
    }
  }
}

struct Write {
  std::uint64_t begin, end;
  int channel;
  std::uint64_t index;
};

// Whether op (c1, i1) happens before op (c2, i2) of one rank through dependency edges.
bool happens_before(const std::vector<Dependency>& deps, int channels, int c1, std::uint64_t i1,
                    int c2, std::uint64_t i2) {
  // reach[c]: the smallest op of channel c known to start after (c1, i1) completes.
  std::vector<std::uint64_t> reach(channels, UINT64_MAX);
  std::vector<std::uint64_t> from(channels, UINT64_MAX);  // earliest completed op per channel
  from[c1] = i1;
  bool changed = true;
  while (changed) {
    changed = false;
    for (const Dependency& d : deps) {
      if (from[d.after_channel] != UINT64_MAX && d.after_op >= from[d.after_channel] &&
          d.op < reach[d.channel]) {
        reach[d.channel] = d.op;
        if (d.op < from[d.channel]) from[d.channel] = d.op;
        changed = true;
      }
    }
  }
  return reach[c2] <= i2;
}

void check_writes(const Schedule& s, int rank, std::vector<Write> (&writes)[kBufferKindCount]) {
  const std::vector<Dependency> deps = s.dependencies(rank);
  for (int k = 0; k < kBufferKindCount; ++k) {
    auto& w = writes[k];
    std::sort(w.begin(), w.end(), [](const Write& a, const Write& b) {
      return a.begin != b.begin ? a.begin < b.begin : a.channel < b.channel;
    });
    for (std::size_t i = 0; i < w.size(); ++i) {
      for (std::size_t j = i + 1; j < w.size() && w[j].begin < w[i].end; ++j) {
        if (w[i].channel == w[j].channel) continue;
        const auto& a = w[i];
        const auto& b = w[j];
        if (happens_before(deps, s.channel_count(), a.channel, a.index, b.channel, b.index) ||
            happens_before(deps, s.channel_count(), b.channel, b.index, a.channel, a.index)) {
          continue;
        }
        throw ScheduleError(fmt::format(
            "unordered writes: {} and {} both write {} bytes [{}, {}) and no dependency orders "
            "them",
            op_label(rank, a.channel, a.index, s.op(rank, a.channel, a.index)),
            op_label(rank, b.channel, b.index, s.op(rank, b.channel, b.index)),
            to_string(static_cast<BufferKind>(k)), std::max(a.begin, b.begin),
            std::min(a.end, b.end)));
      }
    }
  }
}

// Checked as runs (DependencyRun): both indices of a run grow with it, so its first dependency
// has its channels and its last the largest op on each; the list itself can be millions long
// (a dependency per piece on NVLSTree's switches). `runs` is the caller's buffer.
void check_dependencies(const Schedule& s, int rank, std::vector<DependencyRun>& runs) {
  // Each channel's op count once, when a dependency first names it: a count can cost a rebuild
  // of the stream's groups.
  constexpr std::uint64_t kUnknown = std::numeric_limits<std::uint64_t>::max();
  std::vector<std::uint64_t> count(static_cast<std::size_t>(s.channel_count()), kUnknown);
  const auto ops = [&](int c) {
    std::uint64_t& n = count[static_cast<std::size_t>(c)];
    if (n == kUnknown) n = s.op_count(rank, c);
    return n;
  };
  const auto bad = [&](const Dependency& d) {
    for (auto [c, i] : {std::pair{d.channel, d.op}, std::pair{d.after_channel, d.after_op}}) {
      if (c < 0 || c >= s.channel_count() || i >= ops(c)) return true;
    }
    return false;
  };
  runs.clear();
  s.append_dependency_runs(rank, 0, s.channel_count(), runs);
  std::vector<Dependency> list;
  for (const DependencyRun& run : runs) {
    const std::uint64_t j = run.count - 1;
    if (!bad({run.first.channel, run.first.op + j * run.op_step, run.first.after_channel,
              run.first.after_op + j * run.after_step})) {
      continue;
    }
    list.clear();
    expand(run, list);
    const Dependency& d = *std::find_if(list.begin(), list.end(), bad);
    throw ScheduleError(fmt::format(
        "bad dependency: rank {} channel {} op {} after channel {} op {} names a missing op", rank,
        d.channel, d.op, d.after_channel, d.after_op));
  }
}

ValidationReport validate_exhaustive(const Schedule& s) {
  std::map<std::uint64_t, Connection> conns;
  ValidationReport rep;
  std::vector<DependencyRun> runs;
  for (int r = 0; r < s.actor_count(); ++r) {
    const Buffers b = buffers_of(s, r);
    std::vector<Write> writes[kBufferKindCount];
    for (int c = 0; c < s.channel_count(); ++c) {
      for (OpCursor k = s.cursor(r, c); !k.done(); k.next()) {
        const Op& op = k.op();
        check_op(s, r, c, k.index(), op, b);
        if (sends(op.kind)) {
          conns[connection_key(c, r, op.send_peer)].sends.push_back({r, k.index(), op.bytes});
        }
        if (receives(op.kind)) {
          conns[connection_key(c, op.recv_peer, r)].recvs.push_back({r, k.index(), op.bytes});
        }
        if (writes_dst(op.kind) && op.bytes > 0) {
          writes[static_cast<int>(op.dst.buffer)].push_back(
              {op.dst.offset, op.dst.offset + op.bytes, c, k.index()});
        }
        ++rep.ops_checked;
      }
    }
    check_dependencies(s, r, runs);
    check_writes(s, r, writes);
  }
  check_matching(s, conns);
  detail::check_deadlock(s);
  return rep;
}

// One sampled stream in full, matched against the streams of up to four of its peers.
void validate_stream(const Schedule& s, int r, int c, const ValidateOptions& o,
                     std::mt19937_64& rng, ValidationReport& rep) {
  const Buffers b = buffers_of(s, r);
  const std::uint64_t n = s.op_count(r, c);
  if (n > o.sample_ops_per_stream) {
    for (std::uint64_t k = 0; k < o.sample_ops_per_stream; ++k) {
      const std::uint64_t i = rng() % n;
      check_op(s, r, c, i, s.op(r, c, i), b);
      ++rep.ops_checked;
    }
    return;
  }
  std::map<std::uint64_t, Connection> conns;
  std::set<int> peers;
  for (OpCursor k = s.cursor(r, c); !k.done(); k.next()) {
    const Op& op = k.op();
    check_op(s, r, c, k.index(), op, b);
    ++rep.ops_checked;
    if (sends(op.kind)) {
      conns[connection_key(c, r, op.send_peer)].sends.push_back({r, k.index(), op.bytes});
      if (peers.size() < 4) peers.insert(op.send_peer);
    }
    if (receives(op.kind)) {
      conns[connection_key(c, op.recv_peer, r)].recvs.push_back({r, k.index(), op.bytes});
      if (peers.size() < 4) peers.insert(op.recv_peer);
    }
  }
  for (int p : peers) {
    if (s.op_count(p, c) > o.sample_ops_per_stream) continue;
    const Buffers pb = buffers_of(s, p);
    for (OpCursor k = s.cursor(p, c); !k.done(); k.next()) {
      const Op& op = k.op();
      check_op(s, p, c, k.index(), op, pb);
      ++rep.ops_checked;
      if (sends(op.kind) && op.send_peer == r) {
        conns[connection_key(c, p, r)].sends.push_back({p, k.index(), op.bytes});
      }
      if (receives(op.kind) && op.recv_peer == r) {
        conns[connection_key(c, r, p)].recvs.push_back({p, k.index(), op.bytes});
      }
    }
  }
  // Keep only the connections both of whose ends were walked.
  std::map<std::uint64_t, Connection> walked;
  for (auto& [key, conn] : conns) {
    const int from = static_cast<int>((key >> 24) & 0xFFFFFF);
    const int to = static_cast<int>(key & 0xFFFFFF);
    const int other = from == r ? to : from;
    if (peers.count(other) != 0 && s.op_count(other, c) <= o.sample_ops_per_stream) {
      walked.emplace(key, std::move(conn));
    }
  }
  check_matching(s, walked);
}

// A switch actor sits on a rank's node and has no input or output buffer (schedule.hpp).
void check_switch_actors(const Schedule& s) {
  const ScheduleInfo& info = s.info();
  for (std::size_t i = 0; i < info.switches.size(); ++i) {
    const int actor = info.ranks + static_cast<int>(i);
    const int anchor = info.switches[i].anchor;
    if (anchor < 0 || anchor >= info.ranks) {
      throw ScheduleError(fmt::format("bad switch: switch {} is anchored at rank {}, but ranks are "
                                      "0..{}",
                                      actor, anchor, info.ranks - 1));
    }
    if (s.buffer_bytes(actor, BufferKind::kInput) != 0 ||
        s.buffer_bytes(actor, BufferKind::kOutput) != 0) {
      throw ScheduleError(fmt::format(
          "bad switch: switch {} has an input or output buffer; a switch holds only scratch",
          actor));
    }
  }
}

}  // namespace

ValidationReport validate(const Schedule& s, const ValidateOptions& o) {
  check_switch_actors(s);
  if (s.total_ops() <= o.exhaustive_op_limit) return validate_exhaustive(s);
  ValidationReport rep;
  rep.exhaustive = false;
  std::mt19937_64 rng(o.seed);
  std::set<std::pair<int, int>> streams = {{0, 0}, {s.actor_count() - 1, s.channel_count() - 1}};
  for (int k = 0; k < o.sample_streams; ++k) {
    streams.insert(
        {static_cast<int>(rng() % s.actor_count()), static_cast<int>(rng() % s.channel_count())});
  }
  std::vector<DependencyRun> runs;
  for (int r = 0; r < s.actor_count(); ++r) check_dependencies(s, r, runs);
  for (auto [r, c] : streams) validate_stream(s, r, c, o, rng, rep);
  return rep;
}

}  // namespace collsim
