// `collsim scale` end to end: node counts 1 and 2 cost exactly what `predict` costs on the
// cluster of that size; times grow with the node count where the model says they must; the CSV,
// JSON and plot forms; --nodes lists and ranges, and their mistakes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "tests/cli/run_collsim.hpp"
#include "topology/error.hpp"

namespace collsim::test {
namespace {

nlohmann::json json_of(const CommandResult& r) {
  EXPECT_EQ(r.status, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

TEST(ScaleCommand, OneAndTwoNodesAgreeWithPredict) {
  const auto j = json_of(run_collsim(
      "scale h100-2node-ib --op allreduce --bytes 1M --nodes 1,2 --algo ring,tree,ring2d "
      "--format json"));
  ASSERT_GE(j["rows"].size(), 10u);
  int best = 0;
  for (const auto& row : j["rows"]) {
    const int nodes = row["nodes"];
    const auto p = json_of(run_collsim(
        "predict h100-2node-ib --op allreduce --bytes 1M --nodes " + std::to_string(nodes) +
        " --algo " + row["algorithm"].get<std::string>() + " --proto " +
        row["protocol"].get<std::string>() + " --format json"));
    EXPECT_EQ(p["time_us"], row["time_us"]) << row.dump();
    EXPECT_EQ(p["channels"], row["channels"]) << row.dump();
    EXPECT_EQ(p["ranks"], nodes * 8);
    best += row["best"].get<bool>();
  }
  EXPECT_EQ(best, 2);  // one per node count
}

TEST(ScaleCommand, LatencyBoundTimesGrowWithTheNodeCount) {
  // 8 B: every algorithm is a chain of latencies, longer with every node (ring: 2(n-1) steps;
  // trees: deeper), on a fabric grown from radix-36 switches up to three tiers.
  const auto j = json_of(run_collsim(
      "scale summit --op allreduce --bytes 8 --nodes 1:64 --algo ring,dbtree --proto ll "
      "--format json"));
  std::map<std::string, std::vector<double>> times;
  for (const auto& row : j["rows"]) {
    times[row["algorithm"].get<std::string>()].push_back(row["time_us"].get<double>());
  }
  ASSERT_EQ(times["ring"].size(), 7u);
  ASSERT_EQ(times["dbtree"].size(), 7u);
  for (std::size_t i = 1; i < 7; ++i) {
    EXPECT_GT(times["ring"][i], times["ring"][i - 1]) << i;
    EXPECT_GE(times["dbtree"][i], times["dbtree"][i - 1]) << i;
  }
  // The ring's 2(n-1) steps outgrow the tree's log depth.
  EXPECT_GT(times["ring"].back() / times["dbtree"].back(), 5.0);
  EXPECT_EQ(j["ranges"], "dbtree/ll: 1-64 nodes");
}

TEST(ScaleCommand, StaticEcmpLosesBandwidthAtScaleAdaptiveRoutingDoesNot) {
  // nd-h100-v5: 4 VMs per leaf, 32 spines. At 16 VMs the ring crosses leaves; hashed flows
  // collide on spine links, evenly spread ones do not (docs/scale.md has the full study).
  auto busbw = [](const std::string& routing) {
    const auto j = json_of(run_collsim(
        "scale nd-h100-v5 --op allreduce --bytes 2G --nodes 2,16 --algo ring --proto simple "
        "--format json --routing " +
        routing));
    return std::pair{j["rows"][0]["busbw_GBps"].get<double>(),
                     j["rows"][1]["busbw_GBps"].get<double>()};
  };
  const auto [ecmp2, ecmp16] = busbw("ecmp");
  const auto [adaptive2, adaptive16] = busbw("adaptive");
  EXPECT_EQ(ecmp2, adaptive2);  // one leaf: no spine, nothing to route
  EXPECT_NEAR(adaptive16 / adaptive2, 1.0, 0.01);
  EXPECT_LT(ecmp16 / ecmp2, 0.8);
  const CommandResult bad =
      run_collsim("scale h100-nvlink-4 --op allreduce --bytes 1M --nodes 1 --routing ecmp");
  EXPECT_EQ(bad.status, 1);
  EXPECT_EQ(bad.err,
            "collsim: --routing: h100-nvlink-4 has no network; routing applies to fat_tree and "
            "rail_optimized networks\n");
}

TEST(ScaleCommand, TableCsvAndPlot) {
  const CommandResult t = run_collsim(
      "scale dgx-h100 --op allgather --bytes 64M --nodes 1,2 --algo ring --proto simple");
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_NE(t.out.find("# collsim scale: allgather of 64 MiB (f32) on dgx-h100, 1 to 2 nodes"),
            std::string::npos)
      << t.out;
  EXPECT_NE(t.out.find("best: ring/simple: 1-2 nodes"), std::string::npos) << t.out;
  const CommandResult c = run_collsim(
      "scale dgx-h100 --op allgather --bytes 64M --nodes 1,2 --algo ring --proto simple "
      "--format csv");
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_EQ(c.out.substr(0, c.out.find('\n')),
            "nodes,collective,algorithm,protocol,channels,ranks,bytes,count,dtype,time_us,"
            "algbw_GBps,busbw_GBps");
  EXPECT_EQ(std::count(c.out.begin(), c.out.end(), '\n'), 3);
  const auto svg = std::filesystem::temp_directory_path() / "collsim_scale_test.svg";
  std::filesystem::remove(svg);
  const CommandResult p = run_collsim(
      "scale dgx-h100 --op allreduce --bytes 1M --nodes 1:4 --algo ring --format csv --plot " +
      svg.string());
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    // A machine without gnuplot (scripts/install-deps.sh installs it; a GPU machine may not have
    // it): the precise error, not a plot.
    EXPECT_EQ(p.status, 1);
    EXPECT_NE(p.err.find("--plot needs gnuplot, which is not installed"), std::string::npos)
        << p.err;
    return;
  }
  ASSERT_EQ(p.status, 0) << p.err;
  ASSERT_TRUE(std::filesystem::exists(svg));
  EXPECT_GT(std::filesystem::file_size(svg), 1000u);
}

TEST(ScaleCommand, ACandidateFirstCostedAtMoreNodesOpensAColumn) {
  // NVLSTree joins nodes, so it is costed from 2 nodes on: its column opens there, under a new
  // header, while the rows stream (it used to be named only below the table).
  const CommandResult t = run_collsim(
      "scale h100-2node-ib --op allreduce --bytes 1M --nodes 1,2 --algo nvls,nvls_tree "
      "--proto simple");
  ASSERT_EQ(t.status, 0) << t.err;
  std::vector<std::string> lines;
  for (std::size_t at = 0, nl; (nl = t.out.find('\n', at)) != std::string::npos; at = nl + 1) {
    lines.push_back(t.out.substr(at, nl - at));
  }
  const auto line_of = [&](std::string_view start) {
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (lines[i].starts_with(start)) return i;
    }
    ADD_FAILURE() << "no line starts with \"" << start << "\" in\n" << t.out;
    return lines.size();
  };
  const std::size_t one = line_of("      1        8 "), two = line_of("      2       16 ");
  const std::size_t opened = line_of("# from 2 nodes also costed: nvls_tree/simple");
  ASSERT_LT(two, lines.size());
  EXPECT_LT(one, opened);
  EXPECT_EQ(two, opened + 3);  // the two header lines between
  EXPECT_EQ(lines[opened + 1].find("nvls_tree"), lines[opened + 1].rfind("nvls_tree"));
  EXPECT_NE(lines[opened + 1].find("nvls_tree"), std::string::npos) << lines[opened + 1];
  EXPECT_EQ(lines[one].find("nvls_tree"), std::string::npos);
  // 2 nodes: no value under nvls (one NVLink domain), NVLSTree's time under its own column.
  std::istringstream row(lines[two]);
  std::string nodes, ranks, nvls, nvls_tree, best;
  row >> nodes >> ranks >> nvls >> nvls_tree >> best;
  EXPECT_EQ(nvls, "-");
  EXPECT_EQ(nvls_tree.back(), '*') << lines[two];
  EXPECT_EQ(best, "nvls_tree/simple");
  EXPECT_EQ(t.out.find("not in the columns"), std::string::npos);
}

TEST(ScaleCommand, NodeLists) {
  EXPECT_EQ(parse_node_counts("1,4,64"), (std::vector<int>{1, 4, 64}));
  EXPECT_EQ(parse_node_counts("1:16"), (std::vector<int>{1, 2, 4, 8, 16}));
  EXPECT_EQ(parse_node_counts("3:20:3"), (std::vector<int>{3, 9, 20}));
  EXPECT_EQ(parse_node_counts("5:5"), (std::vector<int>{5}));
  for (const char* bad : {"", "0", "1,,2", "4,2", "2,2", "x", "1:", "8:4", "1:8:1", "1:2:3:4",
                          "1048577", "-1"}) {
    EXPECT_THROW(parse_node_counts(bad), RequestError) << bad;
  }
  const CommandResult r = run_collsim("scale dgx-h100 --op allreduce --bytes 1M --nodes 4,2");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "collsim: --nodes 4,2: node counts must increase (2 after 4)\n");
  const CommandResult m = run_collsim("scale dgx-h100 --op allreduce --bytes 1M");
  EXPECT_EQ(m.status, 2);
  EXPECT_NE(m.err.find("--nodes is required"), std::string::npos) << m.err;
}

}  // namespace
}  // namespace collsim::test
