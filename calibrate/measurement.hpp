// What a measurement file holds once read: the rows of an nccl-tests table (or of collsim's CSV)
// and what the file says about the run that produced them.
//
// Readers (calibrate/nccl_tests_reader.hpp) fill these structs; fitting and validation consume
// them. Every row carries the line it came from, so later stages can point at the input:
//
//   MeasurementFile m = read_measurements("logs/ar.txt");
//   for (const MeasurementRow& r : m.rows)
//     fmt::print("{}:{}: {} B in {} us, busbw {} GB/s over {} ranks\n", m.path, r.line, r.bytes,
//                r.time_us, r.busbw_GBps, r.ranks);
//
// Units are those nccl-tests prints: bytes, microseconds, GB/s with GB = 1e9 B. Numbers are kept
// as printed (doubles), not converted to Time/Bandwidth, because a fit wants the raw values and
// their printed precision is part of what the reader checks.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "algorithms/ir/types.hpp"
#include "topology/error.hpp"

namespace collsim {

// A measurement file that cannot be read: its message is "path:line: what was wrong, what was
// expected" ("path: ..." for problems of the whole file, such as an empty one).
class MeasurementError : public Error {
 public:
  using Error::Error;
};

enum class MeasurementFormat {
  kNcclTests,     // current nccl-tests table: root column, "#wrong" columns
  kNcclTestsOld,  // older table: no root column, "error" columns (max relative error)
  kCollsimCsv,    // collsim's CSV (docs/cli.md `--format csv` header)
};
std::string_view to_string(MeasurementFormat f);

// Where a row's rank count came from, most direct first.
enum class RanksSource {
  kUnknown,     // nothing said it; only possible where busbw does not depend on it
  kLabel,       // a "### GPUS=n" label above the rows
  kRankLines,   // the "#  Rank ..." lines: all of 0..n-1 listed, or (a partial listing that
                //  nothing else pins) the highest listed rank + 1
  kLaunch,      // processes (mpirun -np / srun -n; 1 without a launcher) x nThread x nGpus
  kSizeCount,   // size = count x element size x ranks, for AllGather-like collectives
  kBusbwRatio,  // the one n with busbw = algbw x the nccl-tests factor for every row
  kCsvColumn,   // the "ranks" column of collsim's CSV
};
std::string_view to_string(RanksSource s);

// An NCCL_ALGO value (none: NCCL's own choice) with NVLS and NVLSTree taken out, as
// NCCL_NVLS_ENABLE=0 or an NVLS setup that failed leaves it: "^NVLS,NVLSTree" for none,
// "Ring,NVLS" -> "Ring", "^Tree" -> "^Tree,NVLS,NVLSTree".
std::string nccl_algo_without_nvls(const std::optional<std::string>& algo);

struct MeasurementRow {
  std::uint64_t bytes = 0;            // "size" column, algbw's numerator (docs/nccl-model.md §3)
  std::uint64_t count = 0;            // elements, per rank-block for AllGather-like collectives
  std::string dtype;                  // as printed: "float", "bfloat16", "int8", ...
  std::optional<DataType> data_type;  // when collsim has that type (not for int8, fp8, ...)
  std::string redop;                  // as printed: "sum", "none", "mulsum", ...
  std::optional<ReduceOp> reduce_op;  // when collsim has that operation
  int root = -1;                      // -1 where the collective has none or the table no column

  // Out-of-place results.
  double time_us = 0;
  double algbw_GBps = 0;
  double busbw_GBps = 0;
  std::optional<std::int64_t> wrong;  // "#wrong"; nullopt for "N/A" and the old format
  std::optional<double> max_error;    // the old format's "error"; nullopt for "N/A"

  // In-place results; nullopt where the input has none (collsim's CSV).
  std::optional<double> inplace_time_us;
  std::optional<double> inplace_algbw_GBps;
  std::optional<double> inplace_busbw_GBps;
  std::optional<std::int64_t> inplace_wrong;
  std::optional<double> inplace_max_error;

  int ranks = 0;  // 0 when unknown (see RanksSource::kUnknown)
  RanksSource ranks_source = RanksSource::kUnknown;

  // The algorithm / protocol the row was forced to (a "### ALGO=Ring" label, else NCCL_ALGO in
  // the file's environment) or, for collsim's CSV, ran with. Spelled as found ("Ring", "NVLS").
  std::optional<std::string> algo_override;
  std::optional<std::string> proto_override;
  std::optional<int> channels;                // collsim's CSV only
  std::map<std::string, std::string> labels;  // every KEY=VALUE of the "###" label in effect

  int line = 0;  // 1-based line in the file
};

// One "# Using devices" line: "#  Rank  0 Group  0 Pid 4180122 on cnode3-002 device  0
// [0000:1b:00] NVIDIA H100 80GB HBM3" (the old format has no Group).
struct DeviceLine {
  int rank = 0;
  std::string host;
  int device = 0;
  std::string bus_id;  // between the brackets
  std::string gpu_name;
  int line = 0;
};

// The "# nThread 1 nGpus 1 minBytes 8 maxBytes ... step: 2(factor) warmup iters: 5 iters: 20 ..."
// line, with maxBytes lowered by a later "# Reducing maxBytes to N ..." warning.
struct RunParameters {
  std::optional<int> threads;          // nThread
  std::optional<int> gpus_per_thread;  // nGpus
  std::optional<std::uint64_t> min_bytes;
  std::optional<std::uint64_t> max_bytes;
  std::optional<double> step_factor;        // "step: 2(factor)"
  std::optional<std::uint64_t> step_bytes;  // "step: 10485760(bytes)"
  std::optional<int> warmup_iters;
  std::optional<int> iters;
  std::optional<int> agg_iters;
  std::optional<int> validation;
  std::optional<int> graph;
  int line = 0;  // 0 when the file has no such line
};

struct MeasurementFile {
  std::string path;
  MeasurementFormat format = MeasurementFormat::kNcclTests;
  Collective collective = Collective::kAllReduce;
  std::string collective_source;  // "line 9: # Collective test starting: all_reduce_perf"

  int ranks = 0;  // the rows' rank count when they all agree, else 0 (see the rows)
  int nodes = 0;  // distinct hosts of a complete rank listing, else from the launcher; 0 unknown
  std::vector<std::string> gpu_names;  // distinct, in order of first appearance
  std::vector<DeviceLine> devices;
  // "2.29.2": NCCL's banner, else nccl-tests' nccl-library= and nccl-headers=, else a curated
  // "# nccl: 2.22.3+cuda12.6 ..." line; "" when the file says none of them.
  std::string nccl_version;
  std::string nccl_tests_version;  // "2.17.8"; ""
  RunParameters run;
  std::map<std::string, std::string> env;  // "# env:" assignments and launcher "-x K=V"
  // An NCCL_DEBUG=INFO log's "N coll channels, ..., M nvls channels" line: the communicator's
  // channels (comm->nChannels, after NCCL_MIN/MAX_NCHANNELS and the CTA bounds) and NVLS
  // channels, where every such line of the file agrees; nullopt otherwise.
  std::optional<int> coll_channels;
  std::optional<int> nvls_channels;
  std::string command;  // the first command line naming the *_perf program, as written

  // Free-text lines a curator put above the output ("# source:", "# hardware:", "# nccl:",
  // "# note:", ...), keyed by the word before the colon, in file order.
  std::vector<std::pair<std::string, std::string>> metadata;

  std::vector<MeasurementRow> rows;
  std::vector<double> avg_busbw_GBps;  // each "# Avg bus bandwidth" value printed
  // Not errors, but worth telling: "path:line: ..." (nccl-tests' own warnings, rows that failed
  // validation, a printed average that does not match the rows, unrecognised lines skipped).
  std::vector<std::string> warnings;
  int skipped_lines = 0;  // foreign lines (other ranks' log output, launcher chatter) skipped
};

}  // namespace collsim
