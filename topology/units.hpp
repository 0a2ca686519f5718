// Strong unit types: Time, Bytes, Bandwidth, and their parsers.
//
// Every quantity collsim handles carries its unit in its type, so a latency can never be added to
// a size by accident (after abseil's absl::Duration). Time is integer picoseconds, which keeps
// simulations exact and bit-for-bit reproducible; Bytes is an unsigned 64-bit count; Bandwidth is
// bytes per second.
//
//   Time t = us(2.5) + ns(300);                  // 2.8 us
//   Bytes b = MiB(64);
//   Bandwidth nic = Gbps(400);                   // 50e9 B/s
//   Time wire = transfer_time(b, nic);           // 1.342177 ms
//   Bandwidth parsed = parse_bandwidth("450GB/s");   // throws UnitError on "fast"
//
// Decimal prefixes are powers of 1000 (GB = 1e9 B, as nccl-tests prints bandwidth); binary
// prefixes (KiB, MiB, GiB) and nccl-tests' bare K/M/G size suffixes are powers of 1024.
#pragma once

#include <cmath>
#include <compare>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "topology/error.hpp"

namespace collsim {

// Thrown by the parsers below; callers that know the file and key path wrap it in a ConfigError.
class UnitError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// A time outside Time's range, +-2^63 ps (about 106 days), from a conversion or an addition:
// thrown rather than wrapped, since a wrapped time is a wrong answer. It means the inputs ask for
// a collective longer than collsim represents (1 TiB over a 1 Mbps link, say).
class TimeRangeError : public Error {
 public:
  using Error::Error;
};

namespace detail {
[[noreturn]] void throw_time_range(const char* what);
}  // namespace detail

class Time {
 public:
  constexpr Time() = default;
  static constexpr Time from_ps(std::int64_t ps) { return Time(ps); }
  static constexpr Time max() { return Time(INT64_MAX); }

  constexpr std::int64_t ps() const { return ps_; }
  constexpr double ns() const { return static_cast<double>(ps_) * 1e-3; }
  constexpr double us() const { return static_cast<double>(ps_) * 1e-6; }
  constexpr double seconds() const { return static_cast<double>(ps_) * 1e-12; }

  constexpr Time operator+(Time o) const {
    std::int64_t r = 0;
    if (__builtin_add_overflow(ps_, o.ps_, &r)) detail::throw_time_range("a sum of times");
    return Time(r);
  }
  constexpr Time operator-(Time o) const {
    std::int64_t r = 0;
    if (__builtin_sub_overflow(ps_, o.ps_, &r)) detail::throw_time_range("a difference of times");
    return Time(r);
  }
  constexpr Time& operator+=(Time o) { return *this = *this + o; }
  constexpr Time& operator-=(Time o) { return *this = *this - o; }
  constexpr Time operator*(std::int64_t k) const {
    std::int64_t r = 0;
    if (__builtin_mul_overflow(ps_, k, &r)) detail::throw_time_range("a multiple of a time");
    return Time(r);
  }
  constexpr auto operator<=>(const Time&) const = default;

 private:
  constexpr explicit Time(std::int64_t ps) : ps_(ps) {}
  std::int64_t ps_ = 0;
};

// Rounds to the nearest picosecond; TimeRangeError beyond +-2^63 ps or for NaN.
constexpr Time ps(double v) {
  if (!(v > -9.2e18 && v < 9.2e18)) detail::throw_time_range("a time in picoseconds");
  return Time::from_ps(static_cast<std::int64_t>(v + (v < 0 ? -0.5 : 0.5)));
}
constexpr Time ns(double v) { return ps(v * 1e3); }
constexpr Time us(double v) { return ps(v * 1e6); }
constexpr Time ms(double v) { return ps(v * 1e9); }
constexpr Time sec(double v) { return ps(v * 1e12); }

// The most latency a config or a fault may give one link: EFA, the slowest network adapter a
// preset describes, takes 10 us a link (docs/config.md, Transports), and 1 ms is 200 km of
// fibre. A larger figure is a typo for a smaller unit, not a cluster.
inline constexpr Time kMaxLinkLatency = ms(1.0);

class Bytes {
 public:
  constexpr Bytes() = default;
  constexpr explicit Bytes(std::uint64_t n) : n_(n) {}
  constexpr std::uint64_t count() const { return n_; }

  constexpr Bytes operator+(Bytes o) const { return Bytes(n_ + o.n_); }
  constexpr Bytes operator-(Bytes o) const { return Bytes(n_ - o.n_); }
  constexpr Bytes& operator+=(Bytes o) { n_ += o.n_; return *this; }
  constexpr Bytes operator*(std::uint64_t k) const { return Bytes(n_ * k); }
  constexpr Bytes operator/(std::uint64_t k) const { return Bytes(n_ / k); }
  constexpr auto operator<=>(const Bytes&) const = default;

 private:
  std::uint64_t n_ = 0;
};

constexpr Bytes B(std::uint64_t n) { return Bytes(n); }
constexpr Bytes KiB(std::uint64_t n) { return Bytes(n << 10); }
constexpr Bytes MiB(std::uint64_t n) { return Bytes(n << 20); }
constexpr Bytes GiB(std::uint64_t n) { return Bytes(n << 30); }

class Bandwidth {
 public:
  constexpr Bandwidth() = default;
  static constexpr Bandwidth bytes_per_second(double v) { return Bandwidth(v); }

  constexpr double bytes_per_second() const { return bps_; }
  constexpr double gbyte_per_second() const { return bps_ * 1e-9; }  // GB/s, GB = 1e9 B
  constexpr double gbit_per_second() const { return bps_ * 8e-9; }

  constexpr Bandwidth operator+(Bandwidth o) const { return Bandwidth(bps_ + o.bps_); }
  constexpr Bandwidth operator*(double k) const { return Bandwidth(bps_ * k); }
  constexpr Bandwidth operator/(double k) const { return Bandwidth(bps_ / k); }
  constexpr auto operator<=>(const Bandwidth&) const = default;

 private:
  constexpr explicit Bandwidth(double v) : bps_(v) {}
  double bps_ = 0;
};

constexpr Bandwidth GBps(double v) { return Bandwidth::bytes_per_second(v * 1e9); }
constexpr Bandwidth Gbps(double v) { return Bandwidth::bytes_per_second(v * 1e9 / 8); }

// ceil(ps) as an integer, for 0 <= ps < 2^63 - 1: exactly static_cast<std::int64_t>(std::ceil(ps)),
// without that expression's two switches of the x87 rounding mode, each a pipeline stall (the
// max-min engine re-times a flow class with it on every rate change). std::llrint rounds to
// nearest, and every integer below 2^64 is a long double, so the rounded value compares exactly.
inline std::int64_t ceil_to_int64(long double ps) {
  const long long nearest = std::llrint(ps);
  return static_cast<long double>(nearest) < ps ? nearest + 1 : nearest;
}

// Time to stream `b` at rate `bw`, rounded up to the next picosecond so that a non-empty transfer
// never takes zero time. Requires bw > 0. TimeRangeError beyond Time's range.
Time transfer_time(Bytes b, Bandwidth bw);

// Parsers for config values and command-line sizes. Each accepts surrounding blanks, rejects
// anything else with a UnitError whose message says what was expected.
//   bytes:     "1048576", "64MiB", "1.5GB", "4K" (nccl-tests: K/M/G are powers of 1024)
//   bandwidth: "400Gbps", "400Gb/s", "450GB/s", "50GBps", "12.5 GB/s", "800Mbps"
//   time:      "0.6us", "600ns", "1.2 µs", "2ms", "1s", "300ps"
Bytes parse_bytes(std::string_view text);
Bandwidth parse_bandwidth(std::string_view text);
Time parse_time(std::string_view text);

// Human-readable forms used in tables and messages: "64 MiB", "450 GB/s", "2.5 us".
std::string to_string(Bytes b);
std::string to_string(Bandwidth bw);
std::string to_string(Time t);

}  // namespace collsim
