// The NCCL backends: a schedule's sends and receives through ncclSend / ncclRecv (`nccl`), or
// NCCL's own collective for the same request (`nccl-native`), the reference a schedule is
// measured against.
//
// Ranks: in one process, one rank per visible GPU (ncclCommInitAll); started by an MPI launcher,
// one rank per process (its GPU: its local rank on the node, mod the node's GPUs), with NCCL's
// unique id broadcast over MPI, so the same command runs under `mpirun` on a cluster:
//
//   mpirun -np 16 collsim bench --backend nccl --op allreduce --algo ring -b 8 -e 8G
//
// `nccl` mode runs schedule.hpp's semantics in rounds: in each round every local stream (rank,
// channel) puts its sends whose data is ready, and its next receive, into one NCCL group (one
// group over all local ranks, as NCCL requires when a thread drives several GPUs); after the
// group, what was received is consumed on the stream (a copy, or a reduction kernel of
// cuda/device_kernels.hpp), and local copies and reductions run as kernels. Each channel has its
// own communicator and stream, so channels progress independently; cross-channel dependencies
// are CUDA events. The FIFO bound is NCCL's own p2p buffering (the same 8-step FIFO the schedule
// models). `nccl-native` ignores the ops and calls ncclAllReduce, ncclAllGather, ... (AllToAll,
// Gather and Scatter as grouped ncclSend / ncclRecv below NCCL 2.28) on the schedule's buffers.
//
// Timing is on the GPUs, as in the CUDA backend (cuda/device_ranks.hpp).
#pragma once

#include <memory>

#include "backends/backend.hpp"

namespace collsim {

class NcclComms;
class DeviceRanks;

class NcclBackend final : public Backend {
 public:
  enum class Mode { kSchedule, kNative };
  // BackendError without a GPU ("no CUDA device found (...)") or when NCCL cannot start.
  explicit NcclBackend(Mode mode);
  ~NcclBackend() override;
  std::string_view name() const override {
    return mode_ == Mode::kSchedule ? "nccl" : "nccl-native";
  }
  RunResult run(const Schedule& s, HostBuffers& buffers, const RunOptions& options = {}) override;
  std::vector<int> local_ranks(const Schedule& s) const override;
  Placement placement(int rank) const override;
  ProcessGroup& processes() override;
  // "NCCL version X.Y.Z": the library's, as ncclGetVersion gives it (not the header's).
  std::vector<std::string> header_comments() const override;
  int preferred_ranks() const override;

 private:
  Mode mode_;
  std::unique_ptr<ProcessGroup> world_;  // MPI when launched by mpirun, else one process
  std::unique_ptr<NcclComms> comms_;
  std::unique_ptr<DeviceRanks> dev_;
  std::shared_ptr<const OpSource> dev_source_;  // the schedule dev_ was made for
  ScheduleInfo dev_info_;
};

// Internal: one run of each mode on prepared devices (nccl_schedule.cpp, nccl_native.cpp).
RunResult run_nccl_schedule(const Schedule& s, NcclComms& comms, DeviceRanks& dev,
                            const RunOptions& options);
RunResult run_nccl_native(const Schedule& s, NcclComms& comms, DeviceRanks& dev);

}  // namespace collsim
