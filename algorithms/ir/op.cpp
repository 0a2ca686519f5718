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

}  // namespace collsim
