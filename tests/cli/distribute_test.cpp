// Distribution::run (cli/distribute.hpp) without MPI: process 0's loop over a process group of
// the test's own, whose other process is played here by answering its requests in turn.
#include "cli/distribute.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "topology/error.hpp"

namespace collsim {
namespace {

// Process 0 of two. The other process asks for a unit at once, and for more once process 0's
// worker has finished one (so that both get some, however the threads are scheduled); it
// computes each at once (as 10 x the unit), stops asking once it is told that none is left, and
// its results reach process 0 through gather_text, as MPI's would.
class TwoProcesses final : public ProcessGroup {
 public:
  explicit TwoProcesses(const std::atomic<int>& done_here) : done_here_(done_here) {}
  int size() const override { return 2; }
  int answer_unit_requests(const std::function<std::optional<std::size_t>()>& take) override {
    if (stopped_ || (asked_ == 1 && done_here_ == 0)) return 0;
    ++asked_;
    const std::optional<std::size_t> unit = take();
    if (!unit) {
      stopped_ = true;
      return 1;
    }
    taken.push_back(*unit);
    return 0;
  }
  std::vector<std::string> gather_text(std::string mine) override {
    nlohmann::json other;
    other["units"] = nlohmann::json::array();
    for (std::size_t u : taken) other["units"].push_back({u, 10 * u});
    other["errors"] = nlohmann::json::array();
    return {std::move(mine), other.dump()};
  }
  std::vector<std::size_t> taken;  // by the other process

 private:
  const std::atomic<int>& done_here_;
  int asked_ = 0;
  bool stopped_ = false;
};

TEST(Distribution, EveryUnitRunsOnceOnOneProcessWithItsWorkers) {
  const Distribution d(std::make_unique<ProcessGroup>());
  std::vector<std::atomic<int>> runs(40);
  std::vector<double> weights(40, 1.0);
  const Gathered all = d.run(weights, 4, [&](std::size_t u) {
    ++runs[u];
    return nlohmann::json(u * u);
  });
  ASSERT_EQ(all.size(), 40u);
  for (std::size_t u = 0; u < 40; ++u) {
    EXPECT_EQ(runs[u], 1) << u;
    EXPECT_EQ(all.at(u).get<std::size_t>(), u * u);
  }
}

TEST(Distribution, HandsOutHeaviestFirstToWhoeverAsksAndGathersBoth) {
  std::atomic<int> done_here{0};
  auto group = std::make_unique<TwoProcesses>(done_here);
  TwoProcesses* other = group.get();
  const Distribution d(std::move(group));
  const std::vector<double> weights{1, 5, 3, 4, 2};
  std::vector<std::size_t> order;  // as process 0 handed them out
  const Gathered all = d.run(
      weights, 1,
      [&](std::size_t u) {
        ++done_here;
        return nlohmann::json(u);
      },
      [&](std::size_t u) { order.push_back(u); });
  EXPECT_EQ(order, (std::vector<std::size_t>{1, 3, 2, 4, 0}));
  EXPECT_FALSE(other->taken.empty());              // the other process had some
  EXPECT_LT(other->taken.size(), weights.size());  // and process 0's worker the rest
  ASSERT_EQ(all.size(), weights.size());
  for (std::size_t u : other->taken) EXPECT_EQ(all.at(u).get<std::size_t>(), 10 * u);
}

TEST(Distribution, TheLowestFailingUnitsErrorWhoeverRanIt) {
  const Distribution d(std::make_unique<ProcessGroup>());
  std::vector<double> weights(12, 1.0);
  weights[9] = 2;  // handed out first: the first to fail, but not the lowest
  try {
    d.run(weights, 3, [](std::size_t u) -> nlohmann::json {
      if (u == 9 || u == 4 || u == 7) throw RequestError("unit " + std::to_string(u) + " failed");
      return u;
    });
    FAIL() << "no error";
  } catch (const RequestError& e) {
    EXPECT_STREQ(e.what(), "unit 4 failed");
  }
}

}  // namespace
}  // namespace collsim
