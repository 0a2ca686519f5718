// The CUDA backend's kernels (device_kernels.cu), callable from plain C++: element-wise
// reductions with the CPU backend's arithmetic (reduce_kernels.hpp: f16 and bf16 computed in
// float and rounded to nearest even on store, integers wrapping, avg dividing in postop ops),
// and the gate that holds a device's streams until the host has queued their work.
//
//   launch_reduce(DataType::kBf16, ReduceOp::kSum, dst, a, b, bytes, 0, stream);  // dst = a + b
//   launch_gate(flag, stream);   // the stream waits until *flag != 0 (host-mapped memory)
// Launch failures are BackendErrors naming the kernel.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "algorithms/ir/types.hpp"

namespace collsim {

// dst[i] = a[i] (+) b[i] over `bytes` bytes of type t, enqueued on `stream`; dst may alias a or
// b. With divisor > 0 (avg's postop) the result is then divided by divisor.
void launch_reduce(DataType t, ReduceOp op, void* dst, const void* a, const void* b,
                   std::size_t bytes, int divisor, cudaStream_t stream);

// A one-thread kernel that spins until *flag (host memory mapped into the device) is non-zero.
void launch_gate(const volatile int* flag, cudaStream_t stream);

}  // namespace collsim
