// The collsim command line as a library: the app with every subcommand registered, and one
// command run in-process with its standard output captured. `main` uses the first; the Python
// module (python/) uses the second, so Python sees exactly the CLI's options, rows and messages.
//
//   const std::string json = collsim::run_command({"predict", "dgx-h100", "--op", "allreduce",
//                                                  "--bytes", "1G", "--format", "json"});
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

namespace collsim {

// The `collsim` app: its description, --version and every subcommand of commands.hpp.
std::unique_ptr<CLI::App> make_app();

// Runs `collsim ARGS...` and returns what the command printed on standard output, whatever the
// format. Throws collsim::Error where the binary exits 1 and CLI::ParseError where it exits 2
// (the same what() as the binary prints after "collsim: "). It points file descriptor 1 at a
// temporary file for the call, so calls from several threads run one after another, and other
// threads' output to it in that time is captured too.
std::string run_command(const std::vector<std::string>& args);

}  // namespace collsim
