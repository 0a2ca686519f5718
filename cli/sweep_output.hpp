// What sweep, compare and predict print around their rows: the run's settings as JSON, the
// selection keys of an automatic choice, and the frame of an nccl-tests table (rank lines,
// comment lines, the per-row "### ALGO=... PROTO=..." label).
//
//   NcclTestsTable t = table_frame(ev, "sweep", 8, 268435456, 2);
//   t.rows.push_back({make_row(request, choice.candidate, time), {}, choice_label(ev, choice)});
//   write_nccl_tests_table(std::cout, t);
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/collective_args.hpp"
#include "cli/nccl_tests_table.hpp"
#include "cli/progress.hpp"

namespace collsim {

// {"cluster", "nodes", "ranks", "collective", "dtype", "model", "select", "nccl_version"}.
nlohmann::ordered_json run_json(const Predictor& ev);

// For an automatic choice: "selected_by" ("best" or "nccl"), and "nccl_pick" / "note" where
// they apply. Nothing for a fixed --algo/--proto.
void add_choice_keys(nlohmann::ordered_json& row, const Choice& c);

// The table without rows: header values, a rank line per simulated rank (the first few of a large
// communicator), comment lines naming the cluster, the model and what the in-place and #wrong
// columns mean here.
NcclTestsTable table_frame(const Predictor& ev, const std::string& command, std::uint64_t min_bytes,
                           std::uint64_t max_bytes, std::uint64_t factor);

// "ALGO=ring PROTO=ll GPUS=8 CHANNELS=24 MODEL=sim" (+ " SELECT=best", " NCCL=NVLS/Simple").
std::string choice_label(const Predictor& ev, const Choice& c);

// A one-line description of the model in use: "sim (max-min simulation)",
// "nccl (NCCL 2.22.3 tuning model; ring 8x24, tree 8x24 GB/s)".
std::string model_description(const Predictor& ev);

}  // namespace collsim
