// nccl-tests' JSON report (`-J file.json`, nccl-tests 2.17 on; src/util.cu writes it) read as the
// log it stands for (internal to calibrate/): the lines the same run prints, which the table
// parser then reads like any other log, checks included.
//
//   for (const detail::LogLine& l : detail::nccl_tests_json_lines(text, "run.json"))
//     parser.feed(l.line, l.text);
//
// What the report holds and the lines it becomes:
//   "args"          the command line; its program (all_reduce_perf) names the collective
//   "nccl_version"  the library's version code (22902) -> "# nccl: 2.29.2"
//   "env"           the environment, "K=V" strings; NCCL_* ones -> "# env: K=V ..."
//   "config"        nthreads, ngpus, the size range, iterations, graph -> the "# nThread" line;
//                   its "devices" (one per process, its first rank) -> "#  Rank ..." lines, and
//                   processes x nthreads x ngpus ranks -> a "### GPUS=n" label
//   "results"       one object per size: size, count, type, redop, root, and "out_of_place" /
//                   "in_place" {time, alg_bw, bus_bw, nwrong} -> the table's rows
// The report is one line of text, so a row's line number is its position in "results" (1 for
// the first) and the lines made from the rest of the report are line 1. A "cpu_time" report
// (-C 1) times the host's loop, not the collective: refused, as its table is.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "calibrate/nccl_tests_lines.hpp"

namespace collsim::detail {

// Whether `text` is a JSON document rather than a log: its first non-blank character is '{'.
bool looks_like_json(std::string_view text);

// The log lines of nccl-tests' JSON report `text`; MeasurementError "path: ..." when it is not
// valid JSON or lacks what a report has.
std::vector<LogLine> nccl_tests_json_lines(std::string_view text, const std::string& path);

}  // namespace collsim::detail
