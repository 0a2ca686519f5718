// The reader's behaviour on particular files and on small hand-written logs: row contents, the
// old format with MPI tags, annotated sweeps, environment and launch lines, foreign lines,
// warnings. Expected values are copied from the files named.
#include "calibrate/nccl_tests_reader.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace collsim {
namespace {

const std::string kDir = COLLSIM_SOURCE_DIR "/tests/data/nccl-tests/";

MeasurementFile read(const std::string& file, const ReadOptions& options = {}) {
  return read_measurements(kDir + file, options);
}

std::vector<std::string> algos(const MeasurementFile& m) {
  std::vector<std::string> v;
  for (const MeasurementRow& r : m.rows) v.push_back(r.algo_override.value_or("-"));
  return v;
}

TEST(NcclTestsReader, CurrentFormatRow) {
  const MeasurementFile m = read("h100x8_1node_allreduce_xxrjun-cluster01.txt");
  // Line 25: "33554432 4194304 double sum -1 182.87 183.49 321.10 0 182.88 183.48 321.08 0".
  const MeasurementRow& r = m.rows.front();
  EXPECT_EQ(r.line, 25);
  EXPECT_EQ(r.bytes, 33554432u);
  EXPECT_EQ(r.count, 4194304u);
  EXPECT_EQ(r.dtype, "double");
  EXPECT_EQ(r.data_type, DataType::kF64);
  EXPECT_EQ(r.redop, "sum");
  EXPECT_EQ(r.reduce_op, ReduceOp::kSum);
  EXPECT_EQ(r.root, -1);
  EXPECT_DOUBLE_EQ(r.time_us, 182.87);
  EXPECT_DOUBLE_EQ(r.algbw_GBps, 183.49);
  EXPECT_DOUBLE_EQ(r.busbw_GBps, 321.10);
  EXPECT_EQ(r.wrong, 0);
  EXPECT_EQ(r.inplace_time_us, 182.88);
  EXPECT_EQ(r.inplace_algbw_GBps, 183.48);
  EXPECT_EQ(r.inplace_busbw_GBps, 321.08);
  EXPECT_EQ(r.inplace_wrong, 0);
  EXPECT_EQ(r.ranks, 8);
  EXPECT_EQ(r.ranks_source, RanksSource::kRankLines);
  EXPECT_FALSE(r.algo_override.has_value());

  EXPECT_EQ(m.collective_source, "all_reduce_perf at line 5");
  EXPECT_EQ(m.nccl_tests_version, "2.17.8");
  EXPECT_EQ(m.run.threads, 1);
  EXPECT_EQ(m.run.gpus_per_thread, 1);
  EXPECT_EQ(m.run.min_bytes, 33554432u);
  EXPECT_EQ(m.run.max_bytes, 26549638485u);  // lowered by "# Reducing maxBytes" (line 20)
  EXPECT_EQ(m.run.step_factor, 2.0);
  EXPECT_EQ(m.run.warmup_iters, 5);
  EXPECT_EQ(m.run.iters, 20);
  EXPECT_EQ(m.run.agg_iters, 1);
  ASSERT_EQ(m.devices.size(), 8u);
  EXPECT_EQ(m.devices[3].rank, 3);
  EXPECT_EQ(m.devices[3].host, "cnode3-002");
  EXPECT_EQ(m.devices[3].device, 3);
  EXPECT_EQ(m.devices[3].bus_id, "0000:61:00");
  EXPECT_EQ(m.devices[3].gpu_name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(m.warnings,
            std::vector<std::string>{kDir + "h100x8_1node_allreduce_xxrjun-cluster01.txt:20: "
                                            "nccl-tests: Reducing maxBytes to 26549638485 due to "
                                            "memory limitation"});
  ASSERT_EQ(m.metadata.size(), 5u);
  EXPECT_EQ(m.metadata[0].first, "source");
  EXPECT_EQ(m.metadata[1].first, "hardware");
  EXPECT_EQ(m.metadata[2].first, "nccl");
  EXPECT_EQ(m.avg_busbw_GBps, std::vector<double>{437.957});
}

TEST(NcclTestsReader, OldFormatWithMpiTags) {
  const MeasurementFile m = read("a100x16_2node_allreduce_aws-p4d-efa-4x100G_aws-efa-eks.txt");
  EXPECT_EQ(m.format, MeasurementFormat::kNcclTestsOld);
  // Line 31: "[1,0]<stdout>: 8 2 float sum 179.1 0.00 0.00 2e-07 176.3 0.00 0.00 1e-07".
  const MeasurementRow& first = m.rows.front();
  EXPECT_EQ(first.line, 31);
  EXPECT_EQ(first.bytes, 8u);
  EXPECT_EQ(first.root, -1);
  EXPECT_DOUBLE_EQ(first.time_us, 179.1);
  EXPECT_EQ(first.max_error, 2e-07);
  EXPECT_FALSE(first.wrong.has_value());
  EXPECT_EQ(first.inplace_time_us, 176.3);
  EXPECT_EQ(first.inplace_max_error, 1e-07);
  // Line 60: "4294967296 1073741824 float sum 183834 23.36 43.81 5e-07 184216 23.31 43.72 5e-07".
  const MeasurementRow& last = m.rows.back();
  EXPECT_EQ(last.line, 60);
  EXPECT_DOUBLE_EQ(last.time_us, 183834);
  EXPECT_DOUBLE_EQ(last.busbw_GBps, 43.81);
  EXPECT_EQ(last.inplace_busbw_GBps, 43.72);
  EXPECT_EQ(m.devices.size(), 16u);
  EXPECT_EQ(m.devices[8].host, "nccl-tests-efa-16-worker-1");
  EXPECT_EQ(m.run.iters, 100);
  EXPECT_FALSE(m.run.agg_iters.has_value());
  // "# env: NCCL_DEBUG=INFO. The repo example ... sets NCCL_ALGO=RING ...": the prose after the
  // first assignment is not read, so no algorithm is claimed for this run.
  EXPECT_EQ(m.env, (std::map<std::string, std::string>{{"NCCL_DEBUG", "INFO"}}));
  EXPECT_FALSE(last.algo_override.has_value());
}

TEST(NcclTestsReader, InPlaceNotAvailable) {
  const MeasurementFile m = read("a100x8_1node_sendrecv_li-plus-playground.txt");
  // Line 12: "268435456 67108864 float sum -1 1423.3 188.60 188.60 0 1420.2 189.01 189.01 N/A".
  const MeasurementRow& r = m.rows[1];
  EXPECT_EQ(r.line, 12);
  EXPECT_EQ(r.wrong, 0);
  EXPECT_EQ(r.inplace_time_us, 1420.2);
  EXPECT_FALSE(r.inplace_wrong.has_value());
  // No header or rank lines: "./build/sendrecv_perf ... -g 8" is one process with 8 GPUs.
  EXPECT_EQ(r.ranks, 8);
  EXPECT_EQ(r.ranks_source, RanksSource::kLaunch);
  EXPECT_EQ(m.command, "./build/sendrecv_perf -b 128M -e 1G -f 2 -g 8");
}

TEST(NcclTestsReader, AnnotatedAlgoSweep) {
  const MeasurementFile m =
      read("h100x4_1node_allreduce_algosweep-Ring-Tree-NVLS_waynehacking8.txt");
  EXPECT_EQ(algos(m), (std::vector<std::string>{"Ring", "Ring", "Ring", "Tree", "Tree", "Tree",
                                                "NVLS", "NVLS", "NVLS"}));
  EXPECT_EQ(m.rows[0].labels.at("size"), "268435456");
  EXPECT_EQ(m.rows[0].line, 7);
  EXPECT_EQ(m.rows[6].line, 25);
  // Nothing states the rank count; busbw / algbw = 1.5 = 2(n-1)/n only for n = 4.
  for (const MeasurementRow& r : m.rows) {
    EXPECT_EQ(r.ranks, 4);
    EXPECT_EQ(r.ranks_source, RanksSource::kBusbwRatio);
    EXPECT_FALSE(r.proto_override.has_value());
  }
  EXPECT_EQ(m.avg_busbw_GBps.size(), 9u);
  EXPECT_TRUE(m.warnings.empty());
}

TEST(NcclTestsReader, AnnotatedProtoSweep) {
  const MeasurementFile m =
      read("h100x4_1node_allreduce_protosweep-Simple-LL-LL128_waynehacking8.txt");
  ASSERT_EQ(m.rows.size(), 3u);
  EXPECT_EQ(m.rows[0].proto_override, "Simple");
  EXPECT_EQ(m.rows[1].proto_override, "LL");
  EXPECT_EQ(m.rows[2].proto_override, "LL128");
  EXPECT_FALSE(m.rows[2].algo_override.has_value());
}

TEST(NcclTestsReader, GpuCountLabels) {
  const MeasurementFile m = read("h100x2-4-6_1node_allreduce_gpu-scaling_waynehacking8.txt");
  ASSERT_EQ(m.rows.size(), 18u);
  for (std::size_t i = 0; i < m.rows.size(); ++i) {
    EXPECT_EQ(m.rows[i].ranks, 2 * static_cast<int>(i / 6 + 1)) << i;
    EXPECT_EQ(m.rows[i].ranks_source, RanksSource::kLabel);
  }
  EXPECT_EQ(m.ranks, 0);  // varies
}

TEST(NcclTestsReader, AlgorithmFromEnvironment) {
  const MeasurementFile m = read(
      "h100x16_2node_allreduce_ib-400G_NCCL_ALGO-Ring_MIN_CTAS24-QPS2_nccl-tests-issue309-"
      "gjaion.txt");
  EXPECT_EQ(m.env.at("NCCL_ALGO"), "Ring");
  EXPECT_EQ(m.env.at("NCCL_MIN_CTAS"), "24");
  for (const MeasurementRow& r : m.rows) EXPECT_EQ(r.algo_override, "Ring");
  // "mpirun -np 16 -N 8 ...": 16 processes, 8 per node.
  EXPECT_EQ(m.rows[0].ranks_source, RanksSource::kLaunch);
  EXPECT_EQ(m.nodes, 2);
}

// NCCL_NVLS_ENABLE=0 turns NVLS and NVLSTree off whatever NCCL_ALGO says: the rows' algorithm
// filter leaves them out (a list keeps its other entries, a negated list or none negates them).
TEST(NcclTestsReader, NvlsDisabledByTheEnvironment) {
  const auto filter = [](const std::string& env) {
    const MeasurementFile m = parse_measurements(
        "# env: " + env +
            "\n# Collective test starting: all_reduce_perf\n"
            "  1048576  262144  float  sum  -1  10.00  104.86  196.61  0  10.00  104.86  "
            "196.61  0\n",
        "nvls.txt");
    return m.rows.at(0).algo_override.value_or("-");
  };
  EXPECT_EQ(filter("NCCL_NVLS_ENABLE=0"), "^NVLS,NVLSTree");
  EXPECT_EQ(filter("NCCL_NVLS_ENABLE=0 NCCL_ALGO=Ring,NVLS,nvls_tree"), "Ring");
  EXPECT_EQ(filter("NCCL_NVLS_ENABLE=0 NCCL_ALGO=^Tree"), "^Tree,NVLS,NVLSTree");
  EXPECT_EQ(filter("NCCL_NVLS_ENABLE=1"), "-");
  // OCI's two GB200 racks ran with NCCL_NVLS_ENABLE=0 (its manifest's env).
  const MeasurementFile gb200 =
      read("gb200x128_32node-2rack_allreduce_oci-bm-gpu-gb200-v3.4-mnnvl-roce_oci-hpc-oke.txt");
  for (const MeasurementRow& r : gb200.rows) EXPECT_EQ(r.algo_override, "^NVLS,NVLSTree");
}

TEST(NcclTestsReader, EnvironmentRemarksAndLauncherLines) {
  const MeasurementFile m =
      read("a100x16_2node_allreduce_oci-bm-gpu4.8-roce-16x100G_ocitutorials.txt");
  // "# env:" first (with the curator's elision), then the echoed command's "-x" adds the rest.
  EXPECT_EQ(m.env.at("NCCL_IB_HCA"), "mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_6,...,mlx5_17");
  EXPECT_EQ(m.env.at("UCX_NET_DEVICES"), "mlx5_0:1");
  EXPECT_EQ(m.env.size(), 2u);
  EXPECT_EQ(m.skipped_lines, 2);  // the "> mpirun" echo and ssh's warning
  const std::string path =
      kDir + "a100x16_2node_allreduce_oci-bm-gpu4.8-roce-16x100G_ocitutorials.txt";
  EXPECT_EQ(m.warnings,
            std::vector<std::string>{
                path + ":9: skipped a line that is neither nccl-tests nor NCCL output: "
                       "\"Warning: Permanently added '[inst-6ejzf-comp]:12345,[10.0.2..."
                       ".\""});

  const MeasurementFile g =
      read("gb200x128_32node-2rack_allreduce_oci-bm-gpu-gb200-v3.4-mnnvl-roce_oci-hpc-oke.txt");
  // A leading "(from manifests/...)" remark is skipped; "NCCL_IB_HCA==..." keeps its '='.
  EXPECT_EQ(g.env.at("NCCL_NVLS_ENABLE"), "0");
  EXPECT_EQ(g.env.at("NCCL_IB_HCA"), "=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_5,mlx5_6,mlx5_7,mlx5_8");
  EXPECT_EQ(g.env.size(), 15u);
  // Only "Rank 127" is printed: at least 128 ranks, and busbw / algbw pins exactly 128. The
  // hosts of a partial listing are not the nodes.
  EXPECT_EQ(g.devices.size(), 1u);
  EXPECT_EQ(g.rows.back().ranks, 128);
  EXPECT_EQ(g.rows.back().ranks_source, RanksSource::kBusbwRatio);
  EXPECT_EQ(g.nodes, 0);
}

TEST(NcclTestsReader, RanksInferredFromBusbw) {
  // One process per node with -g 8, but "mpirun ..." names no process count.
  const MeasurementFile h =
      read("h200x16_2node_allreduce_dell-xe9680-spectrumx-roce-8x400G_openshift-spx-doc.txt");
  EXPECT_EQ(h.run.gpus_per_thread, 8);
  EXPECT_EQ(h.rows.back().ranks_source, RanksSource::kBusbwRatio);
  EXPECT_EQ(h.ranks, 16);
}

TEST(NcclTestsReader, CollectiveFromOption) {
  const std::string path = COLLSIM_SOURCE_DIR "/tests/data/nccl-tests-bad/no-collective.txt";
  const MeasurementFile m = read_measurements(path, {.collective = Collective::kAllReduce});
  EXPECT_EQ(m.collective, Collective::kAllReduce);
  EXPECT_EQ(m.collective_source, "--op");
  ASSERT_EQ(m.rows.size(), 5u);
  // Rows of 8 to 128 B print algbw 0.00: nothing pins the rank count.
  EXPECT_EQ(m.rows[0].ranks, 0);
  EXPECT_EQ(m.rows[0].ranks_source, RanksSource::kUnknown);
  // The printed average covers the 31 rows of the original file, not these 5.
  EXPECT_EQ(m.warnings,
            std::vector<std::string>{path + ":11: \"# Avg bus bandwidth\" 57.1241 does not match "
                                            "the mean busbw 0.002 of the 10 values above (rows "
                                            "left out of the file?)"});
}

TEST(NcclTestsReader, AllToAllNamesAndFactor) {
  const MeasurementFile m =
      read("a100pcie_x2_2node_alltoall_ib-hdr-1nic-ib-gdr-on_thomaslie210.txt");
  // Line 18: "2122317824 265289728 float none -1 110912 19.14 9.57 0 91318.2 23.24 11.62 N/A".
  const MeasurementRow& r = m.rows[2];
  EXPECT_EQ(r.line, 18);
  EXPECT_EQ(r.redop, "none");
  EXPECT_FALSE(r.reduce_op.has_value());
  EXPECT_DOUBLE_EQ(r.time_us, 110912);
  EXPECT_DOUBLE_EQ(r.busbw_GBps, 9.57);
  EXPECT_EQ(r.inplace_busbw_GBps, 11.62);
}

// A log as Open MPI tags it, with other ranks' NCCL output between the table lines.
const char* kTaggedLog = R"(
[1,0]<stdout>:# nThread 1 nGpus 1 minBytes 1024 maxBytes 2048 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
[1,0]<stdout>:#  Rank  0 Group  0 Pid 11 on nodeA device  0 [0x10] NVIDIA A100-SXM4-80GB
[1,1]<stdout>:nodeB:12:12 [0] NCCL INFO NCCL version 2.18.5+cuda12.2
[1,0]<stdout>:#  Rank  1 Group  0 Pid 12 on nodeB device  0 [0x10] NVIDIA A100-SXM4-80GB
[1,1]<stderr>:some warning on stderr
[1,0]<stdout>:#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
[1,0]<stdout>:        1024           256     float     sum      -1    20.00    0.05    0.05      0    20.00    0.05    0.05      3
[1,1]<stdout>:nodeB:12:30 [0] NCCL INFO comm 0x5 rank 1 nranks 2 - Destroy COMPLETE
[1,0]<stdout>:        2048           512     float     sum      -1    20.48    0.10    0.10      0    20.48    0.10    0.10      0
[1,0]<stdout>:# Out of bounds values : 3 FAILED
[1,0]<stdout>:# Avg bus bandwidth    : 0.075
)";

TEST(NcclTestsReader, TaggedLogWithInterleavedOutput) {
  const MeasurementFile m =
      parse_measurements(kTaggedLog, "log.txt", {.collective = Collective::kAllReduce});
  ASSERT_EQ(m.rows.size(), 2u);
  EXPECT_EQ(m.rows[1].line, 10);
  EXPECT_EQ(m.rows[0].ranks, 2);
  EXPECT_EQ(m.nodes, 2);
  EXPECT_EQ(m.gpu_names, std::vector<std::string>{"NVIDIA A100-SXM4-80GB"});
  EXPECT_EQ(m.nccl_version, "2.18.5");  // from the other rank's INFO line
  EXPECT_EQ(m.skipped_lines, 3);
  // A stderr line is read like any other: this one is neither nccl-tests nor NCCL output.
  EXPECT_EQ(m.warnings,
            (std::vector<std::string>{
                "log.txt:6: skipped a line that is neither nccl-tests nor NCCL output: \"some "
                "warning on stderr\"",
                "log.txt:8: in-place #wrong = 3: nccl-tests found wrong results",
                "log.txt:11: nccl-tests: Out of bounds values : 3 FAILED"}));
}

TEST(NcclTestsReader, SrunLabelsAndVersionCodes) {
  const MeasurementFile m = parse_measurements(
      "0: # nccl-tests version 2.13.8 nccl-headers=21903 nccl-library=21805\n"
      "0: # Collective test starting: broadcast_perf\n"
      "0:      1048576   262144  float  none   0   10.00  104.86  104.86  0   10.00  104.86  "
      "104.86  0\n",
      "srun.txt");
  EXPECT_EQ(m.collective, Collective::kBroadcast);
  EXPECT_EQ(m.nccl_version, "2.18.5");  // the library that ran, not the headers
  EXPECT_EQ(m.rows[0].root, 0);
  EXPECT_EQ(m.rows[0].ranks, 0);  // Broadcast's busbw says nothing about the rank count
}

// nccl-tests 2.19 with -I 1 -S 1: each group closes with the per-iteration summary and the row
// with a timestamp; the summary is checked as numbers and the row's time is the mean as before.
// With -C 1 the time columns are the host's CPU time: refused, saying so.
TEST(NcclTestsReader, PerIterationSummaryAndTimestamp) {
  const std::string header =
      "# nccl-tests version 2.19.6 nccl-headers=22902 nccl-library=22902\n"
      "# Collective test starting: all_reduce_perf\n"
      "# nThread 1 nGpus 8 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 "
      "iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0\n"
      "# Per-Iteration Report: CUDA event timing; i_* uses max over process rows \n"
      "#\n";
  const std::string columns =
      "#       size         count      type   redop    root     time   algbw   busbw  #wrong"
      "    i_min    i_max    i_p99    i_cv%     time   algbw   busbw  #wrong    i_min    i_max"
      "    i_p99    i_cv%           timestamp\n";
  const MeasurementFile m = parse_measurements(
      header + columns +
          "     1048576        262144     float     sum      -1    41.45   25.30   44.27       0"
          "    40.10    48.20    48.20     3.21    41.20   25.45   44.54       0    40.02    "
          "47.90    47.90     3.05  2026-11-28 11:02:03\n"
          "     2097152        524288     float     sum      -1    43.34   48.39   84.68       0"
          "    42.90    45.10    45.10     1.02    43.10   48.66   85.15       0    42.80    "
          "44.70    44.70     0.98  2026-11-28 11:02:04\n",
      "periter.txt");
  ASSERT_EQ(m.rows.size(), 2u);
  EXPECT_DOUBLE_EQ(m.rows[0].time_us, 41.45);
  EXPECT_EQ(m.rows[0].inplace_time_us, 41.20);
  EXPECT_TRUE(m.warnings.empty());
  EXPECT_EQ(m.rows[1].inplace_busbw_GBps, 85.15);
  EXPECT_EQ(m.rows[1].ranks, 8);
  EXPECT_EQ(m.rows[1].line, 8);

  // nccl-tests -z 1: the rows time a wait after every iteration, which is said.
  const MeasurementFile blocking = parse_measurements(
      "# Blocking Enabled: wait and barrier after each inner iteration (-m) \n" + header + columns +
          "     1048576        262144     float     sum      -1    41.45   25.30   44.27       0"
          "    40.10    48.20    48.20     3.21    41.20   25.45   44.54       0    40.02    "
          "47.90    47.90     3.05  2026-11-28 11:02:03\n",
      "blocking.txt");
  ASSERT_EQ(blocking.warnings.size(), 1u);
  EXPECT_TRUE(blocking.warnings[0].starts_with(
      "blocking.txt:1: nccl-tests: Blocking Enabled: wait and barrier after each inner iteration "
      "(-m): the rows time a wait after every iteration"))
      << blocking.warnings[0];

  try {
    parse_measurements(header + columns +
                           "     1048576        262144     float     sum      -1    41.45   "
                           "25.30   44.27       0    40.10    48.20      n/a     3.21    41.20 "
                           "  25.45   44.54       0    40.02    47.90    47.90     3.05  "
                           "2026-11-28 11:02:03\n",
                       "bad.txt");
    FAIL() << "a summary that is not a number was read";
  } catch (const MeasurementError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.txt:7: out-of-place i_p99"), std::string::npos)
        << e.what();
  }
  try {
    parse_measurements(
        header +
            "#       size         count      type   redop    root  cputime   algbw   busbw  "
            "#wrong  cputime   algbw   busbw  #wrong\n",
        "cpu.txt");
    FAIL() << "a cputime table was read";
  } catch (const MeasurementError& e) {
    EXPECT_NE(std::string(e.what()).find("cpu.txt:6: the table reports cputime (nccl-tests -C 1)"),
              std::string::npos)
        << e.what();
  }
}

// nccl-tests' JSON report (-J run.json), one line as nccl-tests writes it: the program in "args"
// names the collective, the processes in "config.devices" times nthreads x ngpus the ranks,
// "nccl_version" the release, the NCCL_* entries of "env" the overrides; a row's line is its
// position in "results".
TEST(NcclTestsReader, JsonReport) {
  const auto report = [](const std::string& time_key, const std::string& second_size) {
    return R"({"version":3,"args":["/opt/nccl-tests/build/all_reduce_perf","-g","1","-J","r.json"],)"
           R"("env":["PATH=/usr/bin","NCCL_PROTO=Simple","NCCL_SOCKET_IFNAME=eth0"],)"
           R"("nccl_version":22902,"config":{"nthreads":1,"ngpus":1,"minimum_bytes":1048576,)"
           R"("maximum_bytes":2097152,"step_factor":2,"warmup_iters":5,"iterations":20,)"
           R"("aggregated_iterations":1,"validation":1,"graph":0,"devices":[)"
           R"({"rank":0,"group":0,"pid":11,"hostname":"a","device":0,"device_hex":"0000:18:00",)"
           R"("device_info":"NVIDIA H100 80GB HBM3"},)"
           R"({"rank":1,"group":0,"pid":12,"hostname":"b","device":0,"device_hex":"0000:18:00",)"
           R"("device_info":"NVIDIA H100 80GB HBM3"}]},"results":[)"
           R"({"size":1048576,"count":262144,"type":"float","redop":"sum","root":"    -1",)"
           R"("out_of_place":{")" +
           time_key +
           R"(":41.450000,"alg_bw":25.297103,"bus_bw":25.297103,"nwrong":0.000000},)"
           R"("in_place":{"time":41.200000,"alg_bw":25.450602,"bus_bw":25.450602,)"
           R"("nwrong":null}},)"
           R"({"size":)" +
           second_size +
           R"(,"count":524288,"type":"float","redop":"sum","root":"    -1",)"
           R"("out_of_place":{"time":43.340000,"alg_bw":48.388371,"bus_bw":48.388371,)"
           R"("nwrong":0.000000},"in_place":{"time":43.100000,"alg_bw":48.657819,)"
           R"("bus_bw":48.657819,"nwrong":0.000000}}]})";
  };
  const MeasurementFile m = parse_measurements(report("time", "2097152"), "r.json");
  EXPECT_EQ(m.collective, Collective::kAllReduce);
  EXPECT_EQ(m.nccl_version, "2.29.2");
  EXPECT_EQ(m.env.at("NCCL_PROTO"), "Simple");
  EXPECT_EQ(m.run.gpus_per_thread, 1);
  ASSERT_EQ(m.rows.size(), 2u);
  EXPECT_EQ(m.rows[1].line, 2);
  EXPECT_EQ(m.rows[1].bytes, 2097152u);
  EXPECT_DOUBLE_EQ(m.rows[1].time_us, 43.34);
  EXPECT_EQ(m.rows[0].ranks, 2);  // two processes of one GPU each
  EXPECT_EQ(m.rows[0].wrong, 0);
  EXPECT_FALSE(m.rows[0].inplace_wrong.has_value());  // null: not checked
  EXPECT_EQ(m.rows[0].proto_override, "Simple");
  ASSERT_EQ(m.devices.size(), 2u);
  EXPECT_EQ(m.devices[1].host, "b");

  const auto error = [](const std::string& text) {
    try {
      parse_measurements(text, "r.json");
    } catch (const MeasurementError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error(report("cpu_time", "2097152")),
            "r.json:1: the report holds cpu_time (nccl-tests -C 1), the host's time per "
            "iteration, not the collective's; expected time: rerun without -C");
  // The second result's size does not match its count and time: the table's own check, at the
  // result's position.
  EXPECT_NE(error(report("time", "4194304")).find("r.json:2: "), std::string::npos)
      << error(report("time", "4194304"));
  EXPECT_EQ(error(R"({"version":3,"results":[)"),
            "r.json: not valid JSON (byte 25); expected nccl-tests' -J report");
  EXPECT_EQ(error(R"({"version":3})"),
            "r.json: a JSON document without a \"results\" list; expected nccl-tests' -J report");
}

TEST(NcclTestsReader, AllGatherRanksFromSizeAndCount) {
  const MeasurementFile m = parse_measurements(
      "# Collective test starting: all_gather_perf\n"
      "  1048576  32768  float  none  -1  10.00  104.86  91.75  0  10.00  104.86  91.75  0\n",
      "ag.txt");
  EXPECT_EQ(m.rows[0].ranks, 8);  // 1048576 B / (32768 x 4 B)
  EXPECT_EQ(m.rows[0].ranks_source, RanksSource::kSizeCount);
}

TEST(NcclTestsReader, RootedCollectives) {
  // Reduce: busbw = algbw, root printed. Gather: size = count x 4 B x 4 ranks, busbw x 3/4.
  const MeasurementFile r = parse_measurements(
      "# Collective test starting: reduce_perf\n"
      "  1048576  262144  float  sum  2  10.00  104.86  104.86  0  10.00  104.86  104.86  0\n",
      "reduce.txt");
  EXPECT_EQ(r.collective, Collective::kReduce);
  EXPECT_EQ(r.rows[0].root, 2);
  const MeasurementFile g = parse_measurements(
      "# command: mpirun -np 4 ./gather_perf -g 1\n"
      "  1048576  65536  float  none  0  10.00  104.86  78.64  0  10.00  104.86  78.64  0\n",
      "gather.txt");
  EXPECT_EQ(g.collective, Collective::kGather);
  EXPECT_EQ(g.rows[0].ranks, 4);
  EXPECT_EQ(g.rows[0].ranks_source, RanksSource::kLaunch);
  EXPECT_EQ(g.nodes, 0);  // four processes, hosts not named
}

TEST(NcclTestsReader, CollsimBannerSpelling) {
  // `collsim bench` prints nccl-tests' table; its banner may use collsim's name for the op.
  const MeasurementFile m = parse_measurements(
      "# Collective test starting: scatter\n"
      "  1048576  32768  float  none  0  10.00  104.86  91.75  0  10.00  104.86  91.75  0\n",
      "bench.txt");
  EXPECT_EQ(m.collective, Collective::kScatter);
  EXPECT_EQ(m.collective_source, "scatter at line 1");
  EXPECT_EQ(m.rows[0].ranks, 8);
}

TEST(NcclTestsReader, PartialRankListing) {
  // Rows too small for busbw to pin n: the highest listed rank + 1 is all there is.
  const MeasurementFile m = parse_measurements(
      "# Collective test starting: all_reduce_perf\n"
      "#  Rank  3 Group  0 Pid 9 on h2 device  3 [0x1b] NVIDIA H100\n"
      "   8  2  float  sum  -1  30.00  0.00  0.00  0  30.00  0.00  0.00  0\n",
      "partial.txt");
  EXPECT_EQ(m.rows[0].ranks, 4);
  EXPECT_EQ(m.rows[0].ranks_source, RanksSource::kRankLines);
  EXPECT_EQ(m.nodes, 0);
}

TEST(NcclTestsReader, UnknownTypeKeptAsText) {
  const MeasurementFile m = parse_measurements(
      "# Collective test starting: all_reduce_perf\n"
      "  1048576  1048576  f4e2m1  mulsum  -1  10.00  104.86  104.86  0  10.00  104.86  104.86  "
      "0\n",
      "f4.txt");
  EXPECT_EQ(m.rows[0].dtype, "f4e2m1");
  EXPECT_FALSE(m.rows[0].data_type.has_value());
  EXPECT_EQ(m.rows[0].redop, "mulsum");
  EXPECT_FALSE(m.rows[0].reduce_op.has_value());
  EXPECT_EQ(m.rows[0].ranks, 2);  // busbw = algbw x 2(n-1)/n = algbw
}

TEST(NcclTestsReader, ManyUnrecognisedLinesAreSummarised) {
  std::string text = "# Collective test starting: sendrecv_perf\n";
  for (int i = 0; i < 7; ++i) text += "junk line\n";
  text += "  1024  256  float  sum  -1  10.00  0.10  0.10  0  10.00  0.10  0.10  0\n";
  const MeasurementFile m = parse_measurements(text, "j.txt");
  ASSERT_EQ(m.warnings.size(), 6u);
  EXPECT_EQ(m.warnings[0],
            "j.txt:2: skipped a line that is neither nccl-tests nor NCCL output: "
            "\"junk line\"");
  EXPECT_EQ(m.warnings[5], "j.txt: 2 more lines skipped as above");
}

}  // namespace
}  // namespace collsim
