// What-if faults (topology/faults.hpp): parsing, the links each target covers, a failed NIC's
// GPUs moving to the node's other NICs, and precise errors for what does not exist.
#include <gtest/gtest.h>

#include "topology/error.hpp"
#include "topology/faults.hpp"
#include "topology/loader.hpp"

namespace collsim {
namespace {

DeviceId device(const Topology& t, std::string_view name) {
  for (const Device& d : t.devices()) {
    if (d.name == name) return d.id;
  }
  ADD_FAILURE() << "no device " << name;
  return {};
}

TEST(Faults, ParsesTheCommandLineForms) {
  const Fault d = parse_fault(FaultKind::kDegrade, "node3/nic0:0.5+2us");
  EXPECT_EQ(d.target, "node3/nic0");
  EXPECT_DOUBLE_EQ(d.bandwidth, 0.5);
  EXPECT_EQ(d.latency, us(2));
  EXPECT_EQ(parse_fault(FaultKind::kDegrade, "leaf0/uplinks:+1us").bandwidth, 1.0);
  EXPECT_DOUBLE_EQ(parse_fault(FaultKind::kStraggler, "node7:1.3").factor, 1.3);
  EXPECT_EQ(parse_fault(FaultKind::kFail, "node2/nic1").target, "node2/nic1");
  EXPECT_THROW(parse_fault(FaultKind::kDegrade, "node3/nic0:2"), RequestError);
  EXPECT_THROW(parse_fault(FaultKind::kDegrade, "node3/nic0"), RequestError);
  EXPECT_THROW(parse_fault(FaultKind::kStraggler, "node7:0.5"), RequestError);
  // A link gains at most kMaxLinkLatency, from the command line as from a faults list.
  EXPECT_EQ(parse_fault(FaultKind::kDegrade, "node3/nic0:+1ms").latency, ms(1));
  try {
    parse_fault(FaultKind::kDegrade, "node3/nic0:0.5+2s");
    ADD_FAILURE() << "a 2 s latency was accepted";
  } catch (const RequestError& e) {
    EXPECT_STREQ(e.what(),
                 "--degrade node3/nic0:0.5+2s: expected at most 1 ms for the added latency, got "
                 "\"2s\"");
  }
  EXPECT_THROW(parse_faults("faults:\n  - degrade: node0/nic1\n    latency: 5ms\n", "f.yaml"),
               ConfigError);
}

TEST(Faults, DegradedNicKeepsItsFractionBothWays) {
  Topology t = load_topology("h100-2node-ib");
  const DeviceId nic = device(t, "node1/nic3");
  std::vector<LinkId> links = fault_links(t, parse_fault(FaultKind::kDegrade, "node1/nic3:0.5"));
  ASSERT_FALSE(links.empty());
  std::vector<Bandwidth> before;
  for (LinkId l : links) before.push_back(t.link(l).bandwidth);
  apply_faults(t, {parse_fault(FaultKind::kDegrade, "node1/nic3:0.5+1us")});
  for (std::size_t i = 0; i < links.size(); ++i) {
    const Link& l = t.link(links[i]);
    EXPECT_TRUE(l.src == nic || l.dst == nic);
    EXPECT_DOUBLE_EQ(l.bandwidth.bytes_per_second(), before[i].bytes_per_second() * 0.5);
  }
}

TEST(Faults, ClassesCoverWhatTheyName) {
  const Topology t = load_topology("h100-16node-ib", {.nodes = 4});
  // rail2: the network cable of NIC 2 on each of the 4 nodes, both directions.
  EXPECT_EQ(fault_links(t, parse_fault(FaultKind::kDegrade, "rail2:0.5")).size(), 8u);
  for (LinkId l : fault_links(t, parse_fault(FaultKind::kDegrade, "node0/gpu1/nvlink:0.5"))) {
    EXPECT_TRUE(is_nvlink_class(t.link(l).kind));
  }
  EXPECT_FALSE(fault_links(t, parse_fault(FaultKind::kStraggler, "node3:1.5")).empty());
}

TEST(Faults, FailedNicMovesItsGpuToAnotherNic) {
  Topology t = load_topology("h100-2node-ib");
  const DeviceId gpu = t.gpus_of_node(1).at(3);
  ASSERT_EQ(t.nics_of(gpu).front(), device(t, "node1/nic3"));
  apply_faults(t, {parse_fault(FaultKind::kFail, "node1/nic3")});
  ASSERT_FALSE(t.nics_of(gpu).empty());
  for (DeviceId nic : t.nics_of(gpu)) EXPECT_NE(nic, device(t, "node1/nic3"));
}

TEST(Faults, NodeWithoutWorkingNicCannotRun) {
  Topology t = load_topology("h100-2node-ib");
  try {
    apply_faults(t, {parse_fault(FaultKind::kFail, "node1/nics")});
    FAIL() << "expected an error";
  } catch (const RequestError& e) {
    EXPECT_NE(std::string(e.what()).find("node1 has no working NIC left"), std::string::npos);
  }
}

TEST(Faults, UnknownTargetsNameWhatExists) {
  Topology t = load_topology("h100-2node-ib");
  try {
    apply_faults(t, {parse_fault(FaultKind::kDegrade, "node9/nic0:0.5")});
    FAIL() << "expected an error";
  } catch (const RequestError& e) {
    EXPECT_NE(std::string(e.what()).find("nodes node0..node1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(apply_faults(t, {parse_fault(FaultKind::kFail, "node0/gpu0")}), RequestError);
  EXPECT_THROW(apply_faults(t, {parse_fault(FaultKind::kStraggler, "node0/nic0:2")}), RequestError);
}

TEST(Faults, ReadsAFaultsList) {
  const std::vector<Fault> f = parse_faults(
      "faults:\n  - degrade: node0/nic1\n    bandwidth: 0.25\n  - straggler: node1\n    factor: 2\n"
      "  - fail: node0/nic2\n",
      "f.yaml");
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].kind, FaultKind::kDegrade);
  EXPECT_DOUBLE_EQ(f[0].bandwidth, 0.25);
  EXPECT_EQ(f[1].kind, FaultKind::kStraggler);
  EXPECT_EQ(f[2].kind, FaultKind::kFail);
  EXPECT_THROW(parse_faults("faults:\n  - slow: node0\n", "f.yaml"), ConfigError);
}

// A cluster's YAML may carry the faults itself: the loader applies them as the flags would, and
// a target that does not exist is an error at the list's place in the file.
TEST(Faults, AConfigCarriesItsOwnFaults) {
  const std::string yaml = R"(
nodes: 2
node:
  gpu: H100-SXM
  gpus: 2
  pcie: {latency: 0.5us, switches: 1}
  nics: {count: 2, bandwidth: 400Gbps, latency: 0.3us, kind: ib}
network: {topology: single_switch}
)";
  const Topology healthy = parse_topology(yaml, "c.yaml");
  const Topology faulty =
      parse_topology(yaml + "faults:\n  - {degrade: node1/nic0, bandwidth: 0.5}\n", "c.yaml");
  Topology flagged = parse_topology(yaml, "c.yaml");
  apply_faults(flagged, {parse_fault(FaultKind::kDegrade, "node1/nic0:0.5")});
  int degraded = 0;
  for (const Link& l : faulty.links()) {
    EXPECT_EQ(l.bandwidth, flagged.link(l.id).bandwidth);
    degraded += l.bandwidth != healthy.link(l.id).bandwidth;
  }
  EXPECT_EQ(degraded, 4);  // the NIC's cables to its PCIe switch and to the network, both ways
  try {
    parse_topology(yaml + "faults:\n  - {fail: node5/nic0}\n", "c.yaml");
    FAIL() << "a fault on a missing node was accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("c.yaml:10:3: ", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace collsim
