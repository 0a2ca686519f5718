// The CUDA backend: a schedule run on GPUs, every rank bound to a GPU of this process (rank r on
// device r mod the device count, so several virtual ranks can share one GPU; that is how it is
// tested on a single-GPU machine).
//
// Execution follows schedule.hpp unchanged, queued on the GPUs: each (rank, channel) is a CUDA
// stream; each connection (channel c, a -> b) is a FIFO of `slots` slot buffers on b's GPU with a
// "sent" and a "consumed" event per slot. A piece is a peer copy (cudaMemcpyPeerAsync) into the
// next slot, queued once the piece `slots` earlier was consumed (the stream waits for that
// slot's consumed event), followed by the slot's sent event; the receiver's stream waits for the
// sent event, consumes the piece (a copy, or a reduction kernel for every data type and reduce op
// of the CPU backend) and records the consumed event. Fused ops forward piece by piece; cross-
// channel dependencies are events too. The host queues everything without waiting for the GPUs,
// in an order that respects the schedule (a piece is queued only after what it waits for was
// queued), so a schedule that cannot finish is found on the host, as in the CPU backend.
//
// Timing is on the GPUs (device_ranks.hpp): RunResult::wall and rank_time exclude the copies
// between HostBuffers and device memory; RunOptions::same_inputs / discard_outputs skip them.
//
//   CudaBackend cuda;                      // BackendError "no CUDA device found (...)" without one
//   HostBuffers buf = make_inputs(s, 1);
//   RunResult r = cuda.run(s, buf);         // 8 ranks on 1 GPU: 8 virtual ranks
#pragma once

#include <memory>

#include "backends/backend.hpp"

namespace collsim {

class CudaBackend final : public Backend {
 public:
  CudaBackend();
  ~CudaBackend() override;
  std::string_view name() const override { return "cuda"; }
  RunResult run(const Schedule& s, HostBuffers& buffers, const RunOptions& options = {}) override;
  Placement placement(int rank) const override;
  int preferred_ranks() const override { return devices_; }
  int device_of(int rank) const { return rank % devices_; }

  struct Plan;  // device memory, streams, FIFOs and events for one schedule, kept across runs

 private:
  int devices_ = 0;
  std::unique_ptr<Plan> plan_;
};

}  // namespace collsim
