// One instruction of a schedule: what a channel of a rank does next.
//
// Ops are NCCL's primitives (`src/device/prims_*.h`: send, recv, recvReduceSend, ...) reduced to
// what an executor needs: the kind, the peers, the buffer regions and the size. Every op moves or
// combines `bytes` bytes; offsets are byte offsets into the rank's own buffers.
//
//   kind                    reads                  writes            sends     receives
//   send                    src                    -                 src       -
//   recv                    -                      dst = in          -         in
//   recv-reduce             dst, in                dst = dst (+) in  -         in
//   recv-reduce-copy        src, in                dst = src (+) in  -         in
//   recv-reduce-send        src, in                -                 src (+) in  in
//   recv-reduce-copy-send   src, in                dst = src (+) in  dst       in
//   recv-copy-send          in                     dst = in          in        in
//   copy                    src                    dst = src         -         -
//   reduce                  src, dst               dst = dst (+) src -         -
//
// (+) is the schedule's ReduceOp applied element-wise. `postop` marks the op that produces a
// final reduced value: the executor applies the reduction's post-operation to that value before
// writing and sending it (for avg: divide by the communicator size; for every other op:
// nothing). A value received from a postop op is therefore already final.
//
// Matching rule: on channel c, the k-th op of rank a that sends to b matches the k-th op of rank
// b that receives from a; both carry the same `bytes`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace collsim {

enum class OpKind : std::uint8_t {
  kSend,
  kRecv,
  kRecvReduce,
  kRecvReduceCopy,
  kRecvReduceSend,
  kRecvReduceCopySend,
  kRecvCopySend,
  kCopy,
  kReduce,
};

enum class BufferKind : std::uint8_t { kInput, kOutput, kScratch };
inline constexpr int kBufferKindCount = 3;

struct BufferRef {
  BufferKind buffer = BufferKind::kInput;
  std::uint64_t offset = 0;  // bytes
  bool operator==(const BufferRef&) const = default;
};

struct Op {
  OpKind kind = OpKind::kCopy;
  bool postop = false;
  std::int32_t recv_peer = -1;  // rank received from, for kinds that receive
  std::int32_t send_peer = -1;  // rank sent to, for kinds that send
  BufferRef src;                // meaningful for kinds that read a local operand (table above)
  BufferRef dst;                // meaningful for kinds that write
  std::uint64_t bytes = 0;
  bool operator==(const Op&) const = default;
};

// A cross-channel edge inside one rank: op `op` of `channel` starts only after op `after_op` of
// `after_channel` has completed.
struct Dependency {
  int channel = 0;
  std::uint64_t op = 0;
  int after_channel = 0;
  std::uint64_t after_op = 0;
  bool operator==(const Dependency&) const = default;
};

// `count` dependencies in arithmetic progression: {channel, first.op + j x op_step,
// after_channel, first.after_op + j x after_step} for j < count. A source's runs are canonical
// (OpSource::dependency_runs): its sorted list cut greedily into the longest runs, so two lists
// are equal exactly when their runs are. A run of one has both steps 0.
struct DependencyRun {
  Dependency first;
  std::uint64_t count = 1;
  std::uint64_t op_step = 0;
  std::uint64_t after_step = 0;
  bool operator==(const DependencyRun&) const = default;
};

// Cuts a sorted dependency list into its canonical runs as the list arrives, one dependency at
// a time, appending them to `out`: compress() without the list, for a source whose dependencies
// come one per piece (NVLSTree's switches: millions at scale). finish() closes the last run.
class DependencyRunBuilder {
 public:
  explicit DependencyRunBuilder(std::vector<DependencyRun>& out) : out_(out) {}
  void add(const Dependency& d);
  void finish();

 private:
  std::vector<DependencyRun>& out_;
  DependencyRun run_;
  bool open_ = false;
};

// The canonical runs of a sorted dependency list, and the list a run stands for.
std::vector<DependencyRun> compress(const std::vector<Dependency>& deps);
void expand(const DependencyRun& run, std::vector<Dependency>& out);

std::string_view to_string(OpKind k);
std::string_view to_string(BufferKind b);

bool receives(OpKind k);
bool sends(OpKind k);
bool reduces(OpKind k);  // combines two operands with the ReduceOp
bool reads_src(OpKind k);
bool reads_dst(OpKind k);  // read-modify-write of dst
bool writes_dst(OpKind k);

// "recv-reduce-send from rank 3 to rank 1, 4096 B": how error messages name an op.
std::string describe(const Op& op);

// Factories, one per kind, with the operands that kind uses (see the table above).
namespace ops {
inline BufferRef in(std::uint64_t offset) { return {BufferKind::kInput, offset}; }
inline BufferRef out(std::uint64_t offset) { return {BufferKind::kOutput, offset}; }
inline BufferRef scratch(std::uint64_t offset) { return {BufferKind::kScratch, offset}; }

inline Op send(int to, BufferRef src, std::uint64_t bytes) {
  return {OpKind::kSend, false, -1, to, src, {}, bytes};
}
inline Op recv(int from, BufferRef dst, std::uint64_t bytes) {
  return {OpKind::kRecv, false, from, -1, {}, dst, bytes};
}
inline Op recv_reduce(int from, BufferRef dst, std::uint64_t bytes, bool postop = false) {
  return {OpKind::kRecvReduce, postop, from, -1, {}, dst, bytes};
}
inline Op recv_reduce_copy(int from, BufferRef src, BufferRef dst, std::uint64_t bytes,
                           bool postop = false) {
  return {OpKind::kRecvReduceCopy, postop, from, -1, src, dst, bytes};
}
inline Op recv_reduce_send(int from, int to, BufferRef src, std::uint64_t bytes) {
  return {OpKind::kRecvReduceSend, false, from, to, src, {}, bytes};
}
inline Op recv_reduce_copy_send(int from, int to, BufferRef src, BufferRef dst, std::uint64_t bytes,
                                bool postop = false) {
  return {OpKind::kRecvReduceCopySend, postop, from, to, src, dst, bytes};
}
inline Op recv_copy_send(int from, int to, BufferRef dst, std::uint64_t bytes) {
  return {OpKind::kRecvCopySend, false, from, to, {}, dst, bytes};
}
inline Op copy(BufferRef src, BufferRef dst, std::uint64_t bytes) {
  return {OpKind::kCopy, false, -1, -1, src, dst, bytes};
}
inline Op reduce(BufferRef src, BufferRef dst, std::uint64_t bytes, bool postop = false) {
  return {OpKind::kReduce, postop, -1, -1, src, dst, bytes};
}
}  // namespace ops

}  // namespace collsim
