// The host's share of an nccl-tests iteration (Request::host, predict.hpp): one thread that
// drives g GPUs issues g collectives per iteration, so an iteration takes at least
// g x (host_launch + channels x host_channel); a CUDA graph issues none. Checked under every
// collsim model, against the simulation without the bound, through the nccl-tests reader (the
// header's nGpus / graph), and host_channel's default against the one-thread tables it was
// measured on.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "calibrate/nccl_tests_reader.hpp"
#include "calibrate/row_model.hpp"
#include "predict/predict.hpp"
#include "topology/loader.hpp"

namespace collsim {
namespace {

Request allreduce(const Topology& topo, std::uint64_t bytes, int gpus_per_thread, bool graph) {
  Request r;
  r.algorithm = "ring";
  r.protocol = Protocol::kLL;
  r.channels = 1;
  r.comm = Communicator::from_topology(topo);
  r.count = count_for_bytes(r.collective, Bytes(bytes), r.dtype, r.comm.size());
  r.host.gpus_per_thread = gpus_per_thread;
  r.host.graph = graph;
  return r;
}

TEST(HostLoop, EightGpusFromOneThreadBoundASmallAllReduce) {
  const Topology topo = load_topology("dgx-h100");
  CostParams costs = default_cost_params(topo);
  ASSERT_EQ(costs.host_launch, us(4.2));    // nccl-tests#123, cost_params.cpp
  ASSERT_EQ(costs.host_channel, us(0.04));  // one-thread tables, cost_params.cpp
  for (Model m : {Model::kMaxMin, Model::kContentionFree, Model::kClosedForm}) {
    const auto gpu = predict(allreduce(topo, 8, 1, false), topo, costs, m);
    const auto host = predict(allreduce(topo, 8, 8, false), topo, costs, m);
    const auto graph = predict(allreduce(topo, 8, 8, true), topo, costs, m);
    ASSERT_TRUE(gpu && host && graph) << to_string(m);
    // One GPU per thread: a launch (4.2 us) is shorter than the ring's run, which stands.
    EXPECT_FALSE(gpu->host_bound) << to_string(m);
    EXPECT_GT(gpu->time, costs.host_launch) << to_string(m);
    // Eight from one thread on one channel: 8 x (4.2 + 0.04) = 33.92 us, longer than the
    // 8-GPU ring at 8 B.
    ASSERT_LT(gpu->time, us(33.92)) << to_string(m);
    EXPECT_TRUE(host->host_bound) << to_string(m);
    EXPECT_EQ(host->time, us(33.92)) << to_string(m);
    EXPECT_NE(host->detail.find("host-bound: 8 GPUs per thread"), std::string::npos)
        << host->detail;
    // A CUDA graph issues nothing per iteration: the GPUs' time again.
    EXPECT_FALSE(graph->host_bound) << to_string(m);
    EXPECT_EQ(graph->time, gpu->time) << to_string(m);
  }
}

TEST(HostLoop, ALargeCollectiveIsTheGpusTimeWhateverTheHost) {
  const Topology topo = load_topology("dgx-h100");
  const CostParams costs = default_cost_params(topo);
  const auto one = predict(allreduce(topo, 64 << 20, 1, false), topo, costs, Model::kMaxMin);
  const auto eight = predict(allreduce(topo, 64 << 20, 8, false), topo, costs, Model::kMaxMin);
  ASSERT_TRUE(one && eight);
  EXPECT_FALSE(eight->host_bound);
  EXPECT_EQ(one->time, eight->time);
}

TEST(HostLoop, TheBoundFollowsHostLaunchAndTheChannels) {
  const Topology topo = load_topology("dgx-h100");
  CostParams costs = default_cost_params(topo);
  costs.host_launch = us(10);
  costs.host_channel = us(0.5);
  Request r = allreduce(topo, 8, 8, false);
  EXPECT_EQ(host_period(r, costs), us(84));  // 8 x (10 + 1 x 0.5)
  EXPECT_EQ(predict(r, topo, costs, Model::kMaxMin)->time, us(84));
  r.channels = 16;
  EXPECT_EQ(host_period(r, costs), us(144));  // 8 x (10 + 16 x 0.5)
  const auto sixteen = predict(r, topo, costs, Model::kMaxMin);
  ASSERT_TRUE(sixteen);
  EXPECT_EQ(sixteen->time, us(144));
  EXPECT_NE(sixteen->detail.find("x 18.00 us to issue each on 16 channels"), std::string::npos)
      << sixteen->detail;
  costs.host_launch = Time{};
  costs.host_channel = Time{};
  EXPECT_FALSE(predict(r, topo, costs, Model::kMaxMin)->host_bound);
  EXPECT_EQ(host_period(allreduce(topo, 8, 8, true), default_cost_params(topo)), Time{});
}

TEST(HostLoop, TheReaderTakesNGpusAndGraphFromTheHeader) {
  const auto dir = std::filesystem::temp_directory_path() / "collsim_host_loop_test";
  std::filesystem::create_directories(dir);
  const auto write = [&](const std::string& name, int ngpus, int graph) {
    const auto path = dir / name;
    std::ofstream out(path);
    out << "# Collective test starting: all_reduce_perf\n"
        << "# nThread 1 nGpus " << ngpus
        << " minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
           "validation: 1 graph: "
        << graph << "\n"
        << "#\n# Using devices\n";
    for (int k = 0; k < 8; ++k) {
      out << "#  Rank  " << k << " Group  0 Pid 1 on host device  " << k << " [0x0" << k
          << "] NVIDIA H100 80GB HBM3\n";
    }
    out << "#\n#                                                              out-of-place"
           "                       in-place\n"
        << "#       size         count      type   redop    root     time   algbw   busbw #wrong"
           "     time   algbw   busbw #wrong\n"
        << "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)      "
           "      (us)  (GB/s)  (GB/s)\n"
        << "           8             2     float     sum      -1    35.00    0.00    0.00      0"
           "    35.00    0.00    0.00      0\n";
    return path.string();
  };
  const Topology topo = load_topology("dgx-h100");
  const FilePlan threaded = plan_measurements(topo, read_measurements(write("g8.txt", 8, 0)));
  ASSERT_EQ(threaded.cases.size(), 1u);
  EXPECT_EQ(threaded.cases[0].request.host.gpus_per_thread, 8);
  EXPECT_FALSE(threaded.cases[0].request.host.graph);
  const FilePlan graphed = plan_measurements(topo, read_measurements(write("G.txt", 8, 1)));
  ASSERT_EQ(graphed.cases.size(), 1u);
  EXPECT_TRUE(graphed.cases[0].request.host.graph);
  const FilePlan mpi = plan_measurements(topo, read_measurements(write("g1.txt", 1, 0)));
  ASSERT_EQ(mpi.cases.size(), 1u);
  EXPECT_EQ(mpi.cases[0].request.host.gpus_per_thread, 1);
  std::filesystem::remove_all(dir);
}

// host_channel's default (cost_params.cpp) is the slope, over the channel count NCCL ran, of
// the per-GPU iteration time of one-thread eager tables on rows the host bounds (up to 1 MiB,
// where every GPU-side prediction of these rows is shorter than the host's): 0.035 us on one host
// (8 H100, NCCL 2.26), 0.049 us as the median of another's three collectives (4 H100, NCCL
// 2.29). The default lies between the two hosts.
double channel_slope(const Topology& topo, const std::string& file) {
  const FilePlan plan = plan_measurements(
      topo, read_measurements(COLLSIM_SOURCE_DIR "/tests/data/nccl-tests/" + file));
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const RowCase& c : plan.cases) {
    if (request_bytes(c.request) > Bytes(1 << 20)) continue;
    const double x = c.request.channels;
    const double y = c.measured_us / c.request.host.gpus_per_thread;
    n += 1, sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  EXPECT_GE(n, 15) << file;
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

TEST(HostLoop, TheChannelCostIsTheSlopeOfOneThreadTables) {
  const Topology topo = load_topology("dgx-h100");
  const double nvls_together = channel_slope(topo, "h100x8_1node_allreduce_NVLS_together.txt");
  std::vector<double> waynehacking;
  for (const char* op : {"allreduce", "reducescatter", "allgather"}) {
    waynehacking.push_back(
        channel_slope(topo, std::string("h100x4_1node_") + op + "_waynehacking8.txt"));
  }
  std::sort(waynehacking.begin(), waynehacking.end());
  const double median = waynehacking[1];
  std::printf(
      "per-GPU host time per channel: NVLS_together %.3f us; waynehacking8 %.3f %.3f "
      "%.3f us, median %.3f\n",
      nvls_together, waynehacking[0], waynehacking[1], waynehacking[2], median);
  const double chosen = default_cost_params(topo).host_channel.us();
  EXPECT_GT(chosen, std::min(nvls_together, median));
  EXPECT_LT(chosen, std::max(nvls_together, median));
  // Both hosts see a cost per channel, and of one size: not noise around zero.
  EXPECT_GT(nvls_together, 0.02);
  EXPECT_GT(median, 0.02);
  EXPECT_LT(std::max(nvls_together, median) / std::min(nvls_together, median), 2.0);
}

}  // namespace
}  // namespace collsim
