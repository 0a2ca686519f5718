// The readable text form of a schedule (`collsim plan`), stable enough for golden tests.
//
// A header (what is computed and how it is cut), then for each rank its buffer sizes, its
// cross-channel dependencies, and for each channel one line per op:
//
//   schedule: allreduce by ring, protocol simple, f32 sum
//   ranks 4, channels 1 (requested 1), count 16 (64 B), root 0
//   chunk 2097152 B in 2 slices; fifo 8 slots x 524288 B, payload 524288 B
//   rank 0: input 64 B, output 64 B, scratch 0 B
//     channel 0: 14 ops
//            0  send                   to 1          src input+0                 8 B
//            1  recv-reduce-send       from 3 to 1   src input+48                8 B
//
// The stream is written as it is produced, so a schedule of any size can be printed; limit
// `max_ops_per_channel` to keep big ones short (the rest is summarized as "... N more ops").
#pragma once

#include <cstdint>
#include <iosfwd>
#include <limits>
#include <string>

#include "algorithms/ir/schedule.hpp"

namespace collsim {

inline constexpr std::uint64_t kAllOps = std::numeric_limits<std::uint64_t>::max();

void write_schedule(std::ostream& out, const Schedule& s,
                    std::uint64_t max_ops_per_channel = kAllOps);
std::string format_schedule(const Schedule& s, std::uint64_t max_ops_per_channel = kAllOps);

// One op line, without the leading index: "recv-reduce-send       from 3 to 1   src input+48 ...".
std::string format_op(const Op& op);

}  // namespace collsim
