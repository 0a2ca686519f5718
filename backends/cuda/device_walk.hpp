// The schedule walk's hooks that both GPU backends share (cuda_run.cpp, nccl/nccl_schedule.cpp;
// internal to them): a rank's memory is its DeviceRanks buffers, copies and reductions are queued
// on the (rank, channel) CUDA stream, a cross-channel dependency is an event recorded by one
// stream and waited for by the other, and with RunOptions::record_ops every op is timed by a
// pair of events. The backends add their transport: receive(), send().
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

#include "algorithms/ir/schedule_walk.hpp"
#include "backends/cuda/device_ranks.hpp"

namespace collsim {

class DeviceWalkHooks : public WalkHooks {
 public:
  // `dependency_events`, per rank and dependency (dependencies(rank) order), are the caller's
  // and outlive the run; without them the run makes its own.
  DeviceWalkHooks(const Schedule& s, DeviceRanks& dev, const RunOptions& o,
                  const std::vector<std::vector<cudaEvent_t>>* dependency_events = nullptr);
  ~DeviceWalkHooks() override;  // destroys the events it made
  DeviceWalkHooks(const DeviceWalkHooks&) = delete;
  DeviceWalkHooks& operator=(const DeviceWalkHooks&) = delete;

 protected:
  cudaStream_t stream(const WalkStream& st) const { return dev_.stream(st.rank(), st.channel()); }
  // Queued on st's stream.
  void wait(const WalkStream& st, cudaEvent_t e);
  void record(const WalkStream& st, cudaEvent_t e);
  // The recorded op timings, sorted by (rank, channel, op); after dev.end().
  std::vector<OpTiming> op_timings() const;

  std::byte* address(const WalkStream& st, const BufferRef& ref) override;
  void copy(const WalkStream& st, std::byte* dst, const std::byte* src, std::size_t n) override;
  void reduce(const WalkStream& st, std::byte* dst, const std::byte* a, const std::byte* b,
              std::size_t n, bool postop) override;
  void enter(const WalkStream& st) override;
  void begin(const WalkStream& st, const Op& op) override;
  void end(const WalkStream& st, const Op& op) override;
  void depend(const WalkStream& st, std::size_t index) override;
  void release(const WalkStream& st, std::size_t index) override;

  DeviceRanks& dev_;

 private:
  cudaEvent_t event(int rank, bool timing);  // destroyed with this

  struct Timed {
    OpTiming timing;
    cudaEvent_t start;
    cudaEvent_t end;
  };

  const DataType dtype_;
  const ReduceOp redop_;
  const int divisor_;  // avg's, in postop ops
  const bool record_ops_;
  std::vector<std::vector<cudaEvent_t>> own_dependency_events_;
  const std::vector<std::vector<cudaEvent_t>>& dependency_events_;
  std::vector<cudaEvent_t> events_;
  std::vector<cudaEvent_t> op_start_;  // by stream id (the walk of dev's ranks), with record_ops
  std::vector<Timed> timed_;
};

}  // namespace collsim
