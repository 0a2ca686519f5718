// NCCL's own collective for the schedule's request, on the schedule's buffers (generator.hpp's
// layout is nccl-tests' layout, so the verifier checks NCCL's result as it checks a schedule's).
#include <fmt/format.h>

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/device_ranks.hpp"
#include "backends/nccl/nccl_backend.hpp"
#include "backends/nccl/nccl_check.hpp"
#include "backends/nccl/nccl_comms.hpp"
#include "topology/error.hpp"

namespace collsim {

namespace {

// AllToAll, Gather and Scatter as grouped point-to-point calls (what NCCL itself does below
// 2.28, which has no ncclAlltoAll / ncclGather / ncclScatter): block j of the input goes to rank
// j, block j of the output comes from rank j.
[[maybe_unused]] void exchange(const ScheduleInfo& info, int rank, const std::byte* in,
                               std::byte* out, ncclComm_t comm, cudaStream_t st) {
  const std::size_t n = info.count;
  const std::size_t bytes = n * element_size(info.dtype);
  const ncclDataType_t t = nccl_type(info.dtype);
  const int root = info.root;
  for (int peer = 0; peer < info.ranks; ++peer) {
    const std::byte* send = nullptr;
    std::byte* recv = nullptr;
    switch (info.collective) {
      case Collective::kAllToAll:
        send = in + peer * bytes;
        recv = out + peer * bytes;
        break;
      case Collective::kGather:
        if (peer == root) send = in;
        if (rank == root) recv = out + peer * bytes;
        break;
      case Collective::kScatter:
        if (rank == root) send = in + peer * bytes;
        if (peer == root) recv = out;
        break;
      default:
        break;
    }
    if (send != nullptr) nccl_check(ncclSend(send, n, t, peer, comm, st), "ncclSend", comm);
    if (recv != nullptr) nccl_check(ncclRecv(recv, n, t, peer, comm, st), "ncclRecv", comm);
  }
}

void enqueue(const ScheduleInfo& info, int rank, DeviceRanks& dev, ncclComm_t comm) {
  const std::byte* in = dev.ptr(rank, {BufferKind::kInput, 0});
  std::byte* out = dev.ptr(rank, {BufferKind::kOutput, 0});
  const cudaStream_t st = dev.stream(rank, 0);
  const ncclDataType_t t = nccl_type(info.dtype);
  const ncclRedOp_t op = nccl_op(info.redop);
  const std::size_t n = info.count;
  switch (info.collective) {
    case Collective::kAllReduce:
      return nccl_check(ncclAllReduce(in, out, n, t, op, comm, st), "ncclAllReduce", comm);
    case Collective::kAllGather:
      return nccl_check(ncclAllGather(in, out, n, t, comm, st), "ncclAllGather", comm);
    case Collective::kReduceScatter:
      return nccl_check(ncclReduceScatter(in, out, n, t, op, comm, st), "ncclReduceScatter", comm);
    case Collective::kBroadcast:
      return nccl_check(ncclBroadcast(in, out, n, t, info.root, comm, st), "ncclBroadcast", comm);
    case Collective::kReduce:
      return nccl_check(ncclReduce(in, out, n, t, op, info.root, comm, st), "ncclReduce", comm);
    case Collective::kSendRecv: {
      const int next = (rank + 1) % info.ranks;
      const int prev = (rank - 1 + info.ranks) % info.ranks;
      nccl_check(ncclSend(in, n, t, next, comm, st), "ncclSend", comm);
      return nccl_check(ncclRecv(out, n, t, prev, comm, st), "ncclRecv", comm);
    }
    case Collective::kBarrier: {
      // NCCL has no barrier; a one-element all-reduce is what frameworks use instead.
      std::byte* word = dev.staging(rank, 0);
      return nccl_check(ncclAllReduce(word, word, 1, ncclInt32, ncclSum, comm, st), "ncclAllReduce",
                        comm);
    }
    case Collective::kAllToAll:
    case Collective::kGather:
    case Collective::kScatter:
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
      if (info.collective == Collective::kAllToAll) {
        return nccl_check(ncclAlltoAll(in, out, n, t, comm, st), "ncclAlltoAll", comm);
      }
      if (info.collective == Collective::kGather) {
        return nccl_check(ncclGather(in, out, n, t, info.root, comm, st), "ncclGather", comm);
      }
      return nccl_check(ncclScatter(in, out, n, t, info.root, comm, st), "ncclScatter", comm);
#else
      return exchange(info, rank, in, out, comm, st);
#endif
  }
}

}  // namespace

RunResult run_nccl_native(const Schedule& s, NcclComms& comms, DeviceRanks& dev) {
  RunResult res;
  res.rank_time.assign(s.rank_count(), Time());
  dev.begin();
  dev.open_gates();  // NCCL may wait for the GPU inside its calls: never queue behind a gate
  // Every local rank's call in one group: one thread driving several GPUs must (NCCL docs,
  // "Group Calls"); with one rank per process the group is harmless.
  nccl_check(ncclGroupStart(), "ncclGroupStart");
  for (int r : dev.ranks()) {
    use_device(dev.device(r));
    enqueue(s.info(), r, dev, comms.get(0, r));
  }
  nccl_check(ncclGroupEnd(), "ncclGroupEnd");
  dev.end(&res);
  res.ops = dev.ranks().size();
  return res;
}

}  // namespace collsim
