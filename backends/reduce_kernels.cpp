#include "backends/reduce_kernels.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "backends/fp8.hpp"

namespace collsim {

std::uint16_t float_to_half(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000);
  std::uint32_t mant = x & 0x7FFFFF;
  const int exp = static_cast<int>((x >> 23) & 0xFF);
  if (exp == 0xFF) return sign | 0x7C00 | (mant != 0 ? 0x200 : 0);  // inf, nan
  const int e = exp - 127 + 15;
  if (e >= 31) return sign | 0x7C00;  // overflow
  if (e <= 0) {                       // subnormal half (or zero)
    if (e < -10) return sign;
    mant |= 0x800000;
    const int shift = 14 - e;
    std::uint32_t h = mant >> shift;
    const std::uint32_t rest = mant & ((1u << shift) - 1);
    const std::uint32_t half = 1u << (shift - 1);
    if (rest > half || (rest == half && (h & 1))) ++h;
    return static_cast<std::uint16_t>(sign | h);
  }
  std::uint32_t h = sign | (static_cast<std::uint32_t>(e) << 10) | (mant >> 13);
  const std::uint32_t rest = mant & 0x1FFF;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;  // a carry rounds up to the next binade
  return static_cast<std::uint16_t>(h);
}

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1F;
  const std::uint32_t mant = h & 0x3FF;
  if (exp == 0) {
    const float v = std::ldexp(static_cast<float>(mant), -24);
    return sign != 0 ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7F800000 | (mant << 13));
  return std::bit_cast<float>(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

std::uint16_t float_to_bf16(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7F800000) == 0x7F800000 && (x & 0x7FFFFF) != 0) {
    return static_cast<std::uint16_t>((x >> 16) | 0x40);  // quiet nan
  }
  return static_cast<std::uint16_t>((x + 0x7FFF + ((x >> 16) & 1)) >> 16);
}

float bf16_to_float(std::uint16_t h) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16);
}

namespace {

template <typename T, typename F>
void each(std::byte* dst, const std::byte* a, const std::byte* b, std::size_t bytes, F f) {
  const std::size_t n = bytes / sizeof(T);
  for (std::size_t i = 0; i < n; ++i) {
    T x, y;
    std::memcpy(&x, a + i * sizeof(T), sizeof(T));
    std::memcpy(&y, b + i * sizeof(T), sizeof(T));
    const T r = f(x, y);
    std::memcpy(dst + i * sizeof(T), &r, sizeof(T));
  }
}

// Native arithmetic types (integers wrap through their unsigned twin).
template <typename T>
void native(ReduceOp op, std::byte* dst, const std::byte* a, const std::byte* b, std::size_t bytes,
            int divisor) {
  auto add = [](T x, T y) -> T {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(static_cast<U>(x) + static_cast<U>(y)));
    } else {
      return x + y;
    }
  };
  switch (op) {
    case ReduceOp::kSum:
      each<T>(dst, a, b, bytes, add);
      break;
    case ReduceOp::kAvg:
      each<T>(dst, a, b, bytes, [&](T x, T y) -> T {
        const T s = add(x, y);
        return divisor > 0 ? static_cast<T>(s / static_cast<T>(divisor)) : s;
      });
      break;
    case ReduceOp::kProd:
      each<T>(dst, a, b, bytes, [](T x, T y) -> T {
        if constexpr (std::is_integral_v<T>) {
          using U = std::make_unsigned_t<T>;
          using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
          return static_cast<T>(static_cast<U>(static_cast<W>(static_cast<U>(x)) *
                                               static_cast<W>(static_cast<U>(y))));
        } else {
          return x * y;
        }
      });
      break;
    case ReduceOp::kMin:
      each<T>(dst, a, b, bytes, [](T x, T y) { return std::min(x, y); });
      break;
    case ReduceOp::kMax:
      each<T>(dst, a, b, bytes, [](T x, T y) { return std::max(x, y); });
      break;
  }
}

// 16- and 8-bit floats: computed in float, rounded on every store.
template <typename Bits, float (*Load)(Bits), Bits (*Store)(float)>
void half(ReduceOp op, std::byte* dst, const std::byte* a, const std::byte* b, std::size_t bytes,
          int divisor) {
  each<Bits>(dst, a, b, bytes, [&](Bits x, Bits y) -> Bits {
    const float fx = Load(x), fy = Load(y);
    switch (op) {
      case ReduceOp::kSum:
        return Store(fx + fy);
      case ReduceOp::kAvg: {
        const Bits s = Store(fx + fy);
        return divisor > 0 ? Store(Load(s) / static_cast<float>(divisor)) : s;
      }
      case ReduceOp::kProd:
        return Store(fx * fy);
      case ReduceOp::kMin:
        return fy < fx ? y : x;
      case ReduceOp::kMax:
        return fx < fy ? y : x;
    }
    return x;
  });
}

}  // namespace

void reduce(DataType t, ReduceOp op, std::byte* dst, const std::byte* a, const std::byte* b,
            std::size_t bytes, int divisor) {
  switch (t) {
    case DataType::kF16:
      return half<std::uint16_t, half_to_float, float_to_half>(op, dst, a, b, bytes, divisor);
    case DataType::kBf16:
      return half<std::uint16_t, bf16_to_float, float_to_bf16>(op, dst, a, b, bytes, divisor);
    case DataType::kF8E4M3:
      return half<std::uint8_t, fp8_to_float<Fp8::kE4M3>, float_to_fp8<Fp8::kE4M3>>(op, dst, a, b,
                                                                                    bytes, divisor);
    case DataType::kF8E5M2:
      return half<std::uint8_t, fp8_to_float<Fp8::kE5M2>, float_to_fp8<Fp8::kE5M2>>(op, dst, a, b,
                                                                                    bytes, divisor);
    case DataType::kF32:
      return native<float>(op, dst, a, b, bytes, divisor);
    case DataType::kF64:
      return native<double>(op, dst, a, b, bytes, divisor);
    case DataType::kI32:
      return native<std::int32_t>(op, dst, a, b, bytes, divisor);
    case DataType::kI64:
      return native<std::int64_t>(op, dst, a, b, bytes, divisor);
    case DataType::kU8:
      return native<std::uint8_t>(op, dst, a, b, bytes, divisor);
    case DataType::kI8:
      return native<std::int8_t>(op, dst, a, b, bytes, divisor);
    case DataType::kU32:
      return native<std::uint32_t>(op, dst, a, b, bytes, divisor);
    case DataType::kU64:
      return native<std::uint64_t>(op, dst, a, b, bytes, divisor);
  }
}

double load_element(DataType t, const std::byte* p, std::size_t i) {
  auto get = [&](auto v) {
    std::memcpy(&v, p + i * sizeof(v), sizeof(v));
    return v;
  };
  switch (t) {
    case DataType::kF16:
      return half_to_float(get(std::uint16_t{}));
    case DataType::kBf16:
      return bf16_to_float(get(std::uint16_t{}));
    case DataType::kF32:
      return get(float{});
    case DataType::kF64:
      return get(double{});
    case DataType::kI32:
      return get(std::int32_t{});
    case DataType::kI64:
      return static_cast<double>(get(std::int64_t{}));
    case DataType::kU8:
      return get(std::uint8_t{});
    case DataType::kI8:
      return get(std::int8_t{});
    case DataType::kU32:
      return get(std::uint32_t{});
    case DataType::kU64:
      return static_cast<double>(get(std::uint64_t{}));
    case DataType::kF8E4M3:
      return fp8_to_float<Fp8::kE4M3>(get(std::uint8_t{}));
    case DataType::kF8E5M2:
      return fp8_to_float<Fp8::kE5M2>(get(std::uint8_t{}));
  }
  return 0;
}

void store_element(DataType t, std::byte* p, std::size_t i, double v) {
  auto put = [&](auto x) { std::memcpy(p + i * sizeof(x), &x, sizeof(x)); };
  auto wrap = [](double d) {  // two's complement wrap of an integral double
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(d));
  };
  switch (t) {
    case DataType::kF16:
      return put(float_to_half(static_cast<float>(v)));
    case DataType::kBf16:
      return put(float_to_bf16(static_cast<float>(v)));
    case DataType::kF32:
      return put(static_cast<float>(v));
    case DataType::kF64:
      return put(v);
    case DataType::kI32:
      return put(static_cast<std::int32_t>(static_cast<std::uint32_t>(wrap(v))));
    case DataType::kI64:
      return put(static_cast<std::int64_t>(wrap(v)));
    case DataType::kU8:
      return put(static_cast<std::uint8_t>(wrap(v)));
    case DataType::kI8:
      return put(static_cast<std::int8_t>(static_cast<std::uint8_t>(wrap(v))));
    case DataType::kU32:
      return put(static_cast<std::uint32_t>(wrap(v)));
    case DataType::kU64:
      return put(wrap(v));
    case DataType::kF8E4M3:
      return put(float_to_fp8<Fp8::kE4M3>(static_cast<float>(v)));
    case DataType::kF8E5M2:
      return put(float_to_fp8<Fp8::kE5M2>(static_cast<float>(v)));
  }
}

namespace {

template <typename T, typename F>
void load_as(const std::byte* p, std::size_t n, double* out, F f) {
  for (std::size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, p + i * sizeof(T), sizeof(T));
    out[i] = f(v);
  }
}

template <typename T, typename F>
void store_as(std::byte* p, std::size_t n, const double* in, F f) {
  for (std::size_t i = 0; i < n; ++i) {
    const T v = f(in[i]);
    std::memcpy(p + i * sizeof(T), &v, sizeof(T));
  }
}

std::uint64_t wrap64(double d) { return static_cast<std::uint64_t>(static_cast<std::int64_t>(d)); }

}  // namespace

void load_elements(DataType t, const std::byte* p, std::size_t n, double* out) {
  switch (t) {
    case DataType::kF16:
      return load_as<std::uint16_t>(p, n, out,
                                    [](std::uint16_t v) { return double{half_to_float(v)}; });
    case DataType::kBf16:
      return load_as<std::uint16_t>(p, n, out,
                                    [](std::uint16_t v) { return double{bf16_to_float(v)}; });
    case DataType::kF32:
      return load_as<float>(p, n, out, [](float v) { return double{v}; });
    case DataType::kF64:
      return load_as<double>(p, n, out, [](double v) { return v; });
    case DataType::kI32:
      return load_as<std::int32_t>(p, n, out,
                                   [](std::int32_t v) { return double{static_cast<double>(v)}; });
    case DataType::kI64:
      return load_as<std::int64_t>(p, n, out,
                                   [](std::int64_t v) { return static_cast<double>(v); });
    case DataType::kU8:
      return load_as<std::uint8_t>(p, n, out,
                                   [](std::uint8_t v) { return double{static_cast<double>(v)}; });
    case DataType::kI8:
      return load_as<std::int8_t>(p, n, out,
                                  [](std::int8_t v) { return double{static_cast<double>(v)}; });
    case DataType::kU32:
      return load_as<std::uint32_t>(p, n, out,
                                    [](std::uint32_t v) { return double{static_cast<double>(v)}; });
    case DataType::kU64:
      return load_as<std::uint64_t>(p, n, out,
                                    [](std::uint64_t v) { return static_cast<double>(v); });
    case DataType::kF8E4M3:
      return load_as<std::uint8_t>(
          p, n, out, [](std::uint8_t v) { return double{fp8_to_float<Fp8::kE4M3>(v)}; });
    case DataType::kF8E5M2:
      return load_as<std::uint8_t>(
          p, n, out, [](std::uint8_t v) { return double{fp8_to_float<Fp8::kE5M2>(v)}; });
  }
}

void store_elements(DataType t, std::byte* p, std::size_t n, const double* in) {
  switch (t) {
    case DataType::kF16:
      return store_as<std::uint16_t>(p, n, in,
                                     [](double v) { return float_to_half(static_cast<float>(v)); });
    case DataType::kBf16:
      return store_as<std::uint16_t>(p, n, in,
                                     [](double v) { return float_to_bf16(static_cast<float>(v)); });
    case DataType::kF32:
      return store_as<float>(p, n, in, [](double v) { return static_cast<float>(v); });
    case DataType::kF64:
      return store_as<double>(p, n, in, [](double v) { return v; });
    case DataType::kI32:
      return store_as<std::int32_t>(p, n, in, [](double v) {
        return static_cast<std::int32_t>(static_cast<std::uint32_t>(wrap64(v)));
      });
    case DataType::kI64:
      return store_as<std::int64_t>(p, n, in,
                                    [](double v) { return static_cast<std::int64_t>(wrap64(v)); });
    case DataType::kU8:
      return store_as<std::uint8_t>(p, n, in,
                                    [](double v) { return static_cast<std::uint8_t>(wrap64(v)); });
    case DataType::kI8:
      return store_as<std::int8_t>(p, n, in, [](double v) {
        return static_cast<std::int8_t>(static_cast<std::uint8_t>(wrap64(v)));
      });
    case DataType::kU32:
      return store_as<std::uint32_t>(
          p, n, in, [](double v) { return static_cast<std::uint32_t>(wrap64(v)); });
    case DataType::kU64:
      return store_as<std::uint64_t>(p, n, in, [](double v) { return wrap64(v); });
    case DataType::kF8E4M3:
      return store_as<std::uint8_t>(
          p, n, in, [](double v) { return float_to_fp8<Fp8::kE4M3>(static_cast<float>(v)); });
    case DataType::kF8E5M2:
      return store_as<std::uint8_t>(
          p, n, in, [](double v) { return float_to_fp8<Fp8::kE5M2>(static_cast<float>(v)); });
  }
}

}  // namespace collsim
