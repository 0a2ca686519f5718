// Runs the built `collsim` binary for end-to-end CLI tests.
#pragma once

#include <string>
#include <vector>

namespace collsim::test {

struct CommandResult {
  int status = -1;  // exit status; 128 + signal if killed
  std::string out;
  std::string err;
};

// `args` is appended to the binary's path and run through /bin/sh (quote accordingly).
CommandResult run_collsim(const std::string& args);

// The contents of a golden file under tests/data/golden; with COLLSIM_UPDATE_GOLDEN=1 in the
// environment, writes `actual` there first (the explicit switch, never silent).
std::string golden(const std::string& name, const std::string& actual);

// The predicted times (the rows' "time_us") of `collsim validate --format json` output.
std::vector<double> predicted_us(const std::string& validate_json);

}  // namespace collsim::test
