// One kernel per data type, the reduce op a run-time argument (uniform across the grid, so the
// branch costs nothing and the build instantiates 12 kernels, not 60). Arithmetic mirrors
// backends/reduce_kernels.cpp exactly, so that a GPU run and a CPU run of the same schedule give
// the same bytes.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "backends/cuda/device_kernels.hpp"
#include "backends/fp8.hpp"
#include "topology/error.hpp"

namespace collsim {

namespace {

// Integers wrap through their unsigned twin (no signed overflow), products widened so that
// uint8 * uint8 does not promote to a signed int that could overflow.
template <typename T>
__device__ T wrap_add(T x, T y) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(x) + static_cast<U>(y)));
}
template <typename T>
__device__ T wrap_mul(T x, T y) {
  using U = std::make_unsigned_t<T>;
  using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
  return static_cast<T>(
      static_cast<U>(static_cast<W>(static_cast<U>(x)) * static_cast<W>(static_cast<U>(y))));
}

template <typename T>
__device__ T combine(T x, T y, ReduceOp op, int divisor) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg: {
      T s;
      if constexpr (std::is_integral_v<T>) {
        s = wrap_add(x, y);
      } else {
        s = x + y;
      }
      if (op == ReduceOp::kAvg && divisor > 0) s = static_cast<T>(s / static_cast<T>(divisor));
      return s;
    }
    case ReduceOp::kProd:
      if constexpr (std::is_integral_v<T>) {
        return wrap_mul(x, y);
      } else {
        return x * y;
      }
    case ReduceOp::kMin:
      return y < x ? y : x;
    case ReduceOp::kMax:
      return x < y ? y : x;
  }
  return x;
}

// 16-bit floats: computed in float, rounded to nearest even on every store (the CPU backend's
// float_to_half / float_to_bf16); min and max return an operand's own bits.
template <typename H>
__device__ float to_float(H h) {
  if constexpr (std::is_same_v<H, __half>) {
    return __half2float(h);
  } else {
    return __bfloat162float(h);
  }
}
template <typename H>
__device__ H from_float(float f) {
  if constexpr (std::is_same_v<H, __half>) {
    return __float2half_rn(f);
  } else {
    return __float2bfloat16_rn(f);
  }
}

template <typename H>
__device__ H combine_half(H x, H y, ReduceOp op, int divisor) {
  const float fx = to_float(x), fy = to_float(y);
  switch (op) {
    case ReduceOp::kSum:
      return from_float<H>(fx + fy);
    case ReduceOp::kAvg: {
      const H s = from_float<H>(fx + fy);
      return divisor > 0 ? from_float<H>(to_float(s) / static_cast<float>(divisor)) : s;
    }
    case ReduceOp::kProd:
      return from_float<H>(fx * fy);
    case ReduceOp::kMin:
      return fy < fx ? y : x;
    case ReduceOp::kMax:
      return fx < fy ? y : x;
  }
  return x;
}

// 8-bit floats: the same, through backends/fp8.hpp's conversions (the CPU backend's own), on
// their bits.
template <Fp8 F>
struct Fp8Bits {
  std::uint8_t bits;
};

template <Fp8 F>
__device__ Fp8Bits<F> combine_fp8(Fp8Bits<F> x, Fp8Bits<F> y, ReduceOp op, int divisor) {
  const float fx = fp8_to_float<F>(x.bits), fy = fp8_to_float<F>(y.bits);
  const auto store = [](float f) { return Fp8Bits<F>{float_to_fp8<F>(f)}; };
  switch (op) {
    case ReduceOp::kSum:
      return store(fx + fy);
    case ReduceOp::kAvg: {
      const Fp8Bits<F> s = store(fx + fy);
      return divisor > 0 ? store(fp8_to_float<F>(s.bits) / static_cast<float>(divisor)) : s;
    }
    case ReduceOp::kProd:
      return store(fx * fy);
    case ReduceOp::kMin:
      return fy < fx ? y : x;
    case ReduceOp::kMax:
      return fx < fy ? y : x;
  }
  return x;
}

template <typename T>
__global__ void reduce_kernel(T* dst, const T* a, const T* b, std::size_t n, ReduceOp op,
                              int divisor) {
  const std::size_t stride = static_cast<std::size_t>(blockDim.x) * gridDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>) {
      dst[i] = combine_half(a[i], b[i], op, divisor);
    } else if constexpr (std::is_same_v<T, Fp8Bits<Fp8::kE4M3>> ||
                         std::is_same_v<T, Fp8Bits<Fp8::kE5M2>>) {
      dst[i] = combine_fp8(a[i], b[i], op, divisor);
    } else {
      dst[i] = combine(a[i], b[i], op, divisor);
    }
  }
}

__global__ void gate_kernel(const volatile int* flag) {
  while (*flag == 0) {
  }
}

template <typename T>
void launch(void* dst, const void* a, const void* b, std::size_t bytes, ReduceOp op, int divisor,
            cudaStream_t stream) {
  const std::size_t n = bytes / sizeof(T);
  if (n == 0) return;
  constexpr unsigned kThreads = 256;
  const std::size_t blocks = std::min<std::size_t>((n + kThreads - 1) / kThreads, 1024);
  reduce_kernel<T><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      static_cast<T*>(dst), static_cast<const T*>(a), static_cast<const T*>(b), n, op, divisor);
  const cudaError_t rc = cudaGetLastError();
  if (rc != cudaSuccess) {
    throw BackendError(std::string("reduce kernel launch: ") + cudaGetErrorString(rc));
  }
}

}  // namespace

void launch_reduce(DataType t, ReduceOp op, void* dst, const void* a, const void* b,
                   std::size_t bytes, int divisor, cudaStream_t stream) {
  switch (t) {
    case DataType::kF16:
      return launch<__half>(dst, a, b, bytes, op, divisor, stream);
    case DataType::kBf16:
      return launch<__nv_bfloat16>(dst, a, b, bytes, op, divisor, stream);
    case DataType::kF32:
      return launch<float>(dst, a, b, bytes, op, divisor, stream);
    case DataType::kF64:
      return launch<double>(dst, a, b, bytes, op, divisor, stream);
    case DataType::kI32:
      return launch<std::int32_t>(dst, a, b, bytes, op, divisor, stream);
    case DataType::kI64:
      return launch<std::int64_t>(dst, a, b, bytes, op, divisor, stream);
    case DataType::kU8:
      return launch<std::uint8_t>(dst, a, b, bytes, op, divisor, stream);
    case DataType::kI8:
      return launch<std::int8_t>(dst, a, b, bytes, op, divisor, stream);
    case DataType::kU32:
      return launch<std::uint32_t>(dst, a, b, bytes, op, divisor, stream);
    case DataType::kU64:
      return launch<std::uint64_t>(dst, a, b, bytes, op, divisor, stream);
    case DataType::kF8E4M3:
      return launch<Fp8Bits<Fp8::kE4M3>>(dst, a, b, bytes, op, divisor, stream);
    case DataType::kF8E5M2:
      return launch<Fp8Bits<Fp8::kE5M2>>(dst, a, b, bytes, op, divisor, stream);
  }
}

void launch_gate(const volatile int* flag, cudaStream_t stream) {
  gate_kernel<<<1, 1, 0, stream>>>(flag);
  const cudaError_t rc = cudaGetLastError();
  if (rc != cudaSuccess) {
    throw BackendError(std::string("gate kernel launch: ") + cudaGetErrorString(rc));
  }
}

}  // namespace collsim
