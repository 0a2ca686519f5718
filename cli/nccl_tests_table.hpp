// Writes result rows as an nccl-tests table, column for column and digit for digit as nccl-tests
// 2.17/2.18 print them (tests/data/nccl-tests/*.txt), so that collsim's output can be put beside a
// real run and read by the same tools (calibrate/nccl_tests_reader.hpp reads it back). The one
// writer of sweep's predictions (cli/sweep_output.hpp fills in the frame) and bench's
// measurements (cli/bench_command.cpp).
//
//   NcclTestsTable t;
//   t.collective = Collective::kAllReduce;  t.ranks = 8;  ...
//   t.rows.push_back({.result = make_row(request, candidate, time), .label = "ALGO=ring
//   PROTO=ll"}); write_nccl_tests_table(std::cout, t);
//
// What the two fill in differently, and why: a prediction has no in-place form and checks
// nothing, so its in-place half repeats the out-of-place one and #wrong is N/A, its rank lines
// describe simulated ranks ("Pid" is the rank, "[sim]" the device) and its comment lines name the
// cluster and the model; bench prints the out-of-place half only (collsim's schedules have no
// in-place form either), with the wrong elements it counted. Labels ("### ALGO=... PROTO=...
// GPUS=n") are the annotation the reader applies to the rows below them: one above the column
// header for a whole run (bench), or one above a row whenever it changes (sweep).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "algorithms/ir/result_row.hpp"

namespace collsim {

struct NcclTestsTable {
  Collective collective = Collective::kAllReduce;
  ReduceOp redop = ReduceOp::kSum;  // printed for reductions, "none" for the others
  int root = 0;                     // printed for rooted collectives, -1 for the others

  // The "# nThread 1 nGpus ..." line.
  int gpus = 1;  // nGpus: GPUs its one thread drives (ranks per process)
  bool graph = false;
  std::uint64_t min_bytes = 0, max_bytes = 0;
  std::uint64_t factor = 2;
  int warmup = 0, iters = 1, validation = 0;

  // "# Using devices": a line per listed rank, 0, 1, ...; fewer than `ranks` adds a line saying
  // which are not listed.
  int ranks = 1;
  struct Device {
    std::string pid;
    std::string host;
    int device = 0;           // the GPU index within its host
    std::string description;  // "[sim] H100-SXM", "[0000:1b:00] NVIDIA H100 80GB HBM3"
  };
  std::vector<Device> devices;

  std::vector<std::string> comments;  // "# ..." lines after the rank lines, '#' added
  std::string label;                  // "### <label>" above the column header, when not empty
  bool repeat_in_place = true;        // print an in-place half equal to the out-of-place one

  struct Row {
    ResultRow result;                    // size, count, type, time, algbw, busbw
    std::optional<std::uint64_t> wrong;  // #wrong; N/A where nothing was checked
    std::string label;  // printed as "### <label>" above the row when it differs from the last
  };
  std::vector<Row> rows;
};

void write_nccl_tests_table(std::ostream& out, const NcclTestsTable& t);

// The same table written as its rows are finished: begin() writes everything above the rows
// (t.rows is not read), row() one row (with its ### label when it changes), end() the comment
// lines `trailer` (a note, what an interrupt cut) and the footer, whose average is over the rows
// written. Each call flushes, so a terminal or a pipe sees the row at once.
//
//   NcclTestsTableWriter w(std::cout, frame);  // header, rank lines, comments, column header
//   w.row({make_row(...), std::nullopt, label});
//   w.end({"note: ..."});
class NcclTestsTableWriter {
 public:
  NcclTestsTableWriter(std::ostream& out, NcclTestsTable frame);
  void row(const NcclTestsTable::Row& row);
  void end(const std::vector<std::string>& trailer = {});

 private:
  std::ostream& out_;
  NcclTestsTable t_;  // the frame; t_.rows collects what was written, for the footer
  std::string last_label_;
};

// nccl-tests' time column: 7 characters, two decimals while they fit (22.72, 1181.43), then one
// (17735.5), then none (110912).
std::string nccl_tests_time(double us);

}  // namespace collsim
