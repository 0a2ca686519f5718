// The host's share of an nccl-tests iteration (Request::host, predict.hpp): one thread that
// drives g GPUs issues g collectives per iteration, so an iteration takes at least
// g x host_launch; a CUDA graph issues none. Checked under every collsim model, against the
// simulation without the bound, and through the nccl-tests reader (the header's nGpus / graph).
#include <gtest/gtest.h>

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
  ASSERT_EQ(costs.host_launch, us(4.2));  // nccl-tests#123, cost_params.cpp
  for (Model m : {Model::kMaxMin, Model::kContentionFree, Model::kClosedForm}) {
    const auto gpu = predict(allreduce(topo, 8, 1, false), topo, costs, m);
    const auto host = predict(allreduce(topo, 8, 8, false), topo, costs, m);
    const auto graph = predict(allreduce(topo, 8, 8, true), topo, costs, m);
    ASSERT_TRUE(gpu && host && graph) << to_string(m);
    // One GPU per thread: a launch (4.2 us) is shorter than the ring's run, which stands.
    EXPECT_FALSE(gpu->host_bound) << to_string(m);
    EXPECT_GT(gpu->time, costs.host_launch) << to_string(m);
    // Eight from one thread: 8 x 4.2 = 33.6 us, longer than the 8-GPU ring at 8 B.
    ASSERT_LT(gpu->time, us(33.6)) << to_string(m);
    EXPECT_TRUE(host->host_bound) << to_string(m);
    EXPECT_EQ(host->time, us(33.6)) << to_string(m);
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

TEST(HostLoop, TheBoundFollowsHostLaunch) {
  const Topology topo = load_topology("dgx-h100");
  CostParams costs = default_cost_params(topo);
  costs.host_launch = us(10);
  const Request r = allreduce(topo, 8, 8, false);
  EXPECT_EQ(host_period(r, costs), us(80));
  EXPECT_EQ(predict(r, topo, costs, Model::kMaxMin)->time, us(80));
  costs.host_launch = Time{};
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

}  // namespace
}  // namespace collsim
