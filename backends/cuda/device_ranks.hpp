// The device side of a run, shared by the CUDA and NCCL backends: every local rank's input,
// output and scratch buffers on its GPU, a stream per (rank, channel), a staging buffer per
// stream, and the timing frame of one run (internal to backends/cuda and backends/nccl).
//
// A run is timed on the GPUs, not on the host: begin() parks each device behind a gate (a kernel
// spinning on host memory) followed by its start event, and every stream waits for that event;
// the host then queues the schedule's work and opens the gates (at the latest after kGateDepth
// operations on one device, so a closed gate never blocks the host on a full launch queue); end()
// joins each rank's streams into its end event and waits. A rank's time is start to end event,
// so copies between HostBuffers and the devices, and most of the host's queuing, are not in it.
//
//   DeviceRanks d(s, {0, 1, 2, 3}, {0, 0, 0, 0}, piece_bytes);  // four virtual ranks on GPU 0
//   d.upload_inputs(buffers);
//   d.begin();  ... enqueue on d.stream(r, c), calling d.count_enqueued(r) ...;  d.open_gates();
//   d.end(&result);  d.download_outputs(buffers);
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "algorithms/ir/schedule.hpp"
#include "backends/backend.hpp"

namespace collsim {

class DeviceRanks {
 public:
  static constexpr int kGateDepth = 256;

  // `devices[i]` is the GPU of `ranks[i]`; several ranks may share one.
  DeviceRanks(const Schedule& s, std::vector<int> ranks, std::vector<int> devices,
              std::uint64_t staging_bytes);
  ~DeviceRanks();
  DeviceRanks(const DeviceRanks&) = delete;
  DeviceRanks& operator=(const DeviceRanks&) = delete;

  const std::vector<int>& ranks() const { return ranks_; }
  int device(int rank) const { return at(rank).device; }
  std::byte* ptr(int rank, const BufferRef& ref) const;
  std::byte* staging(int rank, int channel) const { return at(rank).staging[channel]; }
  cudaStream_t stream(int rank, int channel) const { return at(rank).streams[channel]; }

  void upload_inputs(const HostBuffers& b) const;
  void download_outputs(HostBuffers& b) const;

  void begin();
  // Call once per operation queued for `rank`; opens the gates when a device's queue gets deep.
  void count_enqueued(int rank);
  void open_gates();
  // Fills rank_time (for the local ranks) and wall (the slowest local rank).
  void end(RunResult* result);
  // Time from the start of `rank`'s device to `e`, a timing event recorded on one of its streams
  // and completed.
  Time since_start(int rank, cudaEvent_t e) const;

 private:
  struct Rank {
    int rank = 0;
    int device = 0;
    std::byte* buffer[kBufferKindCount] = {};
    std::uint64_t bytes[kBufferKindCount] = {};
    std::vector<cudaStream_t> streams;
    std::vector<std::byte*> staging;
    std::vector<cudaEvent_t> joins;  // one per stream
    cudaStream_t join_stream = nullptr;
    cudaEvent_t end = nullptr;
  };
  struct Device {
    int id = 0;
    cudaStream_t gate_stream = nullptr;
    cudaEvent_t start = nullptr;
    int* flag = nullptr;  // host memory mapped into the device
    int* flag_on_device = nullptr;
    int queued = 0;
  };
  const Rank& at(int rank) const { return ranks_data_.at(index_.at(rank)); }
  Device& device_of(int rank) { return devices_.at(device_index_.at(at(rank).device)); }
  const Device& device_of(int rank) const { return devices_.at(device_index_.at(at(rank).device)); }

  std::vector<int> ranks_;
  std::vector<int> index_;  // schedule rank -> ranks_data_ (-1: not local)
  std::vector<Rank> ranks_data_;
  std::vector<Device> devices_;
  std::vector<int> device_index_;  // CUDA device id -> devices_ (-1: unused)
  bool gates_open_ = true;
};

}  // namespace collsim
