// Internals shared by validate.cpp, deadlock.cpp and schedule_walk.cpp. Not part of the public API.
#pragma once

#include <cstdint>
#include <string>

#include "algorithms/ir/schedule.hpp"

namespace collsim::detail {

// "rank 1 channel 0 op 3 (recv from rank 0, 4096 B)".
std::string op_label(int rank, int channel, std::uint64_t index, const Op& op);

// Runs the schedule abstractly (piece counts through bounded FIFOs, dependencies) and throws
// ScheduleError naming the cycle of waits if it cannot finish. Assumes sends and recvs match.
void check_deadlock(const Schedule& s);

}  // namespace collsim::detail
