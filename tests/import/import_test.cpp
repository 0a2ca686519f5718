// The importers on their own: what they read from NCCL's XML and nvidia-smi's matrix, and the
// precise errors for malformed input (each message pinned).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "import/nccl_graph_log.hpp"
#include "import/nccl_topology_xml.hpp"
#include "import/nvidia_smi_topo.hpp"
#include "import/xml.hpp"

namespace collsim {
namespace {

std::string data(const std::string& name) {
  std::ifstream in(COLLSIM_SOURCE_DIR "/tests/data/import/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

ImportOptions options(const std::string& nic_bandwidth, const std::string& gpu = "") {
  ImportOptions o;
  o.nic_bandwidth = nic_bandwidth;
  o.gpu_model = gpu;
  return o;
}

std::string import_error(const std::string& text, bool xml) {
  try {
    if (xml) {
      read_nccl_topology_xml(text, "t.xml", {});
    } else {
      read_nvidia_smi_topo(text, "t.txt", options("400Gbps"));
    }
  } catch (const ImportError& e) {
    return e.what();
  }
  return "no error";
}

TEST(NcclTopologyXml, ReadsTheIbmH100Dump) {
  const ImportedNode n = read_nccl_topology_xml(data("ibm-gx3d-h100-nccl-topo.xml"), "x", {});
  EXPECT_EQ(n.gpu_model, "H100-SXM");  // PCI device 0x2330
  EXPECT_EQ(n.gpus, 8);
  EXPECT_EQ(n.nvlink_fabric, "nvswitch");
  EXPECT_EQ(n.nvlink_links, 18);  // 5 + 5 + 4 + 4 to the four NVSwitches
  EXPECT_EQ(n.cpus, 2);
  EXPECT_EQ(n.smp_GBps, 22.0);   // Intel model 143: Sapphire Rapids
  EXPECT_EQ(n.pcie_GBps, 63.0);  // 32 GT/s
  ASSERT_EQ(n.switches.size(), 8u);
  EXPECT_EQ(n.switches[0].gpus, std::vector<int>{0});
  EXPECT_EQ(n.switches[0].nics, std::vector<int>{0});  // mlx5_7, renumbered by switch
  EXPECT_EQ(n.nics, 8);
  EXPECT_EQ(n.nic_Gbps, 200.0);
}

TEST(NcclTopologyXml, GpusFollowCudaDeviceOrderAndADirectMeshIsAMesh) {
  const std::string xml = R"(<system version="1">
  <cpu numaid="0" vendor="AuthenticAMD">
    <pci busid="0000:02:00.0" class="0x030200" device="0x2330" link_speed="32.0 GT/s PCIe" link_width="16">
      <gpu dev="1" sm="90" rank="1"><nvlink target="0000:01:00.0" count="6" tclass="0x030200"/></gpu>
    </pci>
    <pci busid="0000:01:00.0" class="0x030200" device="0x2330" link_speed="32.0 GT/s PCIe" link_width="16">
      <gpu dev="0" sm="90" rank="0"><nvlink target="0000:02:00.0" count="6" tclass="0x030200"/></gpu>
    </pci>
  </cpu>
</system>)";
  const ImportedNode n = read_nccl_topology_xml(xml, "x", {});
  EXPECT_EQ(n.nvlink_fabric, "mesh");
  EXPECT_EQ(n.nvlink_links, 6);
  EXPECT_EQ(n.nvlink_group, 2);
  EXPECT_TRUE(n.switches.empty());  // root ports
  EXPECT_EQ(n.smp_GBps, 16.0);      // AMD: NCCL's AMD_BW
}

// EFA devices (rdmap*, the efa driver's names) are kind efa; the plugin's reported latency is
// read from the dump, and in-order delivery taken from the GPU generation (an A100 instance is
// the first EFA generation: out of order). The YAML written loads.
TEST(NcclTopologyXml, ReadsEfaNicsAndThePluginLatency) {
  const std::string xml = R"(<system version="1">
  <cpu numaid="0" vendor="GenuineIntel" modelid="85">
    <pci busid="0000:10:00.0" class="0x060400" link_speed="16.0 GT/s PCIe" link_width="16">
      <pci busid="0000:10:1b.0" class="0x020000" link_speed="16.0 GT/s PCIe" link_width="16">
        <nic><net name="rdmap16s27" dev="0" speed="100000" port="1" latency="75.000000" gdr="1"/></nic>
      </pci>
      <pci busid="0000:10:1c.0" class="0x030200" device="0x20b0" link_speed="16.0 GT/s PCIe" link_width="16">
        <gpu dev="0" sm="80" rank="0"/>
      </pci>
    </pci>
  </cpu>
</system>)";
  const ImportedNode n = read_nccl_topology_xml(xml, "p4d.xml", {});
  EXPECT_EQ(n.nic_kind, "efa");
  ASSERT_TRUE(n.nic_in_order.has_value());
  EXPECT_FALSE(*n.nic_in_order);
  EXPECT_EQ(n.plugin_latency_us, 75.0);
  const std::string yaml = cluster_yaml(n);
  EXPECT_NE(yaml.find("    kind: efa\n    in_order: false\n    plugin_latency: 75us\n"),
            std::string::npos)
      << yaml;
  std::string bad = xml;
  bad.replace(bad.find("75.000000"), 9, "soon");
  EXPECT_EQ(import_error(bad, true),
            "t.xml:5:14: <net>: latency: expected a number of microseconds, got \"soon\"");
}

TEST(NcclTopologyXml, MalformedInputIsLocated) {
  EXPECT_EQ(import_error("<system>\n  <cpu numaid=\"0\">\n</system>", true),
            "t.xml:3:1: expected </cpu> closing <cpu> of line 2, got </system");
  EXPECT_EQ(import_error("<system>\n  <cpu numaid=0>", true),
            "t.xml:2:15: expected a quoted value, got \"0>\"");
  EXPECT_EQ(import_error("<system><cpu>", true), "t.xml:1:9: <cpu> is never closed (no </cpu>)");
  EXPECT_EQ(import_error("\tGPU0\tGPU1\n", true),
            "t.xml:1:2: expected an XML element ('<'), got \"GPU0\tGPU1\"");
  EXPECT_EQ(import_error("<system/> trailing", true),
            "t.xml:1:11: expected an XML element ('<'), got \"trailing\"");
  EXPECT_EQ(import_error("<topology/>", true),
            "t.xml:1:1: <topology>: expected NCCL's topology dump, whose root is <system>");
  EXPECT_EQ(import_error("<system/>", true),
            "t.xml:1:1: <system>: expected a <cpu> element inside");
  EXPECT_EQ(import_error("<system><cpu><pci><gpu dev=\"a\" sm=\"90\"/></pci></cpu></system>", true),
            "t.xml:1:19: <gpu>: dev: expected a whole number, got \"a\"");
  EXPECT_EQ(import_error("<system><cpu><pci link_speed=\"9 GT/s\"><gpu dev=\"0\" sm=\"90\"/></pci>"
                         "</cpu></system>",
                         true),
            "t.xml:1:39: <gpu>: link_speed: expected a PCIe rate such as \"32.0 GT/s PCIe\" (2.5, "
            "5, 8, 16 or 32 GT/s), got \"9 GT/s\"");
  EXPECT_EQ(import_error("<system><cpu host_hash=\"1\"/><cpu host_hash=\"2\"/></system>", true),
            "t.xml:1:1: <system>: the dump holds 2 hosts (host_hash); import one node's dump");
  EXPECT_EQ(import_error("<system><cpu><pci/></cpu></system>", true),
            "t.xml:1:1: <system>: no <gpu> in the dump (NCCL_TOPO_FILE-style files list only PCI "
            "devices; use the NCCL_TOPO_DUMP_FILE output)");
}

TEST(NvidiaSmiTopo, ReadsTheH100Host) {
  const ImportedNode n =
      read_nvidia_smi_topo(data("h100x8-nvidia-smi-topo.txt"), "x", options("400Gbps"));
  EXPECT_EQ(n.gpu_model, "H100-SXM");
  EXPECT_EQ(n.nvlink_fabric, "nvswitch");
  EXPECT_EQ(n.nvlink_links, 18);
  EXPECT_EQ(n.cpus, 2);
  ASSERT_EQ(n.switches.size(), 4u);
  EXPECT_EQ(n.switches[3].gpus, (std::vector<int>{6, 7}));
  EXPECT_EQ(n.switches[3].nics, (std::vector<int>{6, 7}));
  EXPECT_EQ(n.nics, 8);         // the four RoCE ports near no GPU are left out
  EXPECT_EQ(n.nic_kind, "ib");  // ibp* names
  EXPECT_EQ(n.nic_Gbps, 400.0);
}

// Saved by scripts/gpu-check.sh on a one-GPU H100 virtual machine (tests/data/import/README.md):
// nvidia-smi underlines its header row with terminal escapes, in a file too.
TEST(NvidiaSmiTopo, ReadsTheUnderlinedHeaderOfAOneGpuMachine) {
  const std::string text = data("h100x1-vm-nvidia-smi-topo.txt");
  ASSERT_NE(text.find("\x1b[4mGPU0"), std::string::npos);
  const ImportedNode n = read_nvidia_smi_topo(text, "x", options("", "H100-SXM"));
  EXPECT_EQ(n.gpus, 1);
  EXPECT_EQ(n.cpus, 1);
  EXPECT_EQ(n.nics, 0);
  EXPECT_EQ(n.nvlink_links, 0);
}

TEST(NcclTopologyXml, ReadsAOneGpuVirtualMachinesDump) {
  const ImportedNode n = read_nccl_topology_xml(data("h100x1-vm-nccl-topo.xml"), "x", {});
  EXPECT_EQ(n.gpu_model, "H100-SXM");  // PCI device 0x2330
  EXPECT_EQ(n.gpus, 1);
  EXPECT_EQ(n.cpus, 1);
  EXPECT_EQ(n.pcie_GBps, 63.0);  // 32 GT/s; link_width 0 read as x16
  EXPECT_EQ(n.nics, 1);          // the VM's eth0
  EXPECT_EQ(n.nic_kind, "ethernet");
  EXPECT_EQ(n.nic_Gbps, 10.0);
  // The H200 machine of the same day: PCI device 0x2335.
  EXPECT_EQ(read_nccl_topology_xml(data("h200x1-vm-nccl-topo.xml"), "x", {}).gpu_model, "H200");
}

TEST(NvidiaSmiTopo, SpacesAsPastedInIssuesReadLikeTabs) {
  const std::string text =
      "        GPU0    GPU1    GPU2    GPU3    CPU Affinity    NUMA Affinity\n"
      "GPU0     X      NV6     NV6     NV6     0-31            0\n"
      "GPU1    NV6      X      NV6     NV6     0-31            0\n"
      "GPU2    NV6     NV6      X      NV6     0-31            0\n"
      "GPU3    NV6     NV6     NV6      X      0-31            0\n";
  const ImportedNode n = read_nvidia_smi_topo(text, "x", options("", "H100-SXM"));
  EXPECT_EQ(n.nvlink_fabric, "mesh");  // 6 x 3 peers = the H100's 18 ports
  EXPECT_EQ(n.nvlink_group, 4);
  EXPECT_EQ(n.cpus, 1);
}

TEST(NvidiaSmiTopo, MalformedMatrixIsLocated) {
  const std::string head = "\tGPU0\tGPU1\tCPU Affinity\n";
  EXPECT_EQ(import_error(head + "GPU0\t X \tNV4\t0-3\nGPU1\tNV4\tFOO\t0-3\n", false),
            "t.txt:3: GPU1 to GPU1: expected X, got \"FOO\"");
  EXPECT_EQ(import_error(head + "GPU0\t X \tNV4\t0-3\nGPU1\tBAR\t X \t0-3\n", false),
            "t.txt:3: GPU1 to GPU0: expected NV#, PIX, PXB, PHB, NODE or SYS, got \"BAR\"");
  EXPECT_EQ(import_error(head + "GPU1\t X \tNV4\n", false),
            "t.txt:2: expected the row of GPU0, got \"GPU1\"");
  EXPECT_EQ(import_error(head + "GPU0\t X\n", false), "t.txt:2: GPU0: expected 2 columns, got 1");
  EXPECT_EQ(import_error(head + "GPU0\t X \tNV4\t0-3\n", false),
            "t.txt: the matrix has 1 rows for 2 columns");
  EXPECT_EQ(import_error("hello\n", false),
            "t.txt: expected `nvidia-smi topo -m` output: no header row starting with GPU0");
  EXPECT_EQ(import_error(head + "GPU0\t X \tNV4\t0-3\nGPU1\tNV4\t X \t0-3\n", false),
            "t.txt: NV4 between GPUs in groups of 2: name the GPU model with --gpu (e.g. --gpu "
            "H100-SXM)");
  // NV8 between every pair is an A800's or an H800's NVSwitch node: nothing here tells which.
  EXPECT_EQ(import_error(head + "GPU0\t X \tNV8\t0-3\nGPU1\tNV8\t X \t0-3\n", false),
            "t.txt: NV8 between GPUs in groups of 2: name the GPU model with --gpu (e.g. --gpu "
            "H800 or --gpu A800-SXM)");
}

}  // namespace
}  // namespace collsim

namespace collsim {
namespace {

std::string log_error(const std::string& text) {
  try {
    read_nccl_graph_log(text, "n.log");
  } catch (const ImportError& e) {
    return e.what();
  }
  return "no error";
}

TEST(NcclGraphLog, ReadsRingNvlsAndTheOlderSpeedSpelling) {
  EXPECT_EQ(read_nccl_graph_log(data("nccl-1189-h20-graph.log"), "x").graph, "ring=4x24/24");
  EXPECT_EQ(read_nccl_graph_log(data("nccl-1519-h100-nvls-graph.log"), "x").graph, "nvls=7x3/3");
  // Two ranks print the same graph: it counts once.
  EXPECT_EQ(read_nccl_graph_log(data("nccl-601-speed-graph.log"), "x").graph, "ring=4x1.2/1.2");
}

TEST(NcclGraphLog, TreePatternsNameNcclsConstants) {
  const NcclGraphLog g = read_nccl_graph_log(
      "h:1:2 [0] NCCL INFO Pattern 4, crossNic 0, nChannels 16, bw 20.000000/20.000000, type "
      "NVL/PIX, sameChannels 1\n"
      "h:1:2 [0] NCCL INFO Pattern 3, crossNic 0, nChannels 8, bw 40.000000/12.500000, type "
      "NVL/PIX, sameChannels 1\n",
      "x");
  EXPECT_EQ(g.graph, "ring=16x20/20,tree=8x40/12.5");
  EXPECT_EQ(g.tree_pattern, "tree");
}

TEST(NcclGraphLog, MalformedLinesAreLocated) {
  EXPECT_EQ(log_error("a\nh [0] NCCL INFO Pattern 4, crossNic 0, nChannels many\n"),
            "n.log:2: expected \"Pattern P, crossNic C, nChannels N, bw INTRA/INTER\", got "
            "\"Pattern 4, crossNic 0, nChannels many\"");
  EXPECT_EQ(log_error("h [0] NCCL INFO Pattern 4, crossNic 0, nChannels 0, bw 1/1\n"),
            "n.log:1: nChannels 0: expected 1 to 64");
  EXPECT_EQ(log_error("no graph here\n"),
            "n.log: no NCCL graph lines (\"NCCL INFO Pattern ...\"): run with NCCL_DEBUG=INFO "
            "NCCL_DEBUG_SUBSYS=INIT,GRAPH");
}

}  // namespace
}  // namespace collsim
