// The Perfetto / Chrome trace: valid Trace Event Format JSON with the layout trace.hpp promises
// (the shape chrome://tracing and ui.perfetto.dev require: a traceEvents array; M, X, s, f and C
// events with the fields each phase needs; complete slices properly nested per track; every flow
// start matched by one finish).
#include "simulator/trace.hpp"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "algorithms/generators/registry.hpp"
#include "simulator/simulate.hpp"
#include "topology/loader.hpp"

namespace collsim {
namespace {

TEST(Trace, KernelNamesFollowNccl) {
  ScheduleInfo i;
  i.collective = Collective::kAllReduce;
  i.algorithm = "ring";
  i.protocol = Protocol::kLL;
  i.dtype = DataType::kF32;
  EXPECT_EQ(nccl_kernel_name(i), "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  i.algorithm = "dbtree";
  i.protocol = Protocol::kLL128;
  i.dtype = DataType::kBf16;
  EXPECT_EQ(nccl_kernel_name(i), "ncclDevKernel_AllReduce_Sum_bf16_TREE_LL128");
  i.collective = Collective::kAllGather;
  i.algorithm = "ring";
  i.protocol = Protocol::kSimple;
  EXPECT_EQ(nccl_kernel_name(i), "ncclDevKernel_AllGather_RING_SIMPLE");
}

TEST(Trace, JsonHasTheShapeViewersNeed) {
  const Topology topo = load_topology("dgx-h100");
  Request q;
  q.algorithm = "ring";
  q.protocol = Protocol::kLL;
  q.count = 1 << 18;  // 1 MiB of f32
  q.channels = 2;
  q.comm = Communicator::from_topology(topo);
  const Schedule s = plan(q);
  TraceRecorder rec;
  SimOptions o;
  o.trace = &rec;
  const Result r = simulate(s, topo, o);
  std::ostringstream out;
  write_trace(out, s, topo, r, rec);

  const nlohmann::json j = nlohmann::json::parse(out.str());
  ASSERT_TRUE(j.is_object());
  ASSERT_TRUE(j.at("traceEvents").is_array());
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> slices;
  std::map<std::uint64_t, int> flow_starts, flow_ends;
  std::set<int> processes;
  int kernels = 0, counters = 0;
  for (const auto& e : j["traceEvents"]) {
    ASSERT_TRUE(e.at("name").is_string());
    const std::string ph = e.at("ph").get<std::string>();
    ASSERT_TRUE(e.at("pid").is_number_integer());
    ASSERT_TRUE(e.at("tid").is_number_integer());
    const int pid = e["pid"];
    if (ph == "M") {
      ASSERT_TRUE(e.at("args").is_object());
      if (e["name"] == "process_name") processes.insert(pid);
      continue;
    }
    ASSERT_TRUE(e.at("ts").is_number());
    const double ts = e["ts"];
    ASSERT_GE(ts, 0.0);
    if (ph == "X") {
      ASSERT_TRUE(e.at("dur").is_number());
      ASSERT_GE(e["dur"].get<double>(), 0.0);
      slices[{pid, e["tid"].get<int>()}].push_back({ts, ts + e["dur"].get<double>()});
      if (e["name"] == "ncclDevKernel_AllReduce_Sum_f32_RING_LL") ++kernels;
    } else if (ph == "s" || ph == "f") {
      ASSERT_TRUE(e.at("id").is_number_integer());
      ASSERT_EQ(e.at("cat"), "flow");
      if (ph == "f") {
        ASSERT_EQ(e.at("bp"), "e");
      }
      (ph == "s" ? flow_starts : flow_ends)[e["id"].get<std::uint64_t>()]++;
    } else if (ph == "C") {
      ASSERT_TRUE(e.at("args").at("util").is_number());
      ++counters;
    } else {
      FAIL() << "unexpected phase " << ph;
    }
  }
  EXPECT_EQ(processes.size(), 9u);  // 8 ranks + links
  EXPECT_EQ(kernels, 8);
  EXPECT_GT(counters, 0);
  // One slice per op; slices on one track never overlap (chrome://tracing drops those).
  std::size_t ops = 0;
  for (auto& [track, v] : slices) {
    if (track.second == 0) continue;
    ops += v.size();
    std::sort(v.begin(), v.end());
    for (std::size_t i = 1; i < v.size(); ++i) EXPECT_LE(v[i - 1].second, v[i].first + 1e-6);
  }
  EXPECT_EQ(ops, s.total_ops());
  EXPECT_FALSE(flow_starts.empty());
  EXPECT_EQ(flow_starts, flow_ends);
  for (const auto& [id, n] : flow_starts) EXPECT_EQ(n, 1) << id;
}

}  // namespace
TEST(Trace, EveryOpThatMovesBytesLastsAsLongAsItsPiecesTakeToLeave) {
  // A send used to end when its last piece was posted, so most op slices had no duration and a
  // viewer's channel tracks looked empty.
  const Topology topo = load_topology("dgx-h100");
  Request q;
  q.algorithm = "ring";
  q.protocol = Protocol::kSimple;
  q.count = 1 << 18;
  q.channels = 24;
  q.comm = Communicator::from_topology(topo);
  const Schedule s = plan(q);
  for (SimNetwork net : {SimNetwork::kMaxMin, SimNetwork::kContentionFree}) {
    TraceRecorder rec;
    SimOptions o;
    o.network = net;
    o.trace = &rec;
    simulate(s, topo, o);
    std::size_t moving = 0;
    for (const TraceOpRecord& op : rec.ops) {
      if (op.op.bytes == 0 || !sends(op.op.kind)) continue;
      ++moving;
      EXPECT_GT(op.end, op.start) << to_string(net) << " rank " << op.rank << " channel "
                                  << op.channel << " op " << op.index;
    }
    EXPECT_GT(moving, 0u);
  }
}

}  // namespace collsim
