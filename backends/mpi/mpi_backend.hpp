// The MPI backend: a schedule run by real processes, one rank per MPI process, exchanging its
// pieces with MPI_Issend / MPI_Irecv. A distributed run that works on any machine (and the way
// collsim measures a CPU cluster):
//
//   mpirun -np 4 collsim bench --backend mpi --op allreduce -b 8 -e 64M
//
// Execution follows schedule.hpp unchanged. Each process runs its rank's channels concurrently
// from one thread (a progress loop that advances every channel as far as it can without
// blocking). Every piece of a connection (channel c, a -> b) is one message with tag c on a
// private communicator; MPI's non-overtaking rule keeps pieces in order. The bounded FIFO of
// `slots` pieces is split between the two ends: the receiver keeps R = slots / 2 receives posted
// into its own slot buffers, and the sender keeps at most S = slots - R synchronous sends
// unmatched. A piece counts as posted when its MPI_Issend is issued; it is matched only once a
// receive slot is free, i.e. once the piece R places earlier was consumed. So at any time at most
// R + S = slots pieces are posted and not consumed, and a sender may post exactly when the
// schedule's FIFO rule allows (for slots = 1, R = 0 and receives are posted on demand).
// Reductions use reduce_kernels.hpp, as the CPU backend does.
//
// local_ranks() is this process's MPI rank; the schedule must have as many ranks as the job has
// processes (BackendError otherwise). A run that makes no progress for RunOptions::stall_timeout
// is abandoned with a BackendError naming what this rank waits for; the backend is unusable
// afterwards (messages of the failed run may still be in flight).
#pragma once

#include <memory>

#include "backends/backend.hpp"

namespace collsim {

class MpiWorld;

class MpiBackend final : public Backend {
 public:
  MpiBackend();  // joins MPI (MpiSession), BackendError if it cannot
  ~MpiBackend() override;
  std::string_view name() const override { return "mpi"; }
  RunResult run(const Schedule& s, HostBuffers& buffers, const RunOptions& options = {}) override;
  std::vector<int> local_ranks(const Schedule& s) const override;
  Placement placement(int rank) const override;
  ProcessGroup& processes() override;
  int preferred_ranks() const override;

  struct Plan;  // per-schedule set-up, kept across runs of the same schedule

 private:
  std::unique_ptr<MpiWorld> world_;
  std::unique_ptr<Plan> plan_;
  bool failed_ = false;
};

}  // namespace collsim
