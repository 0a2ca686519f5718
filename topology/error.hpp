// collsim's exceptions: user mistakes are thrown as an Error kind, our own bugs are asserts.
//
// Only `main` catches an Error, prints what() on one line and exits 1. Library code never calls
// exit. Messages say where (file:line:col and the key path for configs; ranks and ops for
// schedules) and what was expected:
//
//   throw ConfigError("configs/x.yaml:12:16: links[3].bandwidth: expected a bandwidth such as "
//                     "\"400Gbps\", got \"fast\"");
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace collsim {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A cluster description that cannot be loaded: malformed YAML, unknown keys, impossible values.
class ConfigError : public Error {
 public:
  using Error::Error;
};

// A schedule that is malformed or would deadlock; the message names the ranks and ops.
class ScheduleError : public Error {
 public:
  using Error::Error;
};

// A failure in a real-hardware executor; the message carries the failing call and the
// library's own error string.
class BackendError : public Error {
 public:
  using Error::Error;
};

// A request that does not make sense (unknown collective, size not a multiple of the element
// size, an algorithm that does not implement the collective...).
class RequestError : public Error {
 public:
  using Error::Error;
};

// "did you mean ..." support: the candidate nearest to `word` by edit distance, or "" when none
// is close enough to be a plausible typo.
std::string nearest(std::string_view word, const std::vector<std::string>& candidates);

// "expected one of a, b, c" plus "; did you mean \"b\"?" when a candidate is near.
std::string expected_one_of(std::string_view got, const std::vector<std::string>& candidates);

}  // namespace collsim
