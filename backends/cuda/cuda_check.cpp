#include "backends/cuda/cuda_check.hpp"

#include <fmt/format.h>

#include <array>
#include <cctype>

#include "topology/error.hpp"

namespace collsim {

void cuda_check(cudaError_t rc, const char* call) {
  if (rc == cudaSuccess) return;
  throw BackendError(fmt::format("{}: {}", call, cudaGetErrorString(rc)));
}

void use_device(int device) { cuda_check(cudaSetDevice(device), "cudaSetDevice"); }

cudaEvent_t new_event(int device, bool timing) {
  use_device(device);
  cudaEvent_t e = nullptr;
  cuda_check(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming),
             "cudaEventCreateWithFlags");
  return e;
}

int cuda_device_count() {
  int n = 0;
  const cudaError_t rc = cudaGetDeviceCount(&n);
  if (rc != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" state for later calls
    throw BackendError(
        fmt::format("no CUDA device found (cudaGetDeviceCount: {})", cudaGetErrorString(rc)));
  }
  if (n == 0) throw BackendError("no CUDA device found (cudaGetDeviceCount: 0 devices)");
  return n;
}

std::string describe_device(int device) {
  std::array<char, 32> bus{};
  cuda_check(cudaDeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()), device),
             "cudaDeviceGetPCIBusId");
  cudaDeviceProp prop{};
  cuda_check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  // "0000:1B:00.0" -> "[0000:1b:00]", nccl-tests' spelling.
  std::string id(bus.data());
  if (const auto dot = id.rfind('.'); dot != std::string::npos) id.resize(dot);
  for (char& c : id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return fmt::format("[{}] {}", id, prop.name);
}

void enable_peer_access(int device_count) {
  for (int a = 0; a < device_count; ++a) {
    use_device(a);
    for (int b = 0; b < device_count; ++b) {
      if (a == b) continue;
      int can = 0;
      cuda_check(cudaDeviceCanAccessPeer(&can, a, b), "cudaDeviceCanAccessPeer");
      if (!can) continue;
      const cudaError_t rc = cudaDeviceEnablePeerAccess(b, 0);
      if (rc == cudaErrorPeerAccessAlreadyEnabled) {
        cudaGetLastError();
        continue;
      }
      cuda_check(rc, "cudaDeviceEnablePeerAccess");
    }
  }
}

}  // namespace collsim
