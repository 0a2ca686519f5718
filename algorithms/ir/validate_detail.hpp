// Internals shared by validate.cpp and deadlock.cpp. Not part of the public API.
#pragma once

#include <cstdint>
#include <string>

#include "algorithms/ir/schedule.hpp"

namespace collsim::detail {

// A connection (channel, sender, receiver) packed into one key.
inline std::uint64_t connection_key(int channel, int from, int to) {
  return (static_cast<std::uint64_t>(channel) << 48) |
         (static_cast<std::uint64_t>(static_cast<std::uint32_t>(from)) << 24) |
         static_cast<std::uint64_t>(static_cast<std::uint32_t>(to));
}

// "rank 1 channel 0 op 3 (recv from rank 0, 4096 B)".
std::string op_label(int rank, int channel, std::uint64_t index, const Op& op);

// Pieces an op's transfer is cut into (schedule.hpp rule 3).
inline std::uint64_t piece_count(std::uint64_t bytes, std::uint64_t payload) {
  return bytes == 0 ? 1 : (bytes + payload - 1) / payload;
}

// Runs the schedule abstractly (piece counts through bounded FIFOs, dependencies) and throws
// ScheduleError naming the cycle of waits if it cannot finish. Assumes sends and recvs match.
void check_deadlock(const Schedule& s);

}  // namespace collsim::detail
