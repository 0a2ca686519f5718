// NCCL communicators for the NCCL backends (internal to backends/nccl).
//
// Single process: one rank per visible GPU, all made by ncclCommInitAll. Under an MPI launcher:
// one rank per process on GPU (local rank on its node mod the node's GPUs), made by
// ncclCommInitRank with the unique id broadcast over MPI. Communicators are made per channel on
// first use (the schedule backend gives every channel its own, so that channels progress
// independently, as NCCL's own channels do) and kept until the backend closes.
//
//   NcclComms comms(world);             // world: nullptr for one process
//   ncclComm_t c = comms.get(channel, rank);
#pragma once

#include <nccl.h>

#include <vector>

#include "backends/backend.hpp"

namespace collsim {

class NcclComms {
 public:
  // `world` is the MPI process group (one rank per process) or nullptr (one process, every GPU).
  explicit NcclComms(ProcessGroup* world);
  ~NcclComms();
  NcclComms(const NcclComms&) = delete;
  NcclComms& operator=(const NcclComms&) = delete;

  int rank_count() const { return ranks_; }
  const std::vector<int>& local_ranks() const { return local_; }
  int device_of(int rank) const;
  // The communicator of `channel` for local `rank`, made on first use (a collective call across
  // every process in MPI mode: all must ask for the same channels in the same order).
  ncclComm_t get(int channel, int rank);
  void ensure_channels(int channels);

 private:
  ProcessGroup* world_;
  int ranks_ = 0;
  std::vector<int> local_;                      // local ranks
  std::vector<int> devices_;                    // device of each local rank
  std::vector<std::vector<ncclComm_t>> comms_;  // [channel][local index]
};

}  // namespace collsim
