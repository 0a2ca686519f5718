#include "topology/units.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "topology/error.hpp"

namespace collsim {
namespace {

TEST(Units, ParsesBytesWithEveryPrefixFamily) {
  EXPECT_EQ(parse_bytes("1048576").count(), 1048576u);
  EXPECT_EQ(parse_bytes("64MiB"), MiB(64));
  EXPECT_EQ(parse_bytes("4K"), KiB(4));  // nccl-tests: K is 1024
  EXPECT_EQ(parse_bytes("1G"), GiB(1));
  EXPECT_EQ(parse_bytes("1.5GB").count(), 1500000000u);
  EXPECT_EQ(parse_bytes(" 8 B ").count(), 8u);
  EXPECT_EQ(parse_bytes("1TiB").count(), 1ull << 40);
}

TEST(Units, RejectsMalformedBytes) {
  EXPECT_THROW(parse_bytes("big"), UnitError);
  EXPECT_THROW(parse_bytes("1.5B"), UnitError);
  EXPECT_THROW(parse_bytes("-4K"), UnitError);
  EXPECT_THROW(parse_bytes("4 parsecs"), UnitError);
  try {
    parse_bytes("lots");
    FAIL();
  } catch (const UnitError& e) {
    EXPECT_STREQ(e.what(), "expected a size such as \"64MiB\", got \"lots\"");
  }
}

TEST(Units, ParsesBandwidth) {
  EXPECT_DOUBLE_EQ(parse_bandwidth("400Gbps").gbyte_per_second(), 50.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth("400 Gb/s").gbyte_per_second(), 50.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth("450GB/s").gbyte_per_second(), 450.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth("12.5GBps").gbyte_per_second(), 12.5);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1Mbps").bytes_per_second(), 125000.0);
  EXPECT_THROW(parse_bandwidth("0Gbps"), UnitError);
  EXPECT_THROW(parse_bandwidth("-3GB/s"), UnitError);
  EXPECT_THROW(parse_bandwidth("fast"), UnitError);
  EXPECT_THROW(parse_bandwidth("400"), UnitError);
}

TEST(Units, ParsesTime) {
  EXPECT_EQ(parse_time("0.6us"), ns(600));
  EXPECT_EQ(parse_time("600ns").ps(), 600000);
  EXPECT_EQ(parse_time("1.2 \xC2\xB5s"), ns(1200));
  EXPECT_EQ(parse_time("2ms"), us(2000));
  EXPECT_EQ(parse_time("1s"), ms(1000));
  EXPECT_EQ(parse_time("0us"), Time());
  EXPECT_THROW(parse_time("-1us"), UnitError);
  EXPECT_THROW(parse_time("3 fortnights"), UnitError);
}

// ceil_to_int64 is std::ceil's integer to the unit, without switching the rounding mode: at
// integers, a hair on either side of them and of halves, across the whole range of picoseconds
// collsim represents, and on the quotients the engine forms (bytes x 1e12 / rate).
TEST(Units, CeilToInt64IsCeil) {
  const auto expect_ceil = [](long double x) {
    EXPECT_EQ(ceil_to_int64(x), static_cast<std::int64_t>(std::ceil(x))) << static_cast<double>(x);
  };
  for (long double base = 1; base < 9.0e18L; base *= 3) {
    for (long double at : {std::floor(base), std::floor(base) + 0.5L}) {
      expect_ceil(at);
      expect_ceil(std::nextafter(at, 0.0L));
      expect_ceil(std::nextafter(at, 1e19L));
    }
  }
  expect_ceil(0.0L);
  expect_ceil(std::nextafter(0.0L, 1.0L));
  for (std::uint64_t bytes = 1; bytes < (1ull << 40); bytes = bytes * 7 + 3) {
    for (double rate : {25e9, 46.875e9, 3.3e11, 1.0e6 / 3}) {
      expect_ceil(static_cast<long double>(bytes) * 1e12L / static_cast<long double>(rate));
    }
  }
}

TEST(Units, TransferTimeRoundsUpAndNeverOverflows) {
  // 1 MiB at 50 GB/s = 1048576 / 50e9 s = 20.97152 us exactly.
  EXPECT_EQ(transfer_time(MiB(1), Gbps(400)).ps(), 20971520);
  // 1 byte at 3 B/s = 333333333333.33 ps -> rounded up.
  EXPECT_EQ(transfer_time(B(1), Bandwidth::bytes_per_second(3)).ps(), 333333333334);
  // 2^40 bytes at 1 Mbps = 8.8e6 s = 8.8e18 ps, still below INT64_MAX (9.22e18).
  EXPECT_EQ(transfer_time(Bytes(1ull << 40), parse_bandwidth("1Mbps")).ps(),
            8796093022208000000);
  EXPECT_THROW(transfer_time(Bytes(1ull << 50), parse_bandwidth("1bps")), TimeRangeError);
}

TEST(Units, FormatsForHumans) {
  EXPECT_EQ(to_string(MiB(64)), "64 MiB");
  EXPECT_EQ(to_string(B(1000)), "1000 B");
  EXPECT_EQ(to_string(Bytes(1536)), "1.5 KiB");
  EXPECT_EQ(to_string(GBps(450)), "450 GB/s");
  EXPECT_EQ(to_string(us(2.5)), "2.5 us");
  EXPECT_EQ(to_string(ns(600)), "600 ns");
}

TEST(Errors, SuggestsTheNearestName) {
  const std::vector<std::string> kinds = {"nvswitch", "nvlink", "pcie"};
  EXPECT_EQ(nearest("nvswich", kinds), "nvswitch");
  EXPECT_EQ(nearest("banana", kinds), "");
  EXPECT_EQ(expected_one_of("pcei", kinds),
            "expected one of nvswitch, nvlink, pcie; did you mean \"pcie\"?");
}

}  // namespace
}  // namespace collsim
