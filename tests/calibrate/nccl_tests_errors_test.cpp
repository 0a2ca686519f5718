// Every malformed file in tests/data/nccl-tests-bad gives exactly this message (docs/style.md: pin
// every user-facing message). Each file was made by hand from a real one; its first line says how.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "calibrate/nccl_tests_reader.hpp"

namespace collsim {
namespace {

const std::string kDir = COLLSIM_SOURCE_DIR "/tests/data/nccl-tests-bad/";

struct BadFile {
  std::string file;
  std::string message;  // after "<path>"
};

const std::vector<BadFile> kBadFiles = {
    {"truncated-row.txt",
     ":24: expected 13 columns as in the header at line 19, got 6 "
     "(truncated row?)"},
    {"size-with-unit.txt", ":22: size: expected a byte count (an unsigned integer), got \"64M\""},
    {"negative-time.txt",
     ":23: out-of-place time: expected a positive number of microseconds, got \"-564.78\""},
    {"time-not-a-number.txt",
     ":21: in-place time: expected a positive number of microseconds, got \"fast\""},
    {"time-in-milliseconds.txt",
     ":21: out-of-place algbw: 183.49 GB/s printed, but size / time = 33554432 B / 0.18287 us = "
     "183487.90 GB/s; expected them to agree to the printed precision (is the time in "
     "microseconds?)"},
    {"busbw-factor-mismatch.txt",
     ":17: out-of-place busbw: 321.10 GB/s printed, but algbw x 2(n-1)/n = 183.49 x 1.5 = 275.24 "
     "GB/s for allreduce with n = 4 ranks (from the rank lines at line 7); expected them to agree "
     "to the printed precision (the printed values fit n = 8)"},
    {"busbw-inconsistent-rows.txt",
     ":4: out-of-place busbw / algbw = 414.94 / 237.11 fits no rank count n that fits the rows "
     "above (n = 4); expected busbw = algbw x 2(n-1)/n with one n for the whole run"},
    {"size-count-mismatch.txt",
     ":23: size 134217728 B is not count 2097150 x 8 B (double) x 8 ranks = 134217600 B; "
     "expected size = count x element size x ranks for allgather"},
    {"empty.txt", ": empty file; expected an nccl-tests table or a collsim CSV"},
    {"no-rows.txt",
     ": no measurement rows after the column header at line 19; expected rows "
     "that start with the size in bytes (truncated file?)"},
    {"garbage.txt",
     ": no measurement rows; expected an nccl-tests table (rows that start with the size in "
     "bytes) or a collsim CSV; first unrecognised line 2: \"Segmentation fault (core dumped)\""},
    {"extra-column-old-format.txt", ":9: expected 12 columns as in the header at line 6, got 13"},
    {"interleaved-nccl-info.txt",
     ":18: row interrupted by log output (\"-1gcn151:2847562:2847697 [0] NCCL INFO Channel 00/0 "
     ": 3[3] -...\"); "
     "expected a complete row: remove the interleaved lines or rerun without NCCL_DEBUG"},
    {"unknown-column-header.txt",
     ":19: unrecognised column header \"size count type redop root time algbw busbw #wrong "
     "time(ms) algbw busbw #wrong\"; expected \"size count type redop root time algbw busbw "
     "#wrong time algbw busbw #wrong\" (or the older form without root and with \"error\" for "
     "\"#wrong\"; each group may end with \"i_min i_max i_p99 i_cv%\" and the header with "
     "\"timestamp\")"},
    {"no-collective.txt",
     ": cannot tell which collective was measured: no \"# Collective test starting:\" line and "
     "no command line naming a *_perf program; pass it with --op (e.g. --op allreduce)"},
    {"two-collectives.txt",
     ":4: all_reduce_perf here, but all_gather_perf at line 2 for the same rows; expected one "
     "collective per table"},
    {"hypercube.txt",
     ":3: hypercube_perf measures no collective collsim models; expected one of all_reduce_perf, "
     "all_gather_perf, reduce_scatter_perf, broadcast_perf, reduce_perf, alltoall_perf, "
     "sendrecv_perf, gather_perf, scatter_perf"},
    {"csv-truncated-row.csv",
     ":4: expected 11 comma-separated columns as in the header, got 10 (truncated row?)"},
    {"csv-unknown-collective.csv",
     ":4: collective: unknown collective \"allreduc\": expected one of allreduce, allgather, "
     "reducescatter, broadcast, reduce, gather, scatter, alltoall, barrier, sendrecv; did you "
     "mean \"allreduce\"?"},
};

TEST(NcclTestsErrors, EveryBadFileIsListed) {
  std::set<std::string> listed;
  for (const BadFile& b : kBadFiles) listed.insert(b.file);
  std::set<std::string> present;
  for (const auto& entry : std::filesystem::directory_iterator(kDir)) {
    present.insert(entry.path().filename().string());
  }
  EXPECT_EQ(present, listed);
}

TEST(NcclTestsErrors, ExactMessages) {
  for (const BadFile& b : kBadFiles) {
    SCOPED_TRACE(b.file);
    const std::string path = kDir + b.file;
    try {
      read_measurements(path);
      ADD_FAILURE() << "no error";
    } catch (const MeasurementError& e) {
      EXPECT_EQ(std::string(e.what()), path + b.message);
    }
  }
}

TEST(NcclTestsErrors, OpThatContradictsTheFile) {
  const std::string path =
      COLLSIM_SOURCE_DIR "/tests/data/nccl-tests/h100x8_1node_allreduce_xxrjun-cluster01.txt";
  try {
    read_measurements(path, {.collective = Collective::kAllGather});
    ADD_FAILURE() << "no error";
  } catch (const MeasurementError& e) {
    EXPECT_EQ(std::string(e.what()),
              path +
                  ":5: the file measured all_reduce_perf, but --op says allgather; expected "
                  "them to agree");
  }
}

TEST(NcclTestsErrors, MissingFile) {
  const std::string path = kDir + "no-such-file.txt";
  try {
    read_measurements(path);
    ADD_FAILURE() << "no error";
  } catch (const MeasurementError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": cannot read: No such file or directory");
  }
}

TEST(NcclTestsErrors, IsACollsimError) {
  // main catches collsim::Error; the reader's errors must be of that family.
  EXPECT_THROW(parse_measurements("", "x.txt"), Error);
}

}  // namespace
}  // namespace collsim
