#include "calibrate/nccl_tests_row.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <limits>

#include "algorithms/ir/nccl_tests_names.hpp"

namespace collsim::detail {

namespace {

// Floating-point slack on top of the printed rounding, so that exact ties do not fail.
constexpr double kSlack = 1e-9;

[[noreturn]] void fail(const std::string& where, std::string_view column, std::string_view what,
                       std::string_view got) {
  throw MeasurementError(fmt::format("{}: {}: expected {}, got \"{}\"", where, column, what, got));
}

std::uint64_t parse_unsigned(std::string_view text, const std::string& where,
                             std::string_view column, std::string_view what) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (!is_digits(text) || ec != std::errc() || end != text.data() + text.size()) {
    fail(where, column, what, text);
  }
  return v;
}

Printed parse_non_negative(std::string_view text, const std::string& where, std::string_view column,
                           std::string_view what) {
  const auto p = parse_printed(text);
  if (!p || p->value < 0) fail(where, column, what, text);
  return *p;
}

}  // namespace

std::optional<Printed> parse_printed(std::string_view text) {
  // Plain decimal notation, optionally with an exponent ("2e-07"); from_chars alone would also
  // take "inf" and "nan".
  std::size_t i = 0;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
  int digits = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) ++digits;
  int decimals = 0;
  if (i < text.size() && text[i] == '.') {
    ++i;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) ++decimals;
  }
  if (digits + decimals == 0) return std::nullopt;  // "", "-", ".", "+."
  int exponent = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    std::string_view e = text.substr(i + 1);
    if (e.starts_with('+')) e.remove_prefix(1);
    const auto v = parse_integer(e);
    if (!v || *v < -300 || *v > 300) return std::nullopt;
    exponent = static_cast<int>(*v);
    i = text.size();
  }
  if (i != text.size()) return std::nullopt;
  Printed p;
  const char* first = text.data() + (text.front() == '+' ? 1 : 0);
  const auto [end, ec] = std::from_chars(first, text.data() + text.size(), p.value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(p.value)) {
    return std::nullopt;
  }
  p.half_unit = 0.5 * std::pow(10.0, exponent - decimals);
  p.text = std::string(text);
  return p;
}

MeasurementRow parse_table_row(const std::vector<std::string_view>& f, const ColumnLayout& layout,
                               const std::string& where, RowNumbers* numbers) {
  MeasurementRow r;
  r.bytes = parse_unsigned(f[0], where, "size", "a byte count (an unsigned integer)");
  r.count = parse_unsigned(f[1], where, "count", "an element count (an unsigned integer)");
  r.dtype = std::string(f[2]);
  r.data_type = data_type_of(r.dtype);
  r.redop = std::string(f[3]);
  r.reduce_op = reduce_op_of(r.redop);
  std::size_t i = 4;
  if (layout.has_root) {
    const auto root = parse_integer(f[i]);
    if (!root || *root < -1 || *root > std::numeric_limits<int>::max()) {
      fail(where, "root", "a rank or -1", f[i]);
    }
    r.root = static_cast<int>(*root);
    ++i;
  }
  numbers->halves.clear();
  const auto group = static_cast<std::size_t>(layout.group_columns());
  for (int h = 0; h < (layout.has_inplace ? 2 : 1); ++h, i += group) {
    const std::string name = h == 0 ? "out-of-place" : "in-place";
    Half half{name, {}, {}, {}};
    const auto t = parse_printed(f[i]);
    if (!t || t->value < 0 || (t->value == 0 && r.bytes > 0)) {
      fail(where, name + " time", "a positive number of microseconds", f[i]);
    }
    half.time = *t;
    half.algbw = parse_non_negative(f[i + 1], where, name + " algbw", "a bandwidth in GB/s");
    half.busbw = parse_non_negative(f[i + 2], where, name + " busbw", "a bandwidth in GB/s");
    std::optional<std::int64_t> wrong;
    std::optional<double> error;
    const std::string_view check = f[i + 3];
    if (check != "N/A") {
      if (layout.old_error) {
        error = parse_non_negative(check, where, name + " error", "a relative error or N/A").value;
      } else {
        wrong = parse_integer(check);
        if (!wrong || *wrong < 0) {
          fail(where, name + " #wrong", "a count of wrong elements or N/A", check);
        }
      }
    }
    // The per-iteration summary (-I 1): minimum, maximum and 99th percentile of the iterations'
    // times, and their coefficient of variation; the row's time is their mean, as without it.
    if (layout.per_iter) {
      constexpr const char* kSummary[] = {"i_min", "i_max", "i_p99", "i_cv%"};
      for (std::size_t k = 0; k < 4; ++k) {
        parse_non_negative(f[i + 4 + k], where, name + " " + kSummary[k],
                           "a per-iteration time in microseconds or a percentage");
      }
    }
    if (h == 0) {
      r.time_us = half.time.value;
      r.algbw_GBps = half.algbw.value;
      r.busbw_GBps = half.busbw.value;
      r.wrong = wrong;
      r.max_error = error;
    } else {
      r.inplace_time_us = half.time.value;
      r.inplace_algbw_GBps = half.algbw.value;
      r.inplace_busbw_GBps = half.busbw.value;
      r.inplace_wrong = wrong;
      r.inplace_max_error = error;
    }
    numbers->halves.push_back(std::move(half));
  }
  return r;
}

Range printed_range(const Printed& p) {
  const double slack = kSlack * std::max(1.0, std::abs(p.value));
  return {p.value - p.half_unit - slack, p.value + p.half_unit + slack};
}

Range algbw_range(std::uint64_t bytes, const Printed& time_us) {
  // bytes / (t us) = bytes / t * 1e6 B/s = bytes / t / 1e3 GB/s.
  const double b = static_cast<double>(bytes);
  const double t_lo = time_us.value - time_us.half_unit;
  const double t_hi = time_us.value + time_us.half_unit;
  const double hi = t_lo > 0 ? b / t_lo / 1e3 : std::numeric_limits<double>::infinity();
  return {b / t_hi / 1e3 * (1 - kSlack), hi * (1 + kSlack)};
}

void check_algbw(std::uint64_t bytes, const RowNumbers& numbers, const std::string& where) {
  for (const Half& h : numbers.halves) {
    const Range computed = algbw_range(bytes, h.time);
    const Range printed = printed_range(h.algbw);
    if (computed.hi >= printed.lo && computed.lo <= printed.hi) continue;
    throw MeasurementError(fmt::format(
        "{}: {} algbw: {} GB/s printed, but size / time = {} B / {} us = {:.2f} GB/s; expected "
        "them to agree to the printed precision (is the time in microseconds?)",
        where, h.name, h.algbw.text, bytes, h.time.text,
        static_cast<double>(bytes) / h.time.value / 1e3));
  }
}

}  // namespace collsim::detail
