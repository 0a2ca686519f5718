#include "topology/units.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace collsim {

namespace detail {

void throw_time_range(const char* what) {
  throw TimeRangeError(fmt::format(
      "{} exceeds collsim's time range (2^63 ps, about 106 days): the request asks for a "
      "collective longer than collsim represents; use a smaller size or faster links",
      what));
}

}  // namespace detail

Time transfer_time(Bytes b, Bandwidth bw) {
  // Picoseconds = bytes * 1e12 / (bytes/s). Computed in long double so that 2^40 bytes at
  // 1 Mbps (8.8e18 ps) keeps its integer precision.
  const long double psec = static_cast<long double>(b.count()) * 1e12L /
                           static_cast<long double>(bw.bytes_per_second());
  if (psec >= static_cast<long double>(std::numeric_limits<std::int64_t>::max())) {
    detail::throw_time_range("a transfer time");
  }
  return Time::from_ps(ceil_to_int64(psec));
}

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits "12.5 GB/s" into 12.5 and "GB/s". Returns false when no number leads the text.
bool split_number(std::string_view text, double& value, std::string_view& unit) {
  text = trim(text);
  const char* first = text.data();
  const char* last = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec != std::errc() || !std::isfinite(value)) return false;
  unit = trim(std::string_view(ptr, static_cast<std::size_t>(last - ptr)));
  return true;
}

[[noreturn]] void fail(std::string_view what, std::string_view example, std::string_view text) {
  throw UnitError(fmt::format("expected {} such as \"{}\", got \"{}\"", what, example, text));
}

}  // namespace

Bytes parse_bytes(std::string_view text) {
  double v = 0;
  std::string_view unit;
  if (!split_number(text, v, unit)) fail("a size", "64MiB", text);
  struct Suffix { std::string_view name; double scale; };
  static constexpr Suffix kSuffixes[] = {
      {"", 1},         {"B", 1},
      {"K", 0x1p10},   {"M", 0x1p20},  {"G", 0x1p30},  {"T", 0x1p40},   // nccl-tests' -b/-e
      {"KiB", 0x1p10}, {"MiB", 0x1p20}, {"GiB", 0x1p30}, {"TiB", 0x1p40},
      {"KB", 1e3},     {"MB", 1e6},    {"GB", 1e9},    {"TB", 1e12},
      {"kB", 1e3},
  };
  for (const auto& s : kSuffixes) {
    if (unit != s.name) continue;
    const double bytes = v * s.scale;
    if (bytes < 0) fail("a non-negative size", "64MiB", text);
    if (bytes != std::floor(bytes)) fail("a whole number of bytes", "64MiB", text);
    if (bytes >= 0x1p64) fail("a size below 2^64 bytes", "64MiB", text);
    return Bytes(static_cast<std::uint64_t>(bytes));
  }
  fail("a size", "64MiB", text);
}

Bandwidth parse_bandwidth(std::string_view text) {
  double v = 0;
  std::string_view unit;
  if (!split_number(text, v, unit)) fail("a bandwidth", "400Gbps", text);
  struct Suffix { std::string_view name; double bytes_per_second; };
  static constexpr Suffix kSuffixes[] = {
      {"bps", 1.0 / 8},   {"b/s", 1.0 / 8},
      {"Kbps", 1e3 / 8},  {"Kb/s", 1e3 / 8},  {"Mbps", 1e6 / 8},  {"Mb/s", 1e6 / 8},
      {"Gbps", 1e9 / 8},  {"Gb/s", 1e9 / 8},  {"Tbps", 1e12 / 8}, {"Tb/s", 1e12 / 8},
      {"B/s", 1},         {"Bps", 1},
      {"KB/s", 1e3},      {"KBps", 1e3},      {"MB/s", 1e6},      {"MBps", 1e6},
      {"GB/s", 1e9},      {"GBps", 1e9},      {"TB/s", 1e12},     {"TBps", 1e12},
  };
  for (const auto& s : kSuffixes) {
    if (unit != s.name) continue;
    if (!(v > 0)) fail("a positive bandwidth", "400Gbps", text);
    return Bandwidth::bytes_per_second(v * s.bytes_per_second);
  }
  fail("a bandwidth", "400Gbps", text);
}

Time parse_time(std::string_view text) {
  double v = 0;
  std::string_view unit;
  if (!split_number(text, v, unit)) fail("a time", "0.6us", text);
  struct Suffix { std::string_view name; double ps; };
  static constexpr Suffix kSuffixes[] = {
      {"ps", 1}, {"ns", 1e3}, {"us", 1e6}, {"\xC2\xB5s", 1e6}, {"ms", 1e9}, {"s", 1e12},
  };
  for (const auto& s : kSuffixes) {
    if (unit != s.name) continue;
    if (v < 0) fail("a non-negative time", "0.6us", text);
    if (v * s.ps >= 0x1p62) fail("a time below 53 days", "0.6us", text);
    return ps(v * s.ps);
  }
  fail("a time", "0.6us", text);
}

std::string to_string(Bytes b) {
  const std::uint64_t n = b.count();
  struct Unit { std::uint64_t size; const char* name; };
  static constexpr Unit kUnits[] = {{1ull << 40, "TiB"}, {1ull << 30, "GiB"},
                                    {1ull << 20, "MiB"}, {1ull << 10, "KiB"}};
  for (const auto& u : kUnits) {
    if (n >= u.size && n % u.size == 0) return fmt::format("{} {}", n / u.size, u.name);
  }
  for (const auto& u : kUnits) {
    if (n >= u.size) return fmt::format("{:.3g} {}", static_cast<double>(n) / u.size, u.name);
  }
  return fmt::format("{} B", n);
}

std::string to_string(Bandwidth bw) {
  const double g = bw.gbyte_per_second();
  if (g >= 1.0) return fmt::format("{:g} GB/s", g);
  return fmt::format("{:g} MB/s", g * 1e3);
}

std::string to_string(Time t) {
  const double u = t.us();
  if (u >= 1e6) return fmt::format("{:g} s", u * 1e-6);
  if (u >= 1e3) return fmt::format("{:g} ms", u * 1e-3);
  if (u >= 1.0) return fmt::format("{:g} us", u);
  return fmt::format("{:g} ns", t.ns());
}

}  // namespace collsim
