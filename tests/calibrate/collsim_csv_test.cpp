// collsim's CSV (docs/cli.md) read as a measurement file, checked as nccl-tests tables are.
#include <gtest/gtest.h>

#include <string>

#include "calibrate/nccl_tests_reader.hpp"

namespace collsim {
namespace {

const std::string kHeader =
    "collective,algorithm,protocol,channels,ranks,bytes,count,dtype,time_us,algbw_GBps,"
    "busbw_GBps\n";

TEST(CollsimCsv, Rows) {
  // 33554432 B / 182.87 us = 183.49 GB/s; x 2(8-1)/8 = 321.10.
  const MeasurementFile m = parse_measurements(
      "# source: collsim bench --backend nccl\n" + kHeader +
          "allreduce,ring,simple,16,8,33554432,8388608,f32,182.87,183.49,321.10\n"
          "allreduce,bintree,ll128,8,8,67108864,16777216,f32,313.66,213.95,374.42\n",
      "bench.csv");
  EXPECT_EQ(m.format, MeasurementFormat::kCollsimCsv);
  EXPECT_EQ(m.collective, Collective::kAllReduce);
  ASSERT_EQ(m.rows.size(), 2u);
  EXPECT_EQ(m.rows[1].line, 4);
  EXPECT_EQ(m.rows[1].algo_override, "bintree");
  EXPECT_EQ(m.rows[1].proto_override, "ll128");
  EXPECT_EQ(m.rows[1].channels, 8);
  EXPECT_EQ(m.rows[1].data_type, DataType::kF32);
  EXPECT_EQ(m.rows[1].ranks_source, RanksSource::kCsvColumn);
  EXPECT_EQ(m.ranks, 8);
  EXPECT_FALSE(m.rows[0].inplace_time_us.has_value());
}

TEST(CollsimCsv, BusbwChecked) {
  try {
    parse_measurements(kHeader +
                           "allreduce,ring,simple,16,4,33554432,8388608,f32,182.87,183.49,"
                           "321.10\n",
                       "bench.csv");
    ADD_FAILURE() << "no error";
  } catch (const MeasurementError& e) {
    EXPECT_EQ(std::string(e.what()),
              "bench.csv:2: out-of-place busbw: 321.10 GB/s printed, but algbw x 2(n-1)/n = "
              "183.49 x 1.5 = 275.24 GB/s for allreduce with n = 4 ranks (from the ranks "
              "column); expected them to agree to the printed precision (the printed values fit "
              "n = 8)");
  }
}

TEST(CollsimCsv, OtherHeaderIsAnError) {
  try {
    parse_measurements("collective,algorithm,bytes\nallreduce,ring,8\n", "x.csv");
    ADD_FAILURE() << "no error";
  } catch (const MeasurementError& e) {
    EXPECT_EQ(std::string(e.what()), "x.csv:1: expected the collsim CSV header \"" +
                                         kHeader.substr(0, kHeader.size() - 1) +
                                         "\", got \"collective,algorithm,bytes\"");
  }
}

}  // namespace
}  // namespace collsim
