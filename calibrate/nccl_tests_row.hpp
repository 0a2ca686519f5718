// One row of an nccl-tests table, field by field, and the check that each half's algbw is its
// size divided by its time (detail of nccl_tests_reader.cpp and collsim_csv_reader.cpp).
//
//   detail::RowNumbers nums;
//   MeasurementRow r = detail::parse_table_row(words, layout, "x.txt:40", &nums);
//   detail::check_algbw(r.bytes, nums, "x.txt:40");  // throws MeasurementError on mismatch
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "calibrate/measurement.hpp"
#include "calibrate/nccl_tests_lines.hpp"

namespace collsim::detail {

// A number as printed, with half a unit of its last printed digit: the most rounding can have
// moved it ("182.87" -> 0.005, "110912" -> 0.5).
struct Printed {
  double value = 0;
  double half_unit = 0;
  std::string text;
};
std::optional<Printed> parse_printed(std::string_view text);

// The printed time / algbw / busbw of each half of a row, kept for the consistency checks.
struct Half {
  std::string name;  // "out-of-place", "in-place"
  Printed time, algbw, busbw;
};
struct RowNumbers {
  std::vector<Half> halves;
};

// Throws MeasurementError("<where>: <column>: expected ..., got \"...\"") for a malformed field.
// `fields.size()` must equal `layout.columns`.
MeasurementRow parse_table_row(const std::vector<std::string_view>& fields,
                               const ColumnLayout& layout, const std::string& where,
                               RowNumbers* numbers);

// Throws unless algbw = bytes / time (GB/s from B and us) for every half, within what the
// printed digits of time and algbw allow.
void check_algbw(std::uint64_t bytes, const RowNumbers& numbers, const std::string& where);

// The range of values `p` can stand for, and of bytes / time given a printed time in us.
struct Range {
  double lo = 0;
  double hi = 0;
};
Range printed_range(const Printed& p);
Range algbw_range(std::uint64_t bytes, const Printed& time_us);

}  // namespace collsim::detail
