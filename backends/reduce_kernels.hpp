// Element-wise arithmetic for the CPU backend and the verifier: every DataType x ReduceOp.
//
//   reduce(DataType::kBf16, ReduceOp::kSum, dst, a, b, bytes, 0);    // dst = a + b
//   reduce(DataType::kF32, ReduceOp::kAvg, dst, a, b, bytes, 8);     // dst = (a + b) / 8
//
// f16 and bf16 are computed in float and rounded to nearest even when stored (what GPUs do for
// half-precision reductions). Integer sum and prod wrap modulo 2^bits (two's complement), so
// integer results are exact and independent of reduction order. avg is a sum whose final value
// is divided by the communicator size: the division happens in the op the schedule marks
// `postop` (op.hpp), after its addition, with the dtype's arithmetic (integer division
// truncates toward zero).
#pragma once

#include <cstddef>
#include <cstdint>

#include "algorithms/ir/types.hpp"

namespace collsim {

// dst[i] = a[i] (+) b[i] for `bytes` bytes; dst may alias a or b. With divisor > 0 the result is
// then divided by divisor (only meaningful for avg; ignored for the other ops).
void reduce(DataType t, ReduceOp op, std::byte* dst, const std::byte* a, const std::byte* b,
            std::size_t bytes, int divisor);

// Half-precision conversions, round to nearest even.
std::uint16_t float_to_half(float f);
float half_to_float(std::uint16_t h);
std::uint16_t float_to_bf16(float f);
float bf16_to_float(std::uint16_t h);

// Element i of a typed buffer as a double (reading) and storing a double (rounded as the dtype
// rounds; integers wrap).
double load_element(DataType t, const std::byte* p, std::size_t i);
void store_element(DataType t, std::byte* p, std::size_t i, double v);
// The same for n consecutive elements.
void load_elements(DataType t, const std::byte* p, std::size_t n, double* out);
void store_elements(DataType t, std::byte* p, std::size_t n, const double* in);

}  // namespace collsim
