// The line-by-line state machine behind parse_measurements() for nccl-tests tables (detail of
// nccl_tests_reader.cpp; the rules are documented in nccl_tests_reader.hpp).
//
//   detail::NcclTestsParser p("x.txt", options);
//   for (const detail::LogLine& l : detail::unwrap_log(lines)) p.feed(l.line, l.text);
//   std::vector<MeasurementFile> parts = p.finish();  // one per collective
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
  // The file's rows, one MeasurementFile per collective in the order of its first table. Throws
  // MeasurementError when the file has no rows, no known collective, or a row that does not add
  // up.
  std::vector<MeasurementFile> finish();

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
  // One run's output, from the line that starts it (see start_table) to the next such line.
  struct Table {
    std::vector<ProgramMention> programs;
    std::optional<Collective> collective;  // set in finish()
    std::string collective_source;
    std::optional<LaunchCommand> launch;  // its first command line, or one inherited (finish())
    std::string command;
    RunParameters run;                                         // its first "# nThread" header
    MeasurementFormat format = MeasurementFormat::kNcclTests;  // of its first row
    std::vector<DeviceLine> devices;
    std::vector<double> averages;  // "# Avg bus bandwidth" values
    std::vector<MeasurementRow> rows;
    std::vector<RowContext> context;  // one per row
    std::vector<RankSnapshot> snapshots;
  };
  Table& table() { return tables_.back(); }
  void start_table();
  void add_program(std::string_view stem, int line);

  void on_label(std::string_view text, int line);
  void on_comment(std::string_view body, int line);
  bool on_own_line(std::string_view body, int line);
  void on_banner(const std::vector<std::string_view>& words, bool starting, int line);
  void on_row(const std::vector<std::string_view>& words, std::string_view text, int line);
  void on_foreign(std::string_view text, const std::vector<std::string_view>& words, int line);
  void on_command(std::string_view text, int line);
  void on_average(std::string_view value, int line);
  void on_column_header(std::string_view body, int line);
  const ColumnLayout& layout_for_row(const std::vector<std::string_view>& words, int line);

  void check_not_empty() const;
  void resolve_collectives();
  const ProgramMention* named_collective(const Table& t) const;
  void resolve_launches(const std::vector<Table*>& tables);
  void resolve_launch_ranks(Table& t);
  void resolve_overrides(Table& t);
  void summarize_file();
  void take_echoed_env();
  void take_echoed_channels();
  void take_stated_run();
  MeasurementFile make_part(Collective c);
  static void summarize_part(MeasurementFile& part, const std::optional<LaunchCommand>& launch);
  static constexpr int kMaxUnrecognisedWarnings = 5;
  std::string at(int line) const { return path_ + ":" + std::to_string(line); }

  std::string path_;
  ReadOptions options_;
  MeasurementFile out_;  // what the whole file says (environment, versions, ...), for every part
  std::vector<Table> tables_;

  std::optional<ColumnLayout> layout_;
  int layout_line_ = 0;  // of the column header, or of the first row when there is none
  bool layout_from_header_ = false;
  int segment_ = 0;
  std::map<std::string, std::string> labels_;
  int label_line_ = 0;
  std::vector<DeviceLine> run_devices_;
  RunParameters run_;
  std::optional<std::string> printed_version_;
  std::optional<std::string> library_version_;  // "nccl-library=22902": what ran
  std::optional<std::string> headers_version_;  // "nccl-headers=22902": what it was built with
  std::optional<std::string> stated_version_;   // "# nccl: 2.22.3+cuda12.6 (...)": what a
                                                // curated file's header says ran
  // NCCL's own "NCCL_ALGO set by environment to Ring" INFO lines: variable -> (value, line).
  std::map<std::string, std::pair<std::string, int>> echoed_env_;
  // NCCL's "N coll channels, ..." INFO lines, with their line numbers.
  std::vector<std::pair<EchoedChannels, int>> echoed_channels_;
  std::size_t average_from_ = 0;  // first row of the table's current "# Avg bus bandwidth" section
  int unrecognised_ = 0;
  std::string first_unrecognised_;
  bool any_text_ = false;
};

}  // namespace collsim::detail
