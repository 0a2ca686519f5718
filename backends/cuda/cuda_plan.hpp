// What the CUDA backend keeps for one schedule across runs (internal; cuda_backend.hpp says how
// it is used): device buffers and streams, the connections' FIFOs and events, dependency events.
#pragma once

#include <cuda_runtime_api.h>

#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/device_ranks.hpp"

namespace collsim {

// Connection (channel, from -> to): `slots` slot buffers on the receiver's GPU, events per slot.
struct CudaConn {
  int from = 0;
  int to = 0;
  std::uint64_t slot_bytes = 0;
  std::byte* fifo = nullptr;
  std::vector<cudaEvent_t> sent = {};      // recorded on the sender's stream (sender's device)
  std::vector<cudaEvent_t> consumed = {};  // recorded on the receiver's stream
};

struct CudaBackend::Plan {
  std::shared_ptr<const OpSource> source;
  ScheduleInfo info;
  std::vector<int> devices;
  std::unique_ptr<DeviceRanks> dev;
  std::vector<CudaConn> conns;
  std::map<std::tuple<int, int, int>, int> conn_index;  // (channel, from, to)
  // Per rank, per dependency (in s.dependencies(rank) order): its event.
  std::vector<std::vector<cudaEvent_t>> dep_events;

  Plan() = default;
  ~Plan();
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
};

}  // namespace collsim
