// CUDA runtime errors as BackendErrors (internal to backends/cuda and backends/nccl).
//
//   cuda_check(cudaMalloc(&p, n), "cudaMalloc");   // "cudaMalloc: out of memory"
//   use_device(3);                                  // cudaSetDevice, checked
#pragma once

#include <cuda_runtime_api.h>

#include <string>

namespace collsim {

// Throws BackendError("<call>: <cudaGetErrorString>") unless rc == cudaSuccess.
void cuda_check(cudaError_t rc, const char* call);
void use_device(int device);
// An event on `device` (cudaEventCreateWithFlags, checked); `timing` for cudaEventElapsedTime.
cudaEvent_t new_event(int device, bool timing);

// The visible CUDA devices; BackendError "no CUDA device found (cudaGetDeviceCount: ...)" when
// there are none or the driver cannot say.
int cuda_device_count();

// "[0000:1b:00] NVIDIA H100 80GB HBM3": bus id and name, as nccl-tests prints them.
std::string describe_device(int device);

// Lets every pair of `devices` access each other's memory where the hardware allows it (NVLink,
// PCIe P2P); cudaMemcpyPeerAsync still works between the others, through the host.
void enable_peer_access(int device_count);

}  // namespace collsim
