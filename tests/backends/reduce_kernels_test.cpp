#include "backends/reduce_kernels.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

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
}

}  // namespace
}  // namespace collsim
