// Range checks for integer options with messages a user can read ("--nodes: Value 0 not in range
// 1 to 2147483647"), where CLI11's PositiveNumber would print the range of a double.
#pragma once

#include <CLI/CLI.hpp>
#include <limits>

namespace collsim {

inline CLI::Range positive_int() { return CLI::Range(1, std::numeric_limits<int>::max()); }
inline CLI::Range non_negative_int() { return CLI::Range(0, std::numeric_limits<int>::max()); }

}  // namespace collsim
