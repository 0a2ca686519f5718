// The two 8-bit floats NCCL reduces from 2.24 (ncclFloat8e4m3, ncclFloat8e5m2, src/nccl.h.in):
// OCP FP8 E4M3 (4 exponent bits, bias 7, 3 mantissa bits, no infinities, NaN S.1111.111, largest
// 448) and E5M2 (5 exponent bits, bias 15, 2 mantissa bits, IEEE infinities and NaNs, largest
// 57344). A float becomes one rounded to nearest, ties to even, and saturated to the largest
// finite value, as CUDA's __nv_cvt_float_to_fp8 with __NV_SATFINITE does (NCCL's own conversion
// in src/device/reduce_kernel.h). Written once, on the float's bits, for the CPU backend and the
// CUDA kernels alike, so that both store the same bytes.
//
//   std::uint8_t b = float_to_fp8<Fp8::kE4M3>(1.75f);   // 0x3E
//   float f = fp8_to_float<Fp8::kE4M3>(b);               // 1.75f
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define COLLSIM_HD __host__ __device__
#else
#define COLLSIM_HD
#endif

namespace collsim {

enum class Fp8 { kE4M3, kE5M2 };

namespace fp8_detail {

template <Fp8 F>
struct Format;
template <>
struct Format<Fp8::kE4M3> {
  static constexpr int kExpBits = 4, kManBits = 3, kBias = 7;
  static constexpr std::uint8_t kMaxFinite = 0x7E;  // S.1111.110 = 448
  static constexpr std::uint8_t kNan = 0x7F;
};
template <>
struct Format<Fp8::kE5M2> {
  static constexpr int kExpBits = 5, kManBits = 2, kBias = 15;
  static constexpr std::uint8_t kMaxFinite = 0x7B;  // S.11110.11 = 57344
  static constexpr std::uint8_t kNan = 0x7F;
};

COLLSIM_HD inline std::uint32_t bits_of(float f) {
  std::uint32_t x;
  __builtin_memcpy(&x, &f, sizeof(x));
  return x;
}

COLLSIM_HD inline float float_of(std::uint32_t x) {
  float f;
  __builtin_memcpy(&f, &x, sizeof(f));
  return f;
}

// `v` shifted right by `shift` (1 to 31) bits, rounded to nearest, ties to even.
COLLSIM_HD inline std::uint32_t shift_rne(std::uint32_t v, int shift) {
  const std::uint32_t kept = v >> shift;
  const std::uint32_t rest = v & ((std::uint32_t{1} << shift) - 1);
  const std::uint32_t half = std::uint32_t{1} << (shift - 1);
  return kept + ((rest > half || (rest == half && (kept & 1))) ? 1 : 0);
}

}  // namespace fp8_detail

template <Fp8 F>
COLLSIM_HD inline std::uint8_t float_to_fp8(float f) {
  using Fmt = fp8_detail::Format<F>;
  constexpr int M = Fmt::kManBits;
  const std::uint32_t x = fp8_detail::bits_of(f);
  const auto sign = static_cast<std::uint8_t>((x >> 24) & 0x80);
  const int exp32 = static_cast<int>((x >> 23) & 0xFF);
  const std::uint32_t man32 = x & 0x7FFFFF;
  if (exp32 == 0xFF && man32 != 0) return static_cast<std::uint8_t>(sign | Fmt::kNan);
  if (exp32 == 0xFF) return static_cast<std::uint8_t>(sign | Fmt::kMaxFinite);  // saturated
  if (exp32 == 0) return sign;       // float subnormals lie far below either format's smallest
  int e = exp32 - 127 + Fmt::kBias;  // the biased exponent in the 8-bit format
  std::uint32_t code;
  if (e >= 1) {
    std::uint32_t man = fp8_detail::shift_rne(man32, 23 - M);
    if (man == (std::uint32_t{1} << M)) {  // rounded up into the next binade
      man = 0;
      ++e;
    }
    code = (static_cast<std::uint32_t>(e) << M) | man;
  } else {
    // Below the smallest normal: multiples of 2^(1 - bias - M), the significand's 24 bits
    // shifted down; 2^M of them is the smallest normal, which the same code already spells.
    const int shift = 24 - M - e;
    if (shift > 25) return sign;
    code = fp8_detail::shift_rne((std::uint32_t{1} << 23) | man32, shift);
  }
  if (code > Fmt::kMaxFinite) code = Fmt::kMaxFinite;
  return static_cast<std::uint8_t>(sign | code);
}

template <Fp8 F>
COLLSIM_HD inline float fp8_to_float(std::uint8_t b) {
  using Fmt = fp8_detail::Format<F>;
  constexpr int M = Fmt::kManBits;
  constexpr std::uint32_t kExpMax = (std::uint32_t{1} << Fmt::kExpBits) - 1;
  const std::uint32_t sign = static_cast<std::uint32_t>(b & 0x80) << 24;
  const std::uint32_t e = (b >> M) & kExpMax;
  const std::uint32_t m = b & ((std::uint32_t{1} << M) - 1);
  if (F == Fp8::kE4M3 && e == kExpMax && m == (std::uint32_t{1} << M) - 1) {
    return fp8_detail::float_of(sign | 0x7FC00000);  // NaN
  }
  if (F == Fp8::kE5M2 && e == kExpMax) {
    return fp8_detail::float_of(sign | 0x7F800000 | (m != 0 ? 0x400000 : 0));  // inf, NaN
  }
  if (e == 0) {
    // m x 2^(1 - bias - M), exact in float.
    const float unit =
        fp8_detail::float_of(static_cast<std::uint32_t>(127 + 1 - Fmt::kBias - M) << 23);
    const float v = static_cast<float>(m) * unit;
    return sign != 0 ? -v : v;
  }
  return fp8_detail::float_of(sign | ((e - Fmt::kBias + 127) << 23) | (m << (23 - M)));
}

}  // namespace collsim
