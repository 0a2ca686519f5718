// Published logs come wrapped by their launcher (Open MPI tags, srun labels, Ray prefixes), with
// nccl-tests' '#' dropped by a renderer, with CRLF line ends, several tables in one file, or
// without the line naming the collective. Each sample in tests/data/nccl-tests-wrapped was made
// from tables in tests/data/nccl-tests (its first line says how); the rows read from it must be the
// rows read from those originals.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iomanip>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "calibrate/nccl_tests_reader.hpp"

namespace collsim {
namespace {

const std::string kReal = COLLSIM_SOURCE_DIR "/tests/data/nccl-tests/";
const std::string kWrapped = COLLSIM_SOURCE_DIR "/tests/data/nccl-tests-wrapped/";

// Everything read from a row but its line number, which the wrapping moves.
std::string describe(const MeasurementRow& r) {
  std::ostringstream s;
  s << std::setprecision(17) << r.bytes << " " << r.count << " " << r.dtype << " " << r.redop << " "
    << r.root << " | " << r.time_us << " " << r.algbw_GBps << " " << r.busbw_GBps << " "
    << r.wrong.value_or(-1) << " " << r.max_error.value_or(-1) << " | "
    << r.inplace_time_us.value_or(-1) << " " << r.inplace_algbw_GBps.value_or(-1) << " "
    << r.inplace_busbw_GBps.value_or(-1) << " " << r.inplace_wrong.value_or(-1) << " "
    << r.inplace_max_error.value_or(-1) << " | ranks " << r.ranks << " ("
    << to_string(r.ranks_source) << ") algo " << r.algo_override.value_or("-") << " proto "
    << r.proto_override.value_or("-");
  for (const auto& [k, v] : r.labels) s << " " << k << "=" << v;
  return s.str();
}

std::vector<std::string> rows_of(const std::vector<const MeasurementFile*>& files) {
  std::vector<std::string> out;
  for (const MeasurementFile* f : files) {
    for (const MeasurementRow& r : f->rows) out.push_back(describe(r));
  }
  return out;
}

void expect_same_rows(const MeasurementFile& wrapped,
                      const std::vector<const MeasurementFile*>& originals) {
  EXPECT_EQ(wrapped.collective, originals.front()->collective);
  EXPECT_EQ(rows_of({&wrapped}), rows_of(originals));
}

// A sample made from one original file by wrapping its lines.
struct OneToOne {
  std::string wrapped;
  std::string original;
};
const std::vector<OneToOne> kOneToOne = {
    {"openmpi-tag-output_h100x32_4node_allreduce_voltagepark-ib-8x400G_vpbenchmarking.txt",
     "h100x32_4node_allreduce_voltagepark-ib-8x400G_vpbenchmarking.txt"},
    {"openmpi-stderr_h100x8_1node_allgather_xxrjun-cluster01.txt",
     "h100x8_1node_allgather_xxrjun-cluster01.txt"},
    {"srun-label_h100x8_2node-4gpu_allreduce_snellius-ib-4xNDR200_odissei.txt",
     "h100x8_2node-4gpu_allreduce_snellius-ib-4xNDR200_odissei.txt"},
    {"ray_h100x8_1node_allreduce_NVLS_together.txt", "h100x8_1node_allreduce_NVLS_together.txt"},
    {"crlf_h100x4_1node_reducescatter_waynehacking8.txt",
     "h100x4_1node_reducescatter_waynehacking8.txt"},
    {"hash-stripped_a100x16_2node_allreduce_alcf-sophia-dgx-a100-8xHDR200.txt",
     "a100x16_2node_allreduce_alcf-sophia-dgx-a100-8xHDR200.txt"},
};
const std::string kTwoRuns = "two-runs_allreduce_small-msg_reg0_graph0-graph1_waynehacking8.txt";
const std::string kFiveCollectives = "five-collectives_h100x8_1node_xxrjun-cluster01.txt";
const std::string kNoCollective =
    "no-collective_rtx2080ti-x2_1node-pcie-noP2P_allgather_anthony-hoo-blog.txt";

TEST(NcclTestsWrapped, EverySampleIsListed) {
  std::set<std::string> listed = {kTwoRuns, kFiveCollectives, kNoCollective, "INDEX.md"};
  for (const OneToOne& s : kOneToOne) listed.insert(s.wrapped);
  std::set<std::string> present;
  for (const auto& entry : std::filesystem::directory_iterator(kWrapped)) {
    present.insert(entry.path().filename().string());
  }
  EXPECT_EQ(present, listed);
}

TEST(NcclTestsWrapped, SameRowsAsTheOriginal) {
  for (const OneToOne& s : kOneToOne) {
    SCOPED_TRACE(s.wrapped);
    const MeasurementFile w = read_measurements(kWrapped + s.wrapped);
    const MeasurementFile o = read_measurements(kReal + s.original);
    expect_same_rows(w, {&o});
    EXPECT_EQ(w.ranks, o.ranks);
    EXPECT_EQ(w.nodes, o.nodes);
    EXPECT_EQ(w.avg_busbw_GBps, o.avg_busbw_GBps);
    EXPECT_EQ(w.warnings.size(), o.warnings.size()) << ::testing::PrintToString(w.warnings);
  }
}

TEST(NcclTestsWrapped, RowsCutByOtherRanksOutput) {
  const MeasurementFile m = read_measurements(kWrapped + kOneToOne[0].wrapped);
  // Line 20: "[1,0]<stdout>:  32  8  float  sum  -1[1,17]<stdout>:g205:... NCCL INFO ...", its
  // timings on line 22: the row is numbered where it begins.
  EXPECT_EQ(m.rows[2].bytes, 32u);
  EXPECT_EQ(m.rows[2].line, 20);
  EXPECT_DOUBLE_EQ(m.rows[2].inplace_time_us.value(), 37.16);
  EXPECT_EQ(m.rows[3].line, 23);
}

TEST(NcclTestsWrapped, RowCutAndNeverFinishedIsReportedWhereItBegins) {
  const std::string log =
      "[1,0]<stdout>:# Collective test starting: all_reduce_perf\n"
      "[1,0]<stdout>:     1048576  262144  float  sum  -1[1,3]<stdout>:h:1:2 [3] NCCL INFO x\n"
      "[1,3]<stdout>:h:1:2 [3] NCCL INFO y\n";
  try {
    parse_measurements(log, "cut.txt");
    ADD_FAILURE() << "no error";
  } catch (const MeasurementError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cut.txt:2: expected 13 columns (size count type redop root time algbw busbw "
              "#wrong time algbw busbw #wrong), 12 (the older form without root) or 21 (with "
              "the per-iteration summaries of -I 1), and two more for -S 1's timestamp, got 5 "
              "(truncated row?)");
  }
}

TEST(NcclTestsWrapped, TwoRunsOfOneCollective) {
  const MeasurementFile g0 =
      read_measurements(kReal + "h100x4_1node_allreduce_small-msg_reg0_graph0_waynehacking8.txt");
  const MeasurementFile g1 =
      read_measurements(kReal + "h100x4_1node_allreduce_small-msg_reg0_graph1_waynehacking8.txt");
  const std::vector<MeasurementFile> parts = read_measurement_parts(kWrapped + kTwoRuns);
  ASSERT_EQ(parts.size(), 1u);
  const MeasurementFile& m = parts.front();
  // Both runs' rows, in file order: each size twice.
  expect_same_rows(m, {&g0, &g1});
  EXPECT_EQ(m.collective_source, "all_reduce_perf at line 6");
  EXPECT_EQ(m.avg_busbw_GBps,
            (std::vector<double>{g0.avg_busbw_GBps.front(), g1.avg_busbw_GBps.front()}));
  // The first run's header and command; each run's rank lines.
  EXPECT_EQ(m.run.graph, 0);
  EXPECT_EQ(m.command, "./all_reduce_perf -b 8 -e 16M -f 2 -g 4 -w 5 -n 50 -R 0 -G 0");
  EXPECT_EQ(m.devices.size(), 8u);
  EXPECT_EQ(m.ranks, 4);
}

TEST(NcclTestsWrapped, LabelsStayWithTheirRun) {
  // Each run's label, whether above its header or below it; none carries into the next run.
  const std::vector<MeasurementFile> parts = parse_measurement_parts(
      "### ALGO=Ring\n"
      "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20\n"
      "# Collective test starting: all_reduce_perf\n"
      "  1048576  262144  float  sum  -1  10.00  104.86  104.86  0  10.00  104.86  104.86  0\n"
      "### ALGO=Tree\n"
      "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20\n"
      "  1048576  262144  float  sum  -1  10.00  104.86  104.86  0  10.00  104.86  104.86  0\n"
      "# Collective test starting: all_reduce_perf\n"
      "  1048576  262144  float  sum  -1  10.00  104.86  104.86  0  10.00  104.86  104.86  0\n",
      "labels.txt");
  ASSERT_EQ(parts.size(), 1u);
  ASSERT_EQ(parts[0].rows.size(), 3u);
  EXPECT_EQ(parts[0].rows[0].algo_override, "Ring");
  EXPECT_EQ(parts[0].rows[1].algo_override, "Tree");
  EXPECT_FALSE(parts[0].rows[2].algo_override.has_value());
}

TEST(NcclTestsWrapped, SeveralCollectivesOneAfterTheOther) {
  const std::vector<MeasurementFile> parts = read_measurement_parts(kWrapped + kFiveCollectives);
  const std::vector<std::string> names = {"allreduce", "allgather", "reducescatter", "alltoall",
                                          "sendrecv"};
  ASSERT_EQ(parts.size(), names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    SCOPED_TRACE(names[i]);
    const MeasurementFile o =
        read_measurements(kReal + "h100x8_1node_" + names[i] + "_xxrjun-cluster01.txt");
    expect_same_rows(parts[i], {&o});
    EXPECT_EQ(parts[i].devices.size(), 8u);
    EXPECT_EQ(parts[i].avg_busbw_GBps, o.avg_busbw_GBps);
  }
  EXPECT_EQ(parts[1].collective_source, "all_gather_perf at line 38");

  // A caller that expects one collective is told where the second begins.
  const std::string path = kWrapped + kFiveCollectives;
  try {
    read_measurements(path);
    ADD_FAILURE() << "no error";
  } catch (const MeasurementError& e) {
    EXPECT_EQ(std::string(e.what()),
              path +
                  ":56: rows of allgather (all_gather_perf at line 38) after those of allreduce "
                  "(all_reduce_perf at line 7); expected one collective here "
                  "(read_measurement_parts() reads a file of several)");
  }
}

TEST(NcclTestsWrapped, CollectiveFromOptionOnlyWhereTheFileNamesNone) {
  const std::string path = kWrapped + kNoCollective;
  const MeasurementFile o =
      read_measurements(kReal + "rtx2080ti-x2_1node-pcie-noP2P_allgather_anthony-hoo-blog.txt");
  const MeasurementFile m = read_measurements(path, {.collective = Collective::kAllGather});
  expect_same_rows(m, {&o});
  EXPECT_EQ(m.collective_source, "--op");
  try {
    read_measurements(path);
    ADD_FAILURE() << "no error";
  } catch (const MeasurementError& e) {
    EXPECT_EQ(std::string(e.what()),
              path +
                  ": cannot tell which collective was measured: no \"# Collective test "
                  "starting:\" line and no command line naming a *_perf program; pass it with "
                  "--op (e.g. --op allreduce)");
  }
  // A file that names its collective keeps it; --op must agree.
  EXPECT_THROW(
      read_measurement_parts(kWrapped + kFiveCollectives, {.collective = Collective::kAllReduce}),
      MeasurementError);
}

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// `text` with every line prefixed by `prefix` and ended by `eol`.
std::string wrap_lines(const std::string& text, const std::string& prefix, const std::string& eol) {
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out += prefix + line + eol;
  return out;
}

// What --op says for a real file that names no collective: the collective its name gives
// (<gpus>_<layout>_<collective>_<source>.txt, tests/data/nccl-tests/INDEX.md).
ReadOptions options_for(const std::filesystem::path& path, std::string_view text) {
  if (text.find("_perf") != std::string_view::npos) return {};
  const std::string name = path.filename().string();
  const auto a = name.find('_', name.find('_') + 1) + 1;
  return {.collective = parse_collective(name.substr(a, name.find('_', a) - a))};
}

// Every real file, wrapped line by line as each launcher does, reads the same rows.
TEST(NcclTestsWrapped, EveryRealFileUnderEveryLinePrefix) {
  const std::vector<std::string> prefixes = {
      "[1,0]<stdout>:", "[1,0]<stderr>:", "0: ", " 3: ", "(head, rank=0, pid=3808) ", "[0] "};
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kReal)) {
    if (entry.path().extension() != ".txt") continue;
    ++files;
    const std::string path = entry.path().string();
    SCOPED_TRACE(path);
    const std::string text = file_text(path);
    const ReadOptions op = options_for(entry.path(), text);
    const MeasurementFile o = parse_measurements(text, "x.txt", op);
    expect_same_rows(parse_measurements(wrap_lines(text, "", "\r\n"), "x.txt", op), {&o});
    // One launcher's prefix does not go before another's tag.
    if (text.find("<stdout>:") != std::string::npos) continue;
    for (const std::string& prefix : prefixes) {
      SCOPED_TRACE(prefix);
      expect_same_rows(parse_measurements(wrap_lines(text, prefix, "\n"), "x.txt", op), {&o});
    }
  }
  EXPECT_GT(files, 30);
}

}  // namespace
}  // namespace collsim
