// `collsim import` end to end: real published samples of NCCL's topology dump and of
// `nvidia-smi topo -m` (tests/data/import/README.md) become configs that `collsim topo` prints
// and that predict what the equivalent preset predicts.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/cli/run_collsim.hpp"

namespace collsim::test {
namespace {

const std::string kData = COLLSIM_SOURCE_DIR "/tests/data/import/";
const std::string kDump = kData + "ibm-gx3d-h100-nccl-topo.xml";
const std::string kSmi = kData + "h100x8-nvidia-smi-topo.txt";
const std::string kOut = COLLSIM_BINARY_DIR "/import_test_";

double time_us(const std::string& config_and_options, const std::string& op,
               const std::string& bytes) {
  const CommandResult r = run_collsim("predict " + config_and_options + " --op " + op +
                                      " --bytes " + bytes + " --format csv");
  EXPECT_EQ(r.status, 0) << r.err;
  // The last line's time_us, the 9th column (docs/cli.md "Output").
  std::string row = r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1);
  std::stringstream cells(row);
  std::string cell;
  for (int i = 0; i < 9; ++i) std::getline(cells, cell, ',');
  return std::stod(cell);
}

struct Case {
  const char* op;
  const char* bytes;
};
// Every collective at an LL and an LL128/Simple size, and one large AllReduce (each prediction
// also times NCCL's other candidates, so the list stays short).
const std::vector<Case> kOneNode = {
    {"allreduce", "64K"}, {"allreduce", "16M"},     {"allreduce", "256M"},    {"allgather", "64K"},
    {"allgather", "16M"}, {"reducescatter", "64K"}, {"reducescatter", "16M"}, {"broadcast", "64K"},
    {"broadcast", "16M"}, {"alltoall", "64K"},      {"alltoall", "16M"}};
const std::vector<Case> kTwoNodes = {
    {"allreduce", "1M"}, {"allreduce", "256M"}, {"allgather", "16M"}};

void expect_within_one_percent(const std::string& imported, const std::string& preset, int nodes,
                               const std::vector<Case>& cases) {
  // Presets take the default costs (Presets.NoPresetShipsFittedCosts), as an imported config does.
  const std::string n = " --nodes " + std::to_string(nodes);
  for (const Case& c : cases) {
    const double want = time_us(preset + n, c.op, c.bytes);
    const double got = time_us(imported + n, c.op, c.bytes);
    EXPECT_NEAR(got, want, 0.01 * want) << c.op << " " << c.bytes << " on " << nodes << " node(s)";
  }
}

TEST(ImportCommand, NcclTopologyDumpBecomesAConfigTopoPrints) {
  const std::string yaml = kOut + "dump.yaml";
  const CommandResult r = run_collsim("import " + kDump + " -o " + yaml);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  const CommandResult t = run_collsim("topo " + yaml);
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_NE(t.out.find("nodes      1 x 8 H100-SXM (sm90) = 8 GPUs"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("8 gpu, 1 nvswitch, 8 pcie_switch, 2 cpu, 8 nic"), std::string::npos)
      << t.out;
  EXPECT_NE(t.out.find("nvswitch         8        450 GB/s"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("25 GB/s (200 Gbps) per GPU"), std::string::npos) << t.out;
}

TEST(ImportCommand, NcclTopologyDumpPredictsAsTheDgxH100PresetWithinOnePercent) {
  // The IBM node is an HGX H100 like the DGX H100 (18 NVLinks per GPU to NVSwitches, Sapphire
  // Rapids, Gen5); its NICs are 200G rather than 400G, so only one node is compared.
  const std::string yaml = kOut + "dump.yaml";
  ASSERT_EQ(run_collsim("import " + kDump + " -o " + yaml).status, 0);
  expect_within_one_percent(yaml, "dgx-h100", 1, kOneNode);
}

TEST(ImportCommand, NvidiaSmiTopoPredictsAsTheDgxH100PresetWithinOnePercent) {
  const std::string yaml = kOut + "smi.yaml";
  const CommandResult r = run_collsim("import " + kSmi + " --nic-bandwidth 400Gbps -o " + yaml);
  ASSERT_EQ(r.status, 0) << r.err;
  const CommandResult t = run_collsim("topo " + yaml);
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_NE(t.out.find("8 gpu, 1 nvswitch, 4 pcie_switch, 2 cpu, 8 nic"), std::string::npos)
      << t.out;
  // Same NVLink, switches, rails and NIC speed as the preset: across nodes too.
  expect_within_one_percent(yaml, "dgx-h100", 1, kOneNode);
  expect_within_one_percent(yaml, "dgx-h100", 2, kTwoNodes);
}

TEST(ImportCommand, WritesTheYamlToStandardOutputWithItsSources) {
  const CommandResult r = run_collsim("import " + kSmi + " --nic-bandwidth 400Gbps --name lab");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("name: lab\n"), std::string::npos);
  EXPECT_NE(
      r.out.find("#   assumed: NICs under no GPU's switch left out: NIC8, NIC9, NIC10, NIC11"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("      - {gpus: [0, 1], nics: [0, 1]}\n"), std::string::npos) << r.out;
}

TEST(ImportCommand, SaysWhatIsMissing) {
  CommandResult r = run_collsim("import " + kSmi);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "collsim: " + kSmi +
                       ": `nvidia-smi topo -m` gives no NIC speeds: pass --nic-bandwidth (e.g. "
                       "400Gbps) for NIC0, NIC1, NIC2, NIC3, NIC4, NIC5, NIC6, NIC7\n");
  // No NVLink to tell the GPU model by: between 8 GPUs, or on one (the H100 machine of
  // docs/gpu.md).
  for (const auto& [file, why] :
       {std::pair<std::string, std::string>{"rtx4090x8-nvidia-smi-topo.txt",
                                            "no NVLink between the GPUs"},
        {"h100x1-vm-nvidia-smi-topo.txt", "one GPU and no NVLink"}}) {
    r = run_collsim("import " + kData + file);
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, "collsim: " + kData + file + ": " + why +
                         ", so the model cannot be told: name it with --gpu (e.g. --gpu "
                         "H100-PCIe)\n");
  }
  r = run_collsim("import " + std::string(COLLSIM_SOURCE_DIR) + "/configs/dgx-h100.yaml");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("neither NCCL's topology dump"), std::string::npos) << r.err;
  r = run_collsim("import - --nic-bandwidth 400Gbps < " + kSmi);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("name: imported\n"), std::string::npos);
  r = run_collsim("import /nonexistent.xml");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "collsim: /nonexistent.xml: cannot open the file\n");
}

}  // namespace
}  // namespace collsim::test

namespace collsim::test {
namespace {

TEST(NcclLogOption, SetsWhatNcclChoseAsNcclGraphWould) {
  const std::string log = kData + "nccl-1189-h20-graph.log";
  for (const char* bytes : {"64K", "64M"}) {
    const std::string common =
        std::string(
            "predict dgx-h100 --op allreduce --algo ring --model nccl --format csv --bytes ") +
        bytes;
    const CommandResult from_log = run_collsim(common + " --nccl-log " + log);
    const CommandResult given = run_collsim(common + " --nccl-graph ring=4x24/24");
    const CommandResult estimated = run_collsim(common);
    ASSERT_EQ(from_log.status, 0) << from_log.err;
    EXPECT_EQ(from_log.out, given.out);
    EXPECT_NE(from_log.out, estimated.out);  // the log changed NCCL's channels
  }
  const CommandResult bad = run_collsim("predict dgx-h100 --op allreduce --bytes 1M --nccl-log " +
                                        kData + "h100x8-nvidia-smi-topo.txt");
  EXPECT_EQ(bad.status, 1);
  EXPECT_EQ(bad.err, "collsim: " + kData +
                         "h100x8-nvidia-smi-topo.txt: no NCCL graph lines (\"NCCL INFO Pattern "
                         "...\"): run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH\n");
}

}  // namespace
}  // namespace collsim::test
