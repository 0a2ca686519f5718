// The checks that tie a row's columns together once the collective is known: size against count
// x element size (x ranks for AllGather-like collectives), busbw against algbw x the nccl-tests
// factor; and the rank count of rows whose file did not state it, inferred from those same
// identities (detail of the readers).
//
//   std::vector<detail::RowContext> ctx = ...;  // one per row, from the reader
//   detail::resolve_ranks_and_check("x.txt", Collective::kAllReduce, rows, ctx);
//
// Rows are grouped by `segment` (one run, or one "###" labelled section): an inferred rank count
// must fit every row of its segment.
#pragma once

#include <string>
#include <vector>

#include "calibrate/measurement.hpp"
#include "calibrate/nccl_tests_row.hpp"

namespace collsim::detail {

struct RowContext {
  int segment = 0;
  std::string ranks_origin;  // for messages: "from the rank lines at line 7", ...
  RowNumbers numbers;
  // A lower bound on the rank count from a partial rank listing ("#  Rank 127 ..." alone): used
  // to narrow the inference, and taken as the count when nothing pins it.
  int min_ranks = 0;
};

// Fills in rows[i].ranks where it is unknown and can be inferred, then checks every row.
// Throws MeasurementError "path:line: ..." for the first row that does not add up.
void resolve_ranks_and_check(const std::string& path, Collective c,
                             std::vector<MeasurementRow>& rows,
                             const std::vector<RowContext>& context);

}  // namespace collsim::detail
