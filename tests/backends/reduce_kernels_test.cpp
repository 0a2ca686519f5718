#include "backends/reduce_kernels.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "backends/fp8.hpp"

namespace collsim {
namespace {

TEST(ReduceKernels, HalfRoundsToNearestEven) {
  EXPECT_EQ(float_to_half(1.0f), 0x3C00);
  EXPECT_EQ(float_to_half(-2.0f), 0xC000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7BFF);                          // largest finite
  EXPECT_EQ(float_to_half(65520.0f), 0x7C00);                          // halfway to 2^16: to inf
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001);             // smallest subnormal
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3C00);      // tie, to even
  EXPECT_EQ(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);  // tie, to even (up)
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(std::numeric_limits<float>::quiet_NaN()))));
  for (int h = 0; h < 0x7C00; ++h) {  // every finite positive half survives a round trip
    ASSERT_EQ(float_to_half(half_to_float(static_cast<std::uint16_t>(h))), h) << h;
  }
}

TEST(ReduceKernels, Bf16RoundsToNearestEven) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);
  EXPECT_EQ(float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);
  EXPECT_EQ(bf16_to_float(0xC040), -3.0f);
}

// OCP FP8 as NCCL stores it (__nv_cvt_float_to_fp8, __NV_SATFINITE): nearest, ties to even,
// saturated to the largest finite value; NaN stays NaN.
TEST(ReduceKernels, Fp8RoundsToNearestEvenAndSaturates) {
  constexpr auto e4m3 = float_to_fp8<Fp8::kE4M3>;
  constexpr auto e5m2 = float_to_fp8<Fp8::kE5M2>;
  EXPECT_EQ(e4m3(1.0f), 0x38);
  EXPECT_EQ(e4m3(1.75f), 0x3E);
  EXPECT_EQ(e4m3(-2.0f), 0xC0);
  EXPECT_EQ(e4m3(448.0f), 0x7E);   // largest finite
  EXPECT_EQ(e4m3(1000.0f), 0x7E);  // saturated
  EXPECT_EQ(e4m3(-std::numeric_limits<float>::infinity()), 0xFE);
  EXPECT_EQ(e4m3(std::ldexp(1.0f, -9)), 0x01);   // smallest subnormal
  EXPECT_EQ(e4m3(std::ldexp(1.0f, -11)), 0x00);  // a quarter of it: to zero
  EXPECT_EQ(e4m3(1.0625f), 0x38);                // tie, to even (down)
  EXPECT_EQ(e4m3(1.1875f), 0x3A);                // tie, to even (up)
  EXPECT_EQ(e4m3(std::numeric_limits<float>::quiet_NaN()), 0x7F);
  EXPECT_EQ(e5m2(1.0f), 0x3C);
  EXPECT_EQ(e5m2(1.75f), 0x3F);
  EXPECT_EQ(e5m2(57344.0f), 0x7B);  // largest finite
  EXPECT_EQ(e5m2(std::numeric_limits<float>::infinity()), 0x7B);
  EXPECT_EQ(e5m2(std::ldexp(1.0f, -16)), 0x01);  // smallest subnormal
  EXPECT_EQ(e5m2(1.125f), 0x3C);                 // tie, to even (down)
  EXPECT_TRUE(std::isnan(fp8_to_float<Fp8::kE4M3>(0x7F)));
  EXPECT_TRUE(std::isnan(fp8_to_float<Fp8::kE5M2>(0x7D)));
  EXPECT_TRUE(std::isinf(fp8_to_float<Fp8::kE5M2>(0xFC)));
  EXPECT_EQ(fp8_to_float<Fp8::kE4M3>(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(fp8_to_float<Fp8::kE5M2>(0x83), -3 * std::ldexp(1.0f, -16));
  // Every finite code survives a round trip.
  for (int b = 0; b < 256; ++b) {
    const auto code = static_cast<std::uint8_t>(b);
    if ((b & 0x7F) != 0x7F) ASSERT_EQ(e4m3(fp8_to_float<Fp8::kE4M3>(code)), code) << b;
    if ((b & 0x7F) < 0x7C) ASSERT_EQ(e5m2(fp8_to_float<Fp8::kE5M2>(code)), code) << b;
  }
}

template <typename T>
T apply(DataType t, ReduceOp op, T a, T b, int divisor = 0) {
  T r;
  reduce(t, op, reinterpret_cast<std::byte*>(&r), reinterpret_cast<const std::byte*>(&a),
         reinterpret_cast<const std::byte*>(&b), sizeof(T), divisor);
  return r;
}

TEST(ReduceKernels, IntegersWrapAndTruncate) {
  EXPECT_EQ(apply<std::int32_t>(DataType::kI32, ReduceOp::kSum, INT32_MAX, 1), INT32_MIN);
  EXPECT_EQ(apply<std::uint8_t>(DataType::kU8, ReduceOp::kProd, 16, 17), 16);  // 272 mod 256
  EXPECT_EQ(apply<std::int64_t>(DataType::kI64, ReduceOp::kMin, -3, 2), -3);
  EXPECT_EQ(apply<std::int32_t>(DataType::kI32, ReduceOp::kMax, -3, 2), 2);
  EXPECT_EQ(apply<std::int32_t>(DataType::kI32, ReduceOp::kAvg, -3, -4, 2), -3);  // -7/2
  EXPECT_EQ(apply<std::int32_t>(DataType::kI32, ReduceOp::kAvg, -3, -4), -7);     // no postop
  EXPECT_EQ(apply<std::int8_t>(DataType::kI8, ReduceOp::kSum, 127, 1), -128);
  EXPECT_EQ(apply<std::uint32_t>(DataType::kU32, ReduceOp::kSum, UINT32_MAX, 2), 1u);
  EXPECT_EQ(apply<std::uint64_t>(DataType::kU64, ReduceOp::kMin, UINT64_MAX, 5), 5u);
}

TEST(ReduceKernels, FloatsAndHalves) {
  EXPECT_EQ(apply<float>(DataType::kF32, ReduceOp::kAvg, 1.5f, 2.5f, 4), 1.0f);
  EXPECT_EQ(apply<double>(DataType::kF64, ReduceOp::kProd, -0.5, 4.0), -2.0);
  const std::uint16_t a = float_to_half(1.0f), b = float_to_half(std::ldexp(1.0f, -11));
  EXPECT_EQ(apply<std::uint16_t>(DataType::kF16, ReduceOp::kSum, a, b), a);  // rounds back
  EXPECT_EQ(half_to_float(apply<std::uint16_t>(DataType::kF16, ReduceOp::kMin, a, b)),
            std::ldexp(1.0f, -11));
  const std::uint16_t c = float_to_bf16(3.0f), d = float_to_bf16(-5.0f);
  EXPECT_EQ(bf16_to_float(apply<std::uint16_t>(DataType::kBf16, ReduceOp::kMax, c, d)), 3.0f);
  EXPECT_EQ(bf16_to_float(apply<std::uint16_t>(DataType::kBf16, ReduceOp::kAvg, c, d, 2)), -1.0f);
  // 8-bit floats add in float and round on the store: 1 + 1/16 is 1 again in E4M3.
  const std::uint8_t one = float_to_fp8<Fp8::kE4M3>(1.0f);
  const std::uint8_t sixteenth = float_to_fp8<Fp8::kE4M3>(0.0625f);
  EXPECT_EQ(apply<std::uint8_t>(DataType::kF8E4M3, ReduceOp::kSum, one, sixteenth), one);
  const std::uint8_t x = float_to_fp8<Fp8::kE5M2>(3.0f), y = float_to_fp8<Fp8::kE5M2>(-0.5f);
  EXPECT_EQ(fp8_to_float<Fp8::kE5M2>(apply<std::uint8_t>(DataType::kF8E5M2, ReduceOp::kProd, x, y)),
            -1.5f);
}

}  // namespace
}  // namespace collsim
