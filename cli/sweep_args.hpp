// nccl-tests' size-sweep flags, shared by sweep and compare: -b MIN, -e MAX, -f FACTOR
// (sizes MIN, MIN x F, MIN x F^2, ... up to MAX, as all_reduce_perf -b -e -f steps them).
//
//   SweepArgs s;  add_sweep_options(cmd, s);
//   std::vector<std::uint64_t> counts = sweep_counts(s, prepared);   // nccl-tests' count column
//
// Sizes use docs/cli.md's SIZE syntax (8, 64K, 1MiB, 1GB). Errors (RequestError, exit 1): a size
// that does not parse, -b 0 (the sweep would never grow), -b greater than -e, a size that is not a
// whole number of elements.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/collective_args.hpp"

namespace collsim {

struct SweepArgs {
  std::string min_bytes = "8";
  std::string max_bytes = "256M";
  std::uint64_t factor = 2;
};

void add_sweep_options(CLI::App* cmd, SweepArgs& s);

struct SweepPoint {
  std::uint64_t bytes = 0;  // nccl-tests' size column (rounded down to whole per-rank blocks)
  std::uint64_t count = 0;  // nccl-tests' count column
};
std::vector<SweepPoint> sweep_points(const SweepArgs& s, const Prepared& p);

// The -b / -e values in bytes (for the table header).
std::uint64_t sweep_min(const SweepArgs& s);
std::uint64_t sweep_max(const SweepArgs& s);

}  // namespace collsim
