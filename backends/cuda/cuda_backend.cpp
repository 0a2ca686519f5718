#include "backends/cuda/cuda_backend.hpp"

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_plan.hpp"

namespace collsim {

// run() lives in cuda_run.cpp, with the engine.

CudaBackend::CudaBackend() : devices_(cuda_device_count()) { enable_peer_access(devices_); }

CudaBackend::~CudaBackend() = default;

Backend::Placement CudaBackend::placement(int rank) const {
  return {device_of(rank), describe_device(device_of(rank))};
}

}  // namespace collsim
