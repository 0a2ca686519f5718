// Every published table in tests/data/nccl-tests parses, with the row count INDEX.md gives, the
// first and last size, and what the file says about the run. These files are unedited published
// numbers, so they also show that the algbw / busbw / size checks accept real output.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "calibrate/nccl_tests_reader.hpp"

namespace collsim {
namespace {

const std::string kDir = COLLSIM_SOURCE_DIR "/tests/data/nccl-tests/";

struct Expected {
  std::string file;
  Collective collective;
  std::size_t rows;
  std::uint64_t first_bytes;
  std::uint64_t last_bytes;
  int ranks;  // 0: varies by row or not stated
  int nodes;  // 0: not stated in a form the reader trusts
  std::string nccl_version;  // printed by NCCL or nccl-tests, else the curated "# nccl:" line
  MeasurementFormat format;
  std::string gpu;  // first GPU name of the rank lines, "" without rank lines
  bool names_collective = true;  // false: no *_perf program named, read with --op (ReadOptions)
};

constexpr auto kAR = Collective::kAllReduce;
constexpr auto kAG = Collective::kAllGather;
constexpr auto kRS = Collective::kReduceScatter;
constexpr auto kA2A = Collective::kAllToAll;
constexpr auto kSR = Collective::kSendRecv;
constexpr auto kNew = MeasurementFormat::kNcclTests;
const std::string kH100 = "NVIDIA H100 80GB HBM3";

const std::vector<Expected> kFiles = {
    {"a100pcie_x2_2node_allreduce-1M-1G_ib-hdr-1nic-ib-gdr-on_thomaslie210.txt", kAR, 103, 1048576,
     1070596096, 2, 2, "2.16.5", kNew, "NVIDIA A100-PCIE-40GB"},
    {"a100pcie_x2_2node_allreduce_ib-hdr-1nic-ib-gdr-on_thomaslie210.txt", kAR, 23, 1073741824,
     12608077824, 2, 2, "2.16.5", kNew, "NVIDIA A100-PCIE-40GB"},
    {"a100pcie_x2_2node_alltoall_ib-hdr-1nic-ib-gdr-on_thomaslie210.txt", kA2A, 23, 1073741824,
     12608077824, 2, 2, "2.16.5", kNew, "NVIDIA A100-PCIE-40GB"},
    {"a100x16_2node_allreduce_aws-p4d-efa-4x100G_aws-efa-eks.txt", kAR, 30, 8, 4294967296, 16, 2,
     "2.9.9", MeasurementFormat::kNcclTestsOld, "A100-SXM4-40GB"},
    {"a100x16_2node_allreduce_azure-ndv4-ND96asr_v4-8xHDR200_jingchaozhang-aml.txt", kAR, 31, 8,
     8589934592, 16, 0, "", kNew, ""},
    {"a100x16_2node_allreduce_oci-bm-gpu4.8-roce-16x100G_ocitutorials.txt", kAR, 28, 64, 8589934592,
     16, 2, "", kNew, "NVIDIA A100-SXM4-40GB"},
    {"a100x16_2node_allreduce_oci-bm-gpu4.8-roce-16x100G-nccl2.15.5_ocitutorials.txt", kAR, 1,
     10737418240, 10737418240, 16, 2, "2.15.5", kNew, "NVIDIA A100-SXM4-40GB"},
    {"a100x16_2node_allgather_alcf-sophia-dgx-a100-8xHDR200.txt", kAG, 29, 0, 1073741824, 16, 2,
     "2.22.3", kNew, "NVIDIA A100-SXM4-40GB"},
    {"a100x16_2node_allreduce_alcf-sophia-dgx-a100-8xHDR200.txt", kAR, 29, 4, 1073741824, 16, 2,
     "2.22.3", kNew, "NVIDIA A100-SXM4-40GB"},
    {"a100x4_1node_allreduce_1proc-g4_sheffield-stanage.txt", kAR, 25, 8, 134217728, 4, 1,
     "2.12.12", kNew, "NVIDIA A100-SXM4-80GB"},
    {"a100x8_1node_allreduce_1proc-g8-nccl2.19.3_dkh-notes.txt", kAR, 25, 8, 134217728, 8, 1,
     "2.19.3", kNew, ""},
    {"a100x8_1node_allreduce_1proc-g8_thanos-notes.txt", kAR, 30, 8, 4294967296, 8, 1, "", kNew,
     ""},
    {"a100x8_1node_allreduce_8proc_thanos-notes.txt", kAR, 30, 8, 4294967296, 8, 1, "", kNew, ""},
    {"a100x8_1node_allreduce_oci-bm-gpu4.8_ocitutorials.txt", kAR, 28, 64, 8589934592, 8, 1, "",
     kNew, "NVIDIA A100-SXM4-40GB"},
    {"a100x8_1node_sendrecv_li-plus-playground.txt", kSR, 4, 134217728, 1073741824, 8, 1, "", kNew,
     ""},
    {"b200x16_2node_allreduce_lambda-1cc-ib_dstack.txt", kAR, 29, 8, 2147483648, 16, 0, "2.26.2",
     kNew, ""},
    {"b200x8_1node_allgather_vultr-hgx-b200.txt", kAG, 32, 0, 17179869184, 8, 0, "", kNew, "",
     false},
    {"b200x8_1node_allreduce_vultr-hgx-b200.txt", kAR, 32, 8, 17179869184, 8, 0, "", kNew, "",
     false},
    {"b200x8_1node_reducescatter_vultr-hgx-b200.txt", kRS, 32, 0, 17179869184, 8, 0, "", kNew, "",
     false},
    {"gb200x72_18node-nvl72_allreduce_coreweave.txt", kAR, 5, 536870912, 8589934592, 72, 0,
     "2.26.2", kNew, ""},
    {"gb200x128_32node-2rack_allreduce_oci-bm-gpu-gb200-v3.4-mnnvl-roce_oci-hpc-oke.txt", kAR, 33,
     8, 34359738368, 128, 0, "2.29.2", kNew, "NVIDIA GB200"},
    {"h100x16_2node_allreduce_aws-p5-efa-32x100G_keitaw.txt", kAR, 32, 8, 17179869184, 16, 2,
     "2.22.3", kNew, kH100},
    {"h100x16_2node_allreduce_dell-xe9680-ib-8x400G-nvls_nccl-tests-issue309.txt", kAR, 32, 8,
     17179869184, 16, 2, "2.26.2", kNew, ""},
    {"h100x16_2node_allreduce_ib-400G_NCCL_ALGO-Ring_MIN_CTAS24-QPS2_nccl-tests-issue309-gjaion."
     "txt",
     kAR, 14, 1048576, 8589934592, 16, 2, "", kNew, ""},
    {"h100x16_2node_allreduce_oci-bm-gpu-h100.8-roce_ocitutorials.txt", kAR, 5, 1073741824,
     17179869184, 16, 2, "2.21.5", kNew, kH100},
    {"h100x2-4-6_1node_allreduce_gpu-scaling_waynehacking8.txt", kAR, 18, 268435456, 8589934592, 0,
     1, "", kNew, ""},
    {"h100x32_4node_allreduce_voltagepark-ib-8x400G_vpbenchmarking.txt", kAR, 31, 8, 8589934592, 32,
     4, "2.24.3", kNew, ""},
    {"h100x4_1node_allgather_waynehacking8.txt", kAG, 31, 0, 8589934592, 4, 1, "2.29.2", kNew,
     kH100},
    {"h100x4_1node_allreduce_algosweep-Ring-Tree-NVLS_waynehacking8.txt", kAR, 9, 268435456,
     8589934592, 4, 0, "2.29.2", kNew, ""},
    {"h100x4_1node_allreduce_protosweep-Simple-LL-LL128_waynehacking8.txt", kAR, 3, 268435456,
     268435456, 4, 0, "2.29.2", kNew, ""},
    {"h100x4_1node_allreduce_small-msg_reg0_graph0_waynehacking8.txt", kAR, 22, 8, 16777216, 4, 1,
     "2.29.2", kNew, kH100},
    {"h100x4_1node_allreduce_small-msg_reg0_graph1_waynehacking8.txt", kAR, 22, 8, 16777216, 4, 1,
     "2.29.2", kNew, kH100},
    {"h100x4_1node_allreduce_small-msg_reg2_graph0_waynehacking8.txt", kAR, 22, 8, 16777216, 4, 1,
     "2.29.2", kNew, kH100},
    {"h100x4_1node_allreduce_waynehacking8.txt", kAR, 31, 8, 8589934592, 4, 1, "2.29.2", kNew,
     kH100},
    {"h100x4_1node_reducescatter_waynehacking8.txt", kRS, 31, 0, 8589934592, 4, 1, "2.29.2", kNew,
     kH100},
    {"h100x8_1node_allgather_xxrjun-cluster01.txt", kAG, 10, 33554432, 17179869184, 8, 1, "2.29.2",
     kNew, kH100},
    {"h100x8_1node_allreduce_NVLS_together.txt", kAR, 31, 8, 8589934592, 8, 1, "2.26.2", kNew,
     kH100},
    {"h100x8_1node_allreduce_xxrjun-cluster01.txt", kAR, 10, 33554432, 17179869184, 8, 1, "2.29.2",
     kNew, kH100},
    {"h100x8_1node_alltoall_xxrjun-cluster01.txt", kA2A, 10, 33554432, 17179869184, 8, 1, "2.29.2",
     kNew, kH100},
    {"h100x8_1node_reducescatter_xxrjun-cluster01.txt", kRS, 10, 33554432, 17179869184, 8, 1,
     "2.29.2", kNew, kH100},
    {"h100x8_1node_sendrecv_xxrjun-cluster01.txt", kSR, 10, 33554432, 17179869184, 8, 1, "2.29.2",
     kNew, kH100},
    {"h100x8_2node-4gpu_allgather_snellius-ib-4xNDR200_odissei.txt", kAG, 31, 0, 8589934592, 8, 2,
     "2.22.3", kNew, "NVIDIA H100"},
    {"h100x8_2node-4gpu_allreduce_snellius-ib-4xNDR200_odissei.txt", kAR, 31, 8, 8589934592, 8, 2,
     "2.22.3", kNew, "NVIDIA H100"},
    {"h100x8_2node-4gpu_reducescatter_snellius-ib-4xNDR200_odissei.txt", kRS, 31, 0, 8589934592, 8,
     2, "2.22.3", kNew, "NVIDIA H100"},
    {"h200x16_2node_allreduce_dell-xe9680-spectrumx-roce-8x400G_openshift-spx-doc.txt", kAR, 25,
     1024, 17179869184, 16, 0, "2.30.4", kNew, ""},
    {"rtx2080ti-x2_1node-pcie-noP2P_allgather_anthony-hoo-blog.txt", kAG, 28, 0, 1073741824, 2, 1,
     "", kNew, "NVIDIA GeForce RTX 2080 Ti"},
    {"rtx2080ti-x2_1node-pcie-noP2P_allreduce_anthony-hoo-blog.txt", kAR, 28, 8, 1073741824, 2, 1,
     "", kNew, "NVIDIA GeForce RTX 2080 Ti"},
    {"rtx4090x8_1node_allreduce_p2p-off-2x-epyc7542_chlc-blog.txt", kAR, 25, 8, 134217728, 8, 1, "",
     kNew, ""},
};

TEST(NcclTestsRealFiles, EveryFileHasExpectations) {
  std::set<std::string> expected;
  for (const Expected& e : kFiles) expected.insert(e.file);
  std::set<std::string> present;
  for (const auto& entry : std::filesystem::directory_iterator(kDir)) {
    if (entry.path().extension() == ".txt") present.insert(entry.path().filename().string());
  }
  EXPECT_EQ(present, expected);
}

TEST(NcclTestsRealFiles, ParseAsIndexSays) {
  for (const Expected& e : kFiles) {
    SCOPED_TRACE(e.file);
    if (!e.names_collective) {
      // The file names no *_perf program: it reads only with what --op says.
      EXPECT_THROW(read_measurements(kDir + e.file), MeasurementError);
    }
    ReadOptions op;
    if (!e.names_collective) op.collective = e.collective;
    const MeasurementFile m = read_measurements(kDir + e.file, op);
    EXPECT_EQ(m.collective, e.collective);
    ASSERT_EQ(m.rows.size(), e.rows);
    EXPECT_EQ(m.rows.front().bytes, e.first_bytes);
    EXPECT_EQ(m.rows.back().bytes, e.last_bytes);
    EXPECT_EQ(m.ranks, e.ranks);
    EXPECT_EQ(m.nodes, e.nodes);
    EXPECT_EQ(m.nccl_version, e.nccl_version);
    EXPECT_EQ(m.format, e.format);
    EXPECT_EQ(m.gpu_names.empty() ? "" : m.gpu_names.front(), e.gpu);
    for (const MeasurementRow& r : m.rows) {
      // Every row of a real file knows its rank count (by one route or another) and its type.
      EXPECT_GT(r.ranks, 0) << "line " << r.line;
      EXPECT_TRUE(r.data_type.has_value()) << "line " << r.line;
      EXPECT_TRUE(r.inplace_time_us.has_value()) << "line " << r.line;
    }
  }
}

}  // namespace
}  // namespace collsim
