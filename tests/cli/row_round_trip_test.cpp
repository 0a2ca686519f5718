// What collsim writes, collsim reads back: result rows written as CSV (algorithms/ir/result_row.hpp)
// come back from the collsim-CSV reader with the same values, and an nccl-tests table written by
// cli/nccl_tests_table.hpp comes back from the nccl-tests reader with the same rows, to the digits
// the table prints. Writers and readers share the column and name tables; these tests hold them
// to it.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "algorithms/ir/nccl_tests_names.hpp"
#include "algorithms/ir/result_row.hpp"
#include "calibrate/nccl_tests_reader.hpp"
#include "cli/nccl_tests_table.hpp"

namespace collsim {
namespace {

// Three sizes of one collective over `ranks` ranks, timed `ps` picoseconds and up, each row as
// `make` (make_row: rounded, predictions; result_row: exact, measurements) gives it.
template <typename Make>
std::vector<ResultRow> rows_of(Collective c, DataType t, int ranks, const Candidate& cand,
                               std::int64_t ps, Make make) {
  std::vector<ResultRow> rows;
  for (std::uint64_t count : {2, 1000, 1 << 20}) {
    Request r;
    r.collective = c;
    r.dtype = t;
    r.count = count;
    r.channels = 4;
    r.comm = Communicator::grid(1, ranks);
    rows.push_back(make(r, cand, Time::from_ps(ps)));
    ps = ps * 7 + 123457;  // times with all their digits used
  }
  return rows;
}

std::string csv_of(const std::vector<ResultRow>& rows, CsvNumbers numbers) {
  std::string text = csv_header() + "\n";
  for (const ResultRow& r : rows) text += csv_line(r, numbers) + "\n";
  return text;
}

// The columns a CSV row carries besides its numbers.
void expect_same_columns(const MeasurementRow& m, const ResultRow& r) {
  EXPECT_EQ(m.algo_override, r.algorithm);
  EXPECT_EQ(m.proto_override, r.protocol);
  EXPECT_EQ(m.channels, r.channels);
  EXPECT_EQ(m.ranks, r.ranks);
  EXPECT_EQ(m.bytes, r.bytes);
  EXPECT_EQ(m.count, r.count);
  EXPECT_EQ(m.dtype, to_string(r.dtype));
  EXPECT_EQ(m.data_type, r.dtype);
}

TEST(RowRoundTrip, PredictedCsvReadsBackExactly) {
  const std::vector<ResultRow> rows = rows_of(Collective::kAllGather, DataType::kBf16, 8,
                                              {"ring", Protocol::kLL128}, 40652186, make_row);
  const MeasurementFile m = parse_measurements(csv_of(rows, CsvNumbers::kShortest), "p.csv");
  EXPECT_EQ(m.format, MeasurementFormat::kCollsimCsv);
  EXPECT_EQ(m.collective, Collective::kAllGather);
  ASSERT_EQ(m.rows.size(), rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    expect_same_columns(m.rows[i], rows[i]);
    EXPECT_EQ(m.rows[i].time_us, rows[i].time_us);
    EXPECT_EQ(m.rows[i].algbw_GBps, rows[i].algbw_GBps);
    EXPECT_EQ(m.rows[i].busbw_GBps, rows[i].busbw_GBps);
  }
}

TEST(RowRoundTrip, MeasuredCsvReadsBackToItsDecimals) {
  std::vector<ResultRow> rows = rows_of(Collective::kAllReduce, DataType::kF32, 4,
                                        {"bintree", Protocol::kSimple}, 25057512, result_row);
  rows.back().protocol = "auto";  // bench nccl-native: NCCL chose
  const MeasurementFile m = parse_measurements(csv_of(rows, CsvNumbers::kFixed), "bench.csv");
  ASSERT_EQ(m.rows.size(), rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    expect_same_columns(m.rows[i], rows[i]);
    EXPECT_NEAR(m.rows[i].time_us, rows[i].time_us, 0.0005);
    EXPECT_NEAR(m.rows[i].algbw_GBps, rows[i].algbw_GBps, 0.00005);
    EXPECT_NEAR(m.rows[i].busbw_GBps, rows[i].busbw_GBps, 0.00005);
  }
}

// The numbers of a table row, to the digits nccl-tests prints (2 decimals where they fit).
void expect_same_numbers(const MeasurementRow& m, const NcclTestsTable::Row& row) {
  const ResultRow& r = row.result;
  EXPECT_EQ(m.bytes, r.bytes);
  EXPECT_EQ(m.count, r.count);
  EXPECT_EQ(m.dtype, nccl_tests_type(r.dtype));
  EXPECT_EQ(m.data_type, r.dtype);
  EXPECT_NEAR(m.time_us, r.time_us, 0.005 + 1e-9);
  EXPECT_NEAR(m.algbw_GBps, r.algbw_GBps, 0.005 + 1e-9);
  EXPECT_NEAR(m.busbw_GBps, r.busbw_GBps, 0.005 + 1e-9);
  EXPECT_EQ(m.wrong, row.wrong);
  EXPECT_EQ(m.ranks, r.ranks);
}

MeasurementFile written_and_read(const NcclTestsTable& t) {
  std::ostringstream text;
  write_nccl_tests_table(text, t);
  MeasurementFile m = parse_measurements(text.str(), "table.txt");
  EXPECT_TRUE(m.warnings.empty()) << m.warnings.front() << "\n" << text.str();
  return m;
}

// As sweep prints predictions: both halves, #wrong N/A, a label whenever the algorithm changes.
TEST(RowRoundTrip, PredictedTableReadsBack) {
  NcclTestsTable t;
  t.collective = Collective::kAllReduce;
  t.redop = ReduceOp::kAvg;
  t.ranks = 8;
  for (int r = 0; r < t.ranks; ++r) t.devices.push_back({std::to_string(r), "node0", r, "[sim]"});
  t.comments.push_back("collsim sweep: predicted, not measured");
  for (const Candidate& cand : {Candidate{"ring", Protocol::kLL}, Candidate{"dbtree"}}) {
    for (const ResultRow& r :
         rows_of(t.collective, DataType::kF16, t.ranks, cand, 40652186, make_row)) {
      t.rows.push_back(
          {r, std::nullopt, "ALGO=" + r.algorithm + " PROTO=" + r.protocol + " GPUS=8"});
    }
  }
  const MeasurementFile m = written_and_read(t);
  EXPECT_EQ(m.format, MeasurementFormat::kNcclTests);
  EXPECT_EQ(m.collective, Collective::kAllReduce);
  ASSERT_EQ(m.rows.size(), t.rows.size());
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    expect_same_numbers(m.rows[i], t.rows[i]);
    EXPECT_EQ(m.rows[i].redop, "avg");
    EXPECT_EQ(m.rows[i].reduce_op, ReduceOp::kAvg);
    EXPECT_EQ(m.rows[i].root, -1);
    EXPECT_EQ(m.rows[i].inplace_time_us, m.rows[i].time_us);
    EXPECT_EQ(m.rows[i].algo_override, t.rows[i].result.algorithm);
    EXPECT_EQ(m.rows[i].proto_override, t.rows[i].result.protocol);
  }
}

// As bench prints measurements: the out-of-place half, the wrong elements counted, one label.
TEST(RowRoundTrip, MeasuredTableReadsBack) {
  NcclTestsTable t;
  t.collective = Collective::kBroadcast;
  t.root = 3;
  t.gpus = 4;
  t.warmup = 5;
  t.iters = 20;
  t.validation = 1;
  t.ranks = 4;
  for (int r = 0; r < t.ranks; ++r) t.devices.push_back({"4242", "vm", 0, "[cpu] host"});
  t.label = "ALGO=ring PROTO=simple GPUS=4 CHANNELS=4 BACKEND=cpu";
  t.repeat_in_place = false;
  for (const ResultRow& r : rows_of(t.collective, DataType::kI64, t.ranks,
                                    {"ring", Protocol::kSimple}, 18881234, result_row)) {
    t.rows.push_back({r, 0, ""});
  }
  const MeasurementFile m = written_and_read(t);
  EXPECT_EQ(m.collective, Collective::kBroadcast);
  EXPECT_EQ(m.run.warmup_iters, 5);
  EXPECT_EQ(m.run.iters, 20);
  ASSERT_EQ(m.rows.size(), t.rows.size());
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    expect_same_numbers(m.rows[i], t.rows[i]);
    EXPECT_EQ(m.rows[i].redop, "none");
    EXPECT_EQ(m.rows[i].root, 3);
    EXPECT_FALSE(m.rows[i].inplace_time_us.has_value());
    EXPECT_EQ(m.rows[i].algo_override, "ring");
    EXPECT_EQ(m.rows[i].labels.at("BACKEND"), "cpu");
  }
}

// nccl-tests has no barrier program; the table names collsim's and the reader takes it.
TEST(RowRoundTrip, BarrierTableNamesItsCollective) {
  NcclTestsTable t;
  t.collective = Collective::kBarrier;
  t.ranks = 2;
  t.label = "ALGO=binomial GPUS=2";
  Request r;
  r.collective = Collective::kBarrier;
  r.comm = Communicator::grid(1, 2);
  t.rows.push_back({result_row(r, {"binomial"}, Time::from_ps(20150000)), 0, ""});
  const MeasurementFile m = written_and_read(t);
  EXPECT_EQ(m.collective, Collective::kBarrier);
  ASSERT_EQ(m.rows.size(), 1u);
  expect_same_numbers(m.rows[0], t.rows[0]);
}

}  // namespace
}  // namespace collsim
