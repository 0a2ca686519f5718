// collsim's CSV (`--format csv`, docs/cli.md) as a measurement file: one row per line under the
// header that csv_header() gives (algorithms/ir/result_row.hpp, which the writers use too)
//
//   collective,algorithm,protocol,channels,ranks,bytes,count,dtype,time_us,algbw_GBps,busbw_GBps
//
// Detail of parse_measurements(), which calls this when the first line that is neither blank nor
// a '#' comment is that header. The same checks apply as to nccl-tests tables (algbw = size /
// time, busbw = algbw x factor, size = count x element size), with the rank count from its
// column; "algorithm" and "protocol" become the row's algo_override / proto_override.
//
//   MeasurementFile m = detail::parse_collsim_csv(lines, "bench.csv", {});
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "calibrate/nccl_tests_reader.hpp"

namespace collsim::detail {

// `lines[i]` is line i + 1 of the file.
MeasurementFile parse_collsim_csv(const std::vector<std::string_view>& lines,
                                  const std::string& path, const ReadOptions& options);

}  // namespace collsim::detail
