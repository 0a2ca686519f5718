// The collsim subcommands. Each registers itself on the CLI11 app and runs when selected; a
// command's run function throws collsim::Error for user mistakes and never calls exit.
//
//   CLI::App app{"collsim"};
//   register_topo(app);                 // adds `collsim topo CONFIG [--dot FILE]`
//   app.parse(argc, argv);              // then main runs the chosen command's callback
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace collsim {

void register_topo(CLI::App& app);
void register_list(CLI::App& app);
void register_plan(CLI::App& app);
void register_predict(CLI::App& app);
void register_trace(CLI::App& app);
void register_sweep(CLI::App& app);
void register_compare(CLI::App& app);
void register_scale(CLI::App& app);
void register_bench(CLI::App& app);
void register_calibrate(CLI::App& app);
void register_validate(CLI::App& app);
void register_import(CLI::App& app);
void register_diagnose(CLI::App& app);

// `collsim scale --nodes`: "1,2,4,64" or a range "a:b[:factor]" (a, a*f, ... up to and
// including b). RequestError for anything else, a count outside 1..2^20, a list that does not
// increase.
std::vector<int> parse_node_counts(const std::string& text);

}  // namespace collsim
