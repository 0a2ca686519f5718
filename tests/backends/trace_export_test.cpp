// A measured run's trace: valid JSON in the simulator's layout, one slice per op, and every flow
// arrow has both ends (the k-th send on a connection joined to the k-th receive).
#include "backends/trace_export.hpp"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "algorithms/generators/registry.hpp"
#include "backends/cpu_backend.hpp"
#include "backends/verifier.hpp"

namespace collsim {
namespace {

TEST(MeasuredTrace, OneSlicePerOpAndPairedFlows) {
  Request r;
  r.algorithm = "dbtree";
  r.count = 3000;
  r.channels = 2;
  r.comm = Communicator::grid(2, 2);
  const Schedule s = plan(r);
  HostBuffers buf = make_inputs(s, 1);
  const RunResult res = CpuBackend().run(s, buf, {.threads = 2, .record_ops = true});
  std::ostringstream out;
  write_measured_trace(out, s, res.op_timings, "cpu");
  const nlohmann::json j = nlohmann::json::parse(out.str());
  std::uint64_t slices = 0, sends = 0, receives = 0, kernels = 0;
  std::map<std::uint64_t, int> flow_ends;
  for (const auto& e : j.at("traceEvents")) {
    const std::string ph = e.at("ph");
    if (ph == "X" && e.at("cat") == "op") ++slices;
    if (ph == "X" && e.at("cat") == "kernel") {
      ++kernels;
      EXPECT_EQ(e.at("name"), "allreduce dbtree simple (cpu)");
    }
    if (ph == "s") {
      ++sends;
      flow_ends[e.at("id").get<std::uint64_t>()] += 1;
    }
    if (ph == "f") {
      ++receives;
      flow_ends[e.at("id").get<std::uint64_t>()] += 2;
    }
  }
  EXPECT_EQ(slices, s.total_ops());
  EXPECT_EQ(kernels, 4u);
  EXPECT_GT(sends, 0u);
  EXPECT_EQ(sends, receives);
  for (const auto& [id, ends] : flow_ends) EXPECT_EQ(ends, 3) << "flow " << id;
}

}  // namespace
}  // namespace collsim
