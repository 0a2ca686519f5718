// Checks a backend's output against a direct computation of the collective.
//
// Inputs are filled deterministically from (seed, rank, element index). The expected outputs are
// computed straight from the collective's definition (generator.hpp's layout table), never from
// the schedule. Values are chosen so that results are exact where they should be:
//  - sum, avg, min, max: multiples of 1/4 in [-2, 2] (floats) or integers in [-8, 8] (u8: 0..16);
//  - prod: +-1, with a factor 2 or 1/2 (2 for integers) on 1 element in 4 for ranks below 8,
//    so products stay far inside every type's range and are exact powers of two.
// Integers must match exactly (their arithmetic wraps and is order-independent anyway), min,
// max and prod exactly. Float sum and avg may differ by the reduction order: for p addends
// rounded to a type of unit roundoff u, any order satisfies |computed - exact| <= (p-1)·u·Σ|x_k|
// (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., §4.2); avg's division adds
// one more rounding, u·|result|. The verifier allows p·u·Σ|x_k| (/p for avg) + u·|exact|.
//
//   VerifyResult v = verify(cpu, plan(request));
//   if (!v.ok) std::cerr << v.message;       // "rank 3 output[17]: got 1.5, expected 2 (...)"
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/backend.hpp"

namespace collsim {

struct VerifyResult {
  bool ok = true;
  std::string message;  // the first mismatches, when !ok
  RunResult run;
};

// Deterministic inputs for `s` (sized from the schedule).
HostBuffers make_inputs(const Schedule& s, std::uint64_t seed);
// One rank's input as make_inputs() makes it (resized to the schedule's input size).
void fill_input(const Schedule& s, std::uint64_t seed, int rank, std::vector<std::byte>& input);

// The elements of one rank's output that differ from what the collective must produce from
// make_inputs(s, seed), with the tolerances above: nccl-tests' "#wrong". Needs no other rank's
// buffers (their inputs are regenerated from the seed a block at a time), so each process of a
// multi-process run checks its own ranks; memory O(block), time O(ranks x output) for reductions.
struct WrongCount {
  std::uint64_t wrong = 0;
  std::uint64_t first = 0;  // the first mismatch's element index, when wrong > 0
  std::string detail;       // the first mismatches, when wrong > 0
};
WrongCount count_wrong(const Schedule& s, std::uint64_t seed, int rank,
                       const std::vector<std::byte>& output);
// What every rank's output must hold.
std::vector<std::vector<double>> expected_outputs(const Schedule& s, const HostBuffers& inputs);
// Compares `outputs` against `expected` with the tolerances above; "" when they agree.
std::string compare_outputs(const Schedule& s, const HostBuffers& inputs,
                            const HostBuffers& outputs);

VerifyResult verify(Backend& backend, const Schedule& s, std::uint64_t seed = 1,
                    const RunOptions& options = {});

}  // namespace collsim
