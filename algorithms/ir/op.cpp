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

std::vector<DependencyRun> compress(const std::vector<Dependency>& deps) {
  std::vector<DependencyRun> runs;
  for (std::size_t i = 0; i < deps.size();) {
    DependencyRun run{deps[i]};
    const Dependency& a = deps[i];
    std::size_t j = i + 1;
    if (j < deps.size() && deps[j].channel == a.channel &&
        deps[j].after_channel == a.after_channel && deps[j].op > a.op &&
        deps[j].after_op >= a.after_op) {
      run.op_step = deps[j].op - a.op;
      run.after_step = deps[j].after_op - a.after_op;
      while (j < deps.size() && deps[j].channel == a.channel &&
             deps[j].after_channel == a.after_channel &&
             deps[j].op == a.op + run.count * run.op_step &&
             deps[j].after_op == a.after_op + run.count * run.after_step) {
        ++run.count;
        ++j;
      }
    }
    runs.push_back(run);
    i = j;
  }
  return runs;
}

void expand(const DependencyRun& run, std::vector<Dependency>& out) {
  for (std::uint64_t j = 0; j < run.count; ++j) {
    out.push_back({run.first.channel, run.first.op + j * run.op_step, run.first.after_channel,
                   run.first.after_op + j * run.after_step});
  }
}

}  // namespace collsim
