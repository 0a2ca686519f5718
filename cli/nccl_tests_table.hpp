// Writes predicted rows as an nccl-tests table, column for column and digit for digit as
// nccl-tests 2.17/2.18 print them (tests/data/nccl-tests/*.txt), so that a prediction can be put
// beside a real run and read by the same tools (calibrate/nccl_tests_reader.hpp reads it back).
//
//   NcclTestsTable t;
//   t.collective = Collective::kAllReduce;  t.ranks = 8;  ...
//   t.rows.push_back({.bytes = 8, .count = 2, .time_us = 15.3, .label = "ALGO=ring PROTO=ll"});
//   write_nccl_tests_table(std::cout, t);
//
// What differs from a measurement, and how it is said: the header's comment lines name the
// cluster and the model; the in-place half repeats the out-of-place prediction (a prediction has
// no in-place form); #wrong is N/A, as nccl-tests prints it when not checking; the rank lines
// describe simulated ranks ("Pid" is the rank, "[sim]" the device). A row's algorithm and
// protocol go in a "### ALGO=... PROTO=... GPUS=n" label line above it whenever they change,
// the annotation the reader applies to the rows below it.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "algorithms/types.hpp"

namespace collsim {

struct NcclTestsTable {
  Collective collective = Collective::kAllReduce;
  DataType dtype = DataType::kF32;
  ReduceOp redop = ReduceOp::kSum;
  int root = 0;
  int ranks = 1;
  std::uint64_t min_bytes = 0, max_bytes = 0;
  std::uint64_t factor = 2;
  std::vector<std::string> rank_hosts;  // per rank: "node0"
  std::vector<int> rank_devices;        // per rank: the GPU index within its node
  std::string device_name;              // "H100-SXM"
  std::vector<std::string> comments;    // "# ..." lines after the rank lines, '#' added
  struct Row {
    std::uint64_t bytes = 0;
    std::uint64_t count = 0;
    double time_us = 0;
    double algbw_GBps = 0;
    double busbw_GBps = 0;
    std::string label;  // printed as "### <label>" above the row when it differs from the last
  };
  std::vector<Row> rows;
};

void write_nccl_tests_table(std::ostream& out, const NcclTestsTable& t);

// nccl-tests' time column: 7 characters, two decimals while they fit (22.72, 1181.43), then one
// (17735.5), then none (110912).
std::string nccl_tests_time(double us);

}  // namespace collsim
