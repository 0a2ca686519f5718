#include "algorithms/generators/tree_source.hpp"

namespace collsim::detail {

PipelinedTreeSource::PipelinedTreeSource(const Request& r, int trees)
    : GroupSource(r), trees_(trees), parts_(r.collective == Collective::kAllReduce ? 2 : 1) {}

std::uint64_t PipelinedTreeSource::scratch_elems(int /*rank*/) const {
  return req_.collective == Collective::kBroadcast ? 0 : req_.count;
}

Span PipelinedTreeSource::region(int c, int t) const {
  const Span ch = channel_span(c);
  const Span part = split(ch.length, trees_, t);
  return {ch.offset + part.offset, part.length};
}

std::vector<Op> PipelinedTreeSource::reduce_templates(int rank, const TreeLinks& l,
                                                      std::uint64_t off, std::uint64_t len) const {
  const bool is_root = l.parent < 0;
  const std::size_t m = l.children.size();
  if (m == 0) {
    if (is_root) return {ops::copy(ops::in(off), ops::out(off), len)};
    return {ops::send(l.parent, ops::in(off), len)};
  }
  if (m == 1 && !is_root)
    return {ops::recv_reduce_send(l.children[0], l.parent, ops::in(off), len)};
  (void)rank;
  const BufferRef acc = is_root ? ops::out(off) : ops::scratch(off);
  std::vector<Op> t;
  t.push_back(ops::recv_reduce_copy(l.children[0], ops::in(off), acc, len, is_root && m == 1));
  for (std::size_t k = 1; k < m; ++k) {
    const bool last = k + 1 == m;
    if (last && !is_root) {
      t.push_back(ops::recv_reduce_send(l.children[k], l.parent, acc, len));
    } else {
      t.push_back(ops::recv_reduce(l.children[k], acc, len, is_root && last));
    }
  }
  return t;
}

std::vector<Op> PipelinedTreeSource::broadcast_templates(int /*rank*/, const TreeLinks& l,
                                                         std::uint64_t off,
                                                         std::uint64_t len) const {
  const bool bcast = req_.collective == Collective::kBroadcast;
  std::vector<Op> t;
  if (l.parent < 0) {
    const BufferRef from = bcast ? ops::in(off) : ops::out(off);
    for (int c : l.children) t.push_back(ops::send(c, from, len));
    if (bcast) t.push_back(ops::copy(ops::in(off), ops::out(off), len));
    return t;
  }
  if (l.children.empty()) return {ops::recv(l.parent, ops::out(off), len)};
  t.push_back(ops::recv_copy_send(l.parent, l.children[0], ops::out(off), len));
  for (std::size_t k = 1; k < l.children.size(); ++k) {
    t.push_back(ops::send(l.children[k], ops::out(off), len));
  }
  return t;
}

void PipelinedTreeSource::groups(int rank, int channel, std::vector<Group>& out) const {
  const int d = channel % parts_;
  const int t = (channel / parts_) % trees_;
  const int c = channel / (parts_ * trees_);
  const Span reg = region(c, t);
  if (reg.length == 0) return;
  const TreeLinks l = links(rank, c, t);
  const bool reducing = req_.collective != Collective::kBroadcast && d == 0;
  std::vector<Op> tmpl = reducing
                             ? reduce_templates(rank, l, bytes(reg.offset), bytes(reg.length))
                             : broadcast_templates(rank, l, bytes(reg.offset), bytes(reg.length));
  if (!tmpl.empty()) out.push_back(pipeline(std::move(tmpl), piece_bytes()));
}

void PipelinedTreeSource::append_dependency_runs(int rank, int first_channel, int end_channel,
                                                 std::vector<DependencyRun>& runs) const {
  if (parts_ != 2) return;
  for (int c = 0; c < channels_; ++c) {
    for (int t = 0; t < trees_; ++t) {
      const int up = (c * trees_ + t) * parts_;
      // The run is on the broadcast's channel, up + 1.
      if (root(c, t) != rank || up + 1 < first_channel || up + 1 >= end_channel) continue;
      std::vector<Group> ug, dg;
      groups(rank, up, ug);
      groups(rank, up + 1, dg);
      if (ug.empty() || dg.empty() || dg[0].pieces == 0) continue;
      // Piece k of the broadcast (its first op, k x w) after the reduction's last op of piece k.
      const std::uint64_t u = ug[0].ops.size();
      const std::uint64_t w = dg[0].ops.size();
      DependencyRun run{{up + 1, 0, up, u - 1}, dg[0].pieces};
      if (run.count > 1) {
        run.op_step = w;
        run.after_step = u;
      }
      runs.push_back(run);
    }
  }
}

std::vector<Dependency> PipelinedTreeSource::dependencies(int rank) const {
  const std::vector<DependencyRun> runs = dependency_runs(rank);
  std::uint64_t n = 0;
  for (const DependencyRun& run : runs) n += run.count;
  std::vector<Dependency> deps;
  deps.reserve(n);
  for (const DependencyRun& run : runs) expand(run, deps);
  return deps;
}

}  // namespace collsim::detail
