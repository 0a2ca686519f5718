// One result row: a collective as run (or predicted) and its time, in docs/cli.md's column contract.
// predict, sweep, compare, scale, validate and bench print it as CSV (here) and JSON
// (cli/output_rows.hpp), nccl-tests tables print its numbers (cli/nccl_tests_table.hpp), and
// collsim's CSV reader (calibrate/collsim_csv_reader.hpp) reads the CSV back:
//
//   collective,algorithm,protocol,channels,ranks,bytes,count,dtype,time_us,algbw_GBps,busbw_GBps
//
// The columns are named once, below: the CSV header, the JSON keys and the reader's column
// positions all come from ResultColumn and column_name(), so writers and reader cannot drift.
// algbw = bytes / time, busbw = algbw x the nccl-tests factor (GB = 1e9 B).
//
//   ResultRow r = make_row(request, candidate, time);   // rounded for stable output
//   std::cout << csv_header() << "\n" << csv_line(r) << "\n";
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "algorithms/ir/request.hpp"
#include "algorithms/models/selection.hpp"
#include "topology/units.hpp"

namespace collsim {

// The columns in CSV (and JSON) order.
enum class ResultColumn {
  kCollective,
  kAlgorithm,
  kProtocol,
  kChannels,
  kRanks,
  kBytes,
  kCount,
  kDtype,
  kTimeUs,
  kAlgbwGBps,
  kBusbwGBps,
};
inline constexpr int kResultColumnCount = 11;

// The CSV header word and JSON key: "collective", ..., "busbw_GBps".
std::string_view column_name(ResultColumn c);

struct ResultRow {
  Collective collective = Collective::kAllReduce;
  std::string algorithm;
  std::string protocol;  // a Protocol's name, or "auto" where NCCL chose (bench nccl-native)
  int channels = 0;
  int ranks = 0;
  std::uint64_t bytes = 0;
  std::uint64_t count = 0;
  DataType dtype = DataType::kF32;
  double time_us = 0;
  double algbw_GBps = 0;
  double busbw_GBps = 0;
};

// The exact row: `r` is the request as run (its count, channels, communicator), the candidate
// names the algorithm and protocol.
ResultRow result_row(const Request& r, const Candidate& c, Time t);
// Rounded for stable output: time_us to the picosecond (6 decimals, exact), bandwidths to 4
// decimals.
ResultRow rounded(ResultRow row);
// rounded(result_row(...)): what predictions print.
ResultRow make_row(const Request& r, const Candidate& c, Time t);

// A column's value: names as text, counts as integers, time and bandwidths as doubles.
using ColumnValue = std::variant<std::string_view, std::int64_t, std::uint64_t, double>;
// Every column's value, indexed by ResultColumn; the text ones view into `r`.
std::array<ColumnValue, kResultColumnCount> column_values(const ResultRow& r);

// How csv_line prints time and bandwidths. kShortest: the shortest text that reads back as the
// value, for rounded rows (predictions). kFixed: time_us to 3 decimals (ns), bandwidths to 4, for
// exact rows of measurements (bench), whose further digits are noise.
enum class CsvNumbers { kShortest, kFixed };

std::string csv_header();
std::string csv_line(const ResultRow& r, CsvNumbers numbers = CsvNumbers::kShortest);

}  // namespace collsim
