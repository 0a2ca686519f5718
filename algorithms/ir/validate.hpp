// Checks that a schedule is well formed and runs to completion; plan() calls it on every build.
//
// Small schedules (at most `exhaustive_op_limit` ops in all) are checked exhaustively:
//  - peers exist and differ from the rank itself; postop only on reducing ops;
//  - every op's regions lie inside the rank's buffers;
//  - on every connection the k-th send matches the k-th recv, counts and sizes equal;
//  - dependencies name existing ops;
//  - two writes to overlapping bytes from different channels are ordered by dependencies;
//  - the schedule completes under the execution semantics of schedule.hpp, bounded FIFOs
//    included (an abstract run that moves piece counts, no data). A schedule that would hang
//    names the cycle of waiting ops.
// Larger schedules are checked by sampling: a deterministic set of streams is walked in full
// (bounds, peers) and each is matched against the streams of the peers it talks to; deadlock
// freedom is established by the same generators' exhaustive checks at smaller scale.
//
// Every violation throws ScheduleError; the messages (pinned in validate_test.cpp) look like
//   schedule deadlocks: rank 1 channel 0 op 3 (recv from rank 0, 4096 B) waits for a send that
//   rank 0 channel 0 never posts
//
//   ValidationReport rep = validate(schedule);   // throws on the first violation
#pragma once

#include <cstdint>

#include "algorithms/ir/schedule.hpp"

namespace collsim {

struct ValidateOptions {
  std::uint64_t exhaustive_op_limit = 2'000'000;
  int sample_streams = 8;  // streams walked in sampled mode (plus first and last)
  std::uint64_t sample_ops_per_stream = 1'000'000;  // longer streams are checked at random ops
  std::uint64_t seed = 1;
};

struct ValidationReport {
  bool exhaustive = true;
  std::uint64_t ops_checked = 0;
};

ValidationReport validate(const Schedule& s, const ValidateOptions& options = {});

}  // namespace collsim
