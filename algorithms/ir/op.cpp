#include "algorithms/ir/op.hpp"

#include <fmt/format.h>

#include <array>

namespace collsim {

std::string_view to_string(OpKind k) {
  static constexpr std::array<std::string_view, 9> names = {
      "send",
      "recv",
      "recv-reduce",
      "recv-reduce-copy",
      "recv-reduce-send",
      "recv-reduce-copy-send",
      "recv-copy-send",
      "copy",
      "reduce",
  };
  return names.at(static_cast<int>(k));
}

std::string_view to_string(BufferKind b) {
  static constexpr std::array<std::string_view, kBufferKindCount> names = {"input", "output",
                                                                           "scratch"};
  return names.at(static_cast<int>(b));
}

bool receives(OpKind k) { return k != OpKind::kSend && k != OpKind::kCopy && k != OpKind::kReduce; }

bool sends(OpKind k) {
  return k == OpKind::kSend || k == OpKind::kRecvReduceSend || k == OpKind::kRecvReduceCopySend ||
         k == OpKind::kRecvCopySend;
}

bool reduces(OpKind k) {
  return k == OpKind::kRecvReduce || k == OpKind::kRecvReduceCopy || k == OpKind::kRecvReduceSend ||
         k == OpKind::kRecvReduceCopySend || k == OpKind::kReduce;
}

bool reads_src(OpKind k) {
  return k == OpKind::kSend || k == OpKind::kRecvReduceCopy || k == OpKind::kRecvReduceSend ||
         k == OpKind::kRecvReduceCopySend || k == OpKind::kCopy || k == OpKind::kReduce;
}

bool reads_dst(OpKind k) { return k == OpKind::kRecvReduce || k == OpKind::kReduce; }

bool writes_dst(OpKind k) { return k != OpKind::kSend && k != OpKind::kRecvReduceSend; }

std::string describe(const Op& op) {
  std::string peers;
  if (receives(op.kind)) peers += fmt::format(" from rank {}", op.recv_peer);
  if (sends(op.kind)) peers += fmt::format(" to rank {}", op.send_peer);
  return fmt::format("{}{}, {} B", to_string(op.kind), peers, op.bytes);
}

// A run opens with one dependency; the next, if it is on the same two channels and later on
// both, sets the steps; it goes on while the progression does. What cannot join closes it.
void DependencyRunBuilder::add(const Dependency& d) {
  if (open_) {
    const Dependency& a = run_.first;
    if (d.channel == a.channel && d.after_channel == a.after_channel) {
      if (run_.count == 1 && d.op > a.op && d.after_op >= a.after_op) {
        run_.op_step = d.op - a.op;
        run_.after_step = d.after_op - a.after_op;
        run_.count = 2;
        return;
      }
      if (run_.count >= 2 && d.op == a.op + run_.count * run_.op_step &&
          d.after_op == a.after_op + run_.count * run_.after_step) {
        ++run_.count;
        return;
      }
    }
    out_.push_back(run_);
  }
  run_ = DependencyRun{d};
  open_ = true;
}

void DependencyRunBuilder::finish() {
  if (open_) out_.push_back(run_);
  open_ = false;
}

std::vector<DependencyRun> compress(const std::vector<Dependency>& deps) {
  std::vector<DependencyRun> runs;
  DependencyRunBuilder b(runs);
  for (const Dependency& d : deps) b.add(d);
  b.finish();
  return runs;
}

void expand(const DependencyRun& run, std::vector<Dependency>& out) {
  for (std::uint64_t j = 0; j < run.count; ++j) {
    out.push_back({run.first.channel, run.first.op + j * run.op_step, run.first.after_channel,
                   run.first.after_op + j * run.after_step});
  }
}

}  // namespace collsim
