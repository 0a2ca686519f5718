// Range checks for integer options with messages a user can read ("--nodes: Value 0 not in range
// 1 to 2147483647"), where CLI11's PositiveNumber would print the range of a double.
#pragma once

#include <CLI/CLI.hpp>
#include <limits>
#include <string>
#include <string_view>

namespace collsim {

inline CLI::Range positive_int() { return CLI::Range(1, std::numeric_limits<int>::max()); }

// Checks, before any work starts, that `path` can be written: its directory exists and is
// writable, and the file, if it exists, is writable. RequestError "OPTION PATH: why" otherwise,
// so a long computation never ends on an unwritable output. Empty paths pass (stdout).
void check_writable(const std::string& path, std::string_view option);
inline CLI::Range non_negative_int() { return CLI::Range(0, std::numeric_limits<int>::max()); }

}  // namespace collsim
