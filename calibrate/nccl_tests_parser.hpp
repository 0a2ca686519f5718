// The line-by-line state machine behind parse_measurements() for nccl-tests tables (detail of
// nccl_tests_reader.cpp; the rules are documented in nccl_tests_reader.hpp).
//
//   detail::NcclTestsParser p("x.txt", options);
//   for (int i = 0; i < n; ++i) p.feed(i + 1, lines[i]);
//   MeasurementFile m = p.finish();
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "calibrate/launch_command.hpp"
#include "calibrate/measurement_checks.hpp"
#include "calibrate/nccl_tests_lines.hpp"
#include "calibrate/nccl_tests_reader.hpp"

namespace collsim::detail {

class NcclTestsParser {
 public:
  NcclTestsParser(std::string path, ReadOptions options);
  void feed(int line, std::string_view text);
  // Throws MeasurementError when the file has no rows, no known collective, or a row that does
  // not add up.
  MeasurementFile finish();

 private:
  // What is known about a row's rank count when it is read; the rest comes in finish().
  struct RankSnapshot {
    int ranks = 0;
    RanksSource source = RanksSource::kUnknown;
    std::optional<int> threads;
    std::optional<int> gpus;
  };
  // A line naming what was measured: "all_reduce_perf" (a banner or command), or a collsim
  // spelling such as "allreduce" in a banner.
  struct ProgramMention {
    std::string name;
    std::optional<Collective> collective;  // nullopt for hypercube_perf and unknown programs
    int line = 0;
  };
  void add_program(std::string_view stem, int line);

  void on_label(std::string_view text, int line);
  void on_comment(std::string_view body, int line);
  void on_row(const std::vector<std::string_view>& words, std::string_view text, int line);
  void on_foreign(std::string_view text, const std::vector<std::string_view>& words, int line);
  void on_command(std::string_view text, int line);
  void on_average(std::string_view value, int line);
  void on_column_header(std::string_view body, int line);
  const ColumnLayout& layout_for_row(int columns, int line);

  void resolve_collective();
  void resolve_launch_ranks();
  void resolve_overrides();
  void summarize();
  static constexpr int kMaxUnrecognisedWarnings = 5;
  std::string at(int line) const { return path_ + ":" + std::to_string(line); }

  std::string path_;
  ReadOptions options_;
  MeasurementFile out_;

  std::optional<ColumnLayout> layout_;
  int layout_line_ = 0;  // of the column header, or of the first row when there is none
  bool layout_from_header_ = false;
  int segment_ = 0;
  std::map<std::string, std::string> labels_;
  int label_line_ = 0;
  std::vector<DeviceLine> run_devices_;
  RunParameters run_;
  std::vector<ProgramMention> programs_;
  std::optional<LaunchCommand> launch_;
  std::optional<std::string> printed_version_;
  std::optional<std::string> library_version_;  // "nccl-library=22902": what ran
  std::optional<std::string> headers_version_;  // "nccl-headers=22902": what it was built with
  std::vector<RowContext> context_;
  std::vector<RankSnapshot> snapshots_;
  std::size_t average_from_ = 0;  // first row of the current "# Avg bus bandwidth" section
  int unrecognised_ = 0;
  std::string first_unrecognised_;
  bool any_text_ = false;
};

}  // namespace collsim::detail
