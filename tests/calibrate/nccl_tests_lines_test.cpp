// The single-line parsers and name tables behind the reader, each on the forms real logs contain.
#include "calibrate/nccl_tests_lines.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "algorithms/ir/nccl_tests_names.hpp"
#include "calibrate/launch_command.hpp"
#include "calibrate/nccl_tests_row.hpp"

namespace collsim {
namespace {

using Assignments = std::vector<std::pair<std::string, std::string>>;

TEST(NcclTestsLines, StripLinePrefix) {
  EXPECT_EQ(detail::strip_line_prefix("[3] #  Rank 3"), " #  Rank 3");
  EXPECT_EQ(detail::strip_line_prefix("12:      8    2 float"), "      8    2 float");
  EXPECT_EQ(detail::strip_line_prefix(" 3: # nThread 1"), " # nThread 1");
  EXPECT_EQ(detail::strip_line_prefix("(head, rank=0, pid=3808) # nThread 1"), " # nThread 1");
  EXPECT_EQ(detail::strip_line_prefix("(RayTrainWorker pid=91, ip=10.0.0.2)     8    2 float"),
            "     8    2 float");
  // Not prefixes: a row, an NCCL line, a bracketed host, a remark in parentheses.
  EXPECT_EQ(detail::strip_line_prefix("    8    2 float"), "    8    2 float");
  EXPECT_EQ(detail::strip_line_prefix("gcn151:1:2 [0] NCCL INFO"), "gcn151:1:2 [0] NCCL INFO");
  EXPECT_EQ(detail::strip_line_prefix("[host:123] warning"), "[host:123] warning");
  EXPECT_EQ(detail::strip_line_prefix("(see pid=x) note"), "(see pid=x) note");
}

std::vector<std::pair<int, std::string>> unwrapped(const std::vector<std::string_view>& lines) {
  std::vector<std::pair<int, std::string>> out;
  for (detail::LogLine& l : detail::unwrap_log(lines)) out.emplace_back(l.line, std::move(l.text));
  return out;
}

TEST(NcclTestsLines, UnwrapOpenMpiTags) {
  using Lines = std::vector<std::pair<int, std::string>>;
  EXPECT_EQ(unwrapped({"[1,0]<stdout>:# Using devices", "[1,12]<stderr>:oops", "plain"}),
            (Lines{{1, "# Using devices"}, {2, "oops"}, {3, "plain"}}));
  // Rank 3's line cut into rank 0's row: each rank's pieces make its own line, numbered where
  // it began, in the order the lines end.
  // Streams are apart: rank 3's stderr piece waits for its own end.
  EXPECT_EQ(unwrapped({"[1,0]<stdout>:   8   2  float[1,3]<stdout>:h:1:2 [3] NCCL INFO x",
                       "[1,3]<stderr>:warn[1,0]<stdout>:  sum  -1", "[1,3]<stderr>:ing"}),
            (Lines{{1, "h:1:2 [3] NCCL INFO x"}, {1, "   8   2  float  sum  -1"}, {2, "warning"}}));
  // Left unfinished at the end of the file: still read, in line order.
  EXPECT_EQ(unwrapped({"[1,1]<stdout>:a[1,0]<stdout>:b", "[1,2]<stdout>:c[1,0]<stdout>:d"}),
            (Lines{{1, "b"}, {2, "d"}, {1, "a"}, {2, "c"}}));
  // Untagged text ends where a tag cuts in: a note quoting a tag does not swallow the next line.
  EXPECT_EQ(unwrapped({"# note: as in [1,0]<stdout>:x", "# command: y"}),
            (Lines{{1, "# note: as in "}, {1, "x"}, {2, "# command: y"}}));
  // Not tags: the brackets of an NCCL line, a tag without its stream.
  EXPECT_EQ(unwrapped({"h:1:2 [0] NCCL INFO [1,0] x", "[1,0]:y"}),
            (Lines{{1, "h:1:2 [0] NCCL INFO [1,0] x"}, {2, "[1,0]:y"}}));
}

TEST(NcclTestsLines, DeviceLines) {
  const auto d = detail::parse_device_line(
      " Rank  1 Group  0 Pid 224660 on       n014 device  0 [0000:81:00] NVIDIA A100-PCIE-40GB",
      12);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->rank, 1);
  EXPECT_EQ(d->host, "n014");
  EXPECT_EQ(d->device, 0);
  EXPECT_EQ(d->bus_id, "0000:81:00");
  EXPECT_EQ(d->gpu_name, "NVIDIA A100-PCIE-40GB");
  EXPECT_EQ(d->line, 12);
  // The old format has no Group.
  const auto old = detail::parse_device_line(
      "   Rank 13 Pid     38 on nccl-tests-efa-16-worker-1 device  5 [0x90] A100-SXM4-40GB", 1);
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(old->rank, 13);
  EXPECT_EQ(old->device, 5);
  EXPECT_EQ(old->gpu_name, "A100-SXM4-40GB");
  EXPECT_FALSE(detail::parse_device_line(" Using devices", 1).has_value());
}

TEST(NcclTestsLines, RunHeader) {
  const auto p = detail::parse_run_header(
      "nThread 2 nGpus 4 minBytes 1048576 maxBytes 1073741824 step: 10485760(bytes) warmup "
      "iters: 1 iters: 20 agg iters: 3 validation: 0 graph: 1",
      9);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->threads, 2);
  EXPECT_EQ(p->gpus_per_thread, 4);
  EXPECT_EQ(p->step_bytes, 10485760u);
  EXPECT_FALSE(p->step_factor.has_value());
  EXPECT_EQ(p->warmup_iters, 1);
  EXPECT_EQ(p->iters, 20);
  EXPECT_EQ(p->agg_iters, 3);
  EXPECT_EQ(p->validation, 0);
  EXPECT_EQ(p->graph, 1);
  EXPECT_EQ(p->line, 9);
}

TEST(NcclTestsLines, ColumnHeaders) {
  std::string got;
  const auto cur = detail::parse_column_header(
      "size count type redop root time algbw busbw #wrong time algbw busbw #wrong", &got);
  ASSERT_TRUE(cur.has_value());
  EXPECT_TRUE(cur->has_root);
  EXPECT_FALSE(cur->old_error);
  EXPECT_EQ(cur->columns, 13);
  const auto old = detail::parse_column_header(
      "size count type redop time algbw busbw error time algbw busbw error", &got);
  ASSERT_TRUE(old.has_value());
  EXPECT_FALSE(old->has_root);
  EXPECT_TRUE(old->old_error);
  EXPECT_EQ(old->columns, 12);
  const auto oop =
      detail::parse_column_header("size count type redop root time algbw busbw #wrong", &got);
  ASSERT_TRUE(oop.has_value());
  EXPECT_FALSE(oop->has_inplace);
  EXPECT_EQ(oop->columns, 9);
  EXPECT_FALSE(
      detail::parse_column_header(
          "size count type redop root time algbw busbw #wrong time algbw busbw error", &got)
          .has_value());
  EXPECT_EQ(got, "size count type redop root time algbw busbw #wrong time algbw busbw error");
  using Words = std::vector<std::string_view>;
  const Words twelve(12, "1");
  EXPECT_EQ(detail::layout_for_row_fields(twelve)->has_root, false);
  EXPECT_FALSE(detail::layout_for_row_fields(Words(9, "1")).has_value());
}

// nccl-tests 2.19's additions: each group's per-iteration summary (-I 1) and the closing
// timestamp (-S 1), from a header or, without one, from the row itself.
TEST(NcclTestsLines, PerIterationAndTimestampColumns) {
  std::string got;
  const auto both = detail::parse_column_header(
      "size count type redop root time algbw busbw #wrong i_min i_max i_p99 i_cv% time algbw "
      "busbw #wrong i_min i_max i_p99 i_cv% timestamp",
      &got);
  ASSERT_TRUE(both.has_value());
  EXPECT_TRUE(both->per_iter);
  EXPECT_TRUE(both->timestamp);
  EXPECT_EQ(both->group_columns(), 8);
  EXPECT_EQ(both->columns, 23);
  const auto stamped = detail::parse_column_header(
      "size count type redop root time algbw busbw #wrong time algbw busbw #wrong timestamp", &got);
  ASSERT_TRUE(stamped.has_value());
  EXPECT_FALSE(stamped->per_iter);
  EXPECT_EQ(stamped->columns, 15);
  // The summary must close both groups or neither.
  EXPECT_FALSE(detail::parse_column_header("size count type redop root time algbw busbw #wrong "
                                           "i_min i_max i_p99 i_cv% time algbw busbw #wrong",
                                           &got)
                   .has_value());

  using Words = std::vector<std::string_view>;
  Words row(21, "1");
  EXPECT_TRUE(detail::layout_for_row_fields(row)->per_iter);
  row.push_back("2026-11-28");
  row.push_back("11:02:03");
  const auto dated = detail::layout_for_row_fields(row);
  ASSERT_TRUE(dated.has_value());
  EXPECT_TRUE(dated->timestamp);
  EXPECT_EQ(dated->columns, 23);
  // Two more numbers are no timestamp.
  EXPECT_FALSE(detail::layout_for_row_fields(Words(15, "1")).has_value());
}

TEST(NcclTestsLines, EnvAssignments) {
  EXPECT_EQ(detail::parse_env_assignments(
                "NCCL_DEBUG=INFO; NCCL_SOCKET_IFNAME=eno2np0 (log: set by environment); no "
                "NCCL_ALGO/NCCL_PROTO (auto); 8 coll channels"),
            (Assignments{{"NCCL_DEBUG", "INFO"}, {"NCCL_SOCKET_IFNAME", "eno2np0"}}));
  EXPECT_EQ(detail::parse_env_assignments("NCCL_DEBUG=INFO. The example sets NCCL_ALGO=RING"),
            (Assignments{{"NCCL_DEBUG", "INFO"}}));
  EXPECT_EQ(detail::parse_env_assignments("NCCL_IB_HCA=\"=mlx5_0,mlx5_1\" (2 HCAs); no"),
            (Assignments{{"NCCL_IB_HCA", "=mlx5_0,mlx5_1"}}));
  EXPECT_EQ(detail::parse_env_assignments("none shown"), Assignments{});
  EXPECT_EQ(detail::parse_env_assignments("NCCL_ALGO forced per arm"), Assignments{});
}

TEST(NcclTestsLines, Labels) {
  EXPECT_EQ(detail::parse_label(" ALGO=Ring size=268435456"),
            (std::map<std::string, std::string>{{"ALGO", "Ring"}, {"size", "268435456"}}));
  EXPECT_TRUE(detail::parse_label(" results below").empty());
}

TEST(NcclTestsLines, Versions) {
  EXPECT_EQ(detail::nccl_version_from_code(22902), "2.29.2");
  EXPECT_EQ(detail::nccl_version_from_code(23004), "2.30.4");
  EXPECT_EQ(detail::nccl_version_from_code(2708), "2.7.8");  // before 2.9: 1000 x major
  EXPECT_EQ(detail::find_nccl_version("NCCL version 2.29.2+cuda13.1"), "2.29.2");
  EXPECT_EQ(detail::find_nccl_version("h:1:1 [0] NCCL INFO NCCL version 2.9.9+cuda11.2"), "2.9.9");
  EXPECT_FALSE(detail::find_nccl_version("NCCL version unknown").has_value());
  // A curated file's "# nccl:" line states one only where it opens with it.
  EXPECT_EQ(detail::leading_nccl_version("2.22.3+cuda12.6 (printed in log)"), "2.22.3");
  EXPECT_EQ(detail::leading_nccl_version("2.29.2 (header nccl-library=22902)"), "2.29.2");
  EXPECT_FALSE(detail::leading_nccl_version("probably 2.29.2 (not printed)").has_value());
  EXPECT_FALSE(detail::leading_nccl_version("not printed").has_value());
}

TEST(NcclTestsLines, NumbersAsPrinted) {
  const auto t = detail::parse_printed("182.87");
  ASSERT_TRUE(t.has_value());
  EXPECT_DOUBLE_EQ(t->half_unit, 0.005);
  EXPECT_DOUBLE_EQ(detail::parse_printed("110912")->half_unit, 0.5);
  EXPECT_DOUBLE_EQ(detail::parse_printed("2e-07")->value, 2e-07);
  EXPECT_DOUBLE_EQ(detail::parse_printed("2e-07")->half_unit, 0.5e-07);
  EXPECT_FALSE(detail::parse_printed("inf").has_value());
  EXPECT_FALSE(detail::parse_printed("nan").has_value());
  EXPECT_FALSE(detail::parse_printed("N/A").has_value());
  EXPECT_FALSE(detail::parse_printed("1.2.3").has_value());
  EXPECT_TRUE(detail::looks_like_number("33554432"));
  EXPECT_TRUE(detail::looks_like_number("3.3e7"));
  EXPECT_TRUE(detail::looks_like_number("32M"));
  EXPECT_FALSE(detail::looks_like_number("0666a154:12:12"));
  EXPECT_FALSE(detail::looks_like_number("2024-01-01"));
}

TEST(LaunchCommand, Mpirun) {
  const auto c = parse_launch_command(
      "mpirun --np 16 -H bm-h100-01:8,bm-h100-02:8 --mca pml ucx -x NCCL_ALGO=Ring -x "
      "LD_LIBRARY_PATH all_reduce_perf_mpi -b 8 -e 16g -f 2 -g 1 -n 50");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->program, "all_reduce");
  EXPECT_TRUE(c->is_command);
  EXPECT_TRUE(c->launcher);
  EXPECT_EQ(c->processes, 16);  // "-n 50" after the program is nccl-tests' iteration count
  EXPECT_EQ(c->nodes, 2);
  EXPECT_EQ(c->gpus, 1);
  EXPECT_EQ(c->env, (Assignments{{"NCCL_ALGO", "Ring"}}));
  EXPECT_FALSE(c->registration.has_value());
  // nccl-tests' buffer registration: -R 1 (ncclCommRegister), 2 (symmetric windows); 0 is none.
  EXPECT_EQ(parse_launch_command("./all_reduce_perf -b 8 -e 16M -g 4 -R 2 -G 0")->registration, 2);
  EXPECT_EQ(parse_launch_command("all_gather_perf --local_register 1")->registration, 1);
  EXPECT_FALSE(parse_launch_command("./all_reduce_perf -g 4 -R 0")->registration.has_value());
}

TEST(LaunchCommand, PerNodeAndSrun) {
  const auto ppr = parse_launch_command(
      "mpirun -np 32 --hostfile hostfile --map-by ppr:8:node all_reduce_perf -b 8 -e 8G -f 2 -g 1");
  EXPECT_EQ(ppr->nodes, 4);
  const auto srun = parse_launch_command("srun -n 8 -N 2 ./build/all_gather_perf_mpi -b 8 -g1");
  EXPECT_EQ(srun->program, "all_gather");
  EXPECT_EQ(srun->processes, 8);
  EXPECT_EQ(srun->nodes, 2);
  EXPECT_EQ(srun->gpus, 1);
}

TEST(LaunchCommand, OnlyWhatIsStated) {
  const auto var = parse_launch_command("mpirun --bind-to numa -np $NP /opt/all_reduce_perf -g 1");
  EXPECT_TRUE(var->launcher);
  EXPECT_FALSE(var->processes.has_value());
  const auto braces = parse_launch_command("all_reduce_perf -b 256M -e 8G -g {2,4,6}");
  EXPECT_FALSE(braces->launcher);
  EXPECT_FALSE(braces->gpus.has_value());
  const auto prose = parse_launch_command("not committed; all_reduce_perf single-size runs -g 4");
  ASSERT_TRUE(prose.has_value());
  EXPECT_EQ(prose->program, "all_reduce");
  EXPECT_FALSE(prose->is_command);
  EXPECT_FALSE(prose->gpus.has_value());
  EXPECT_FALSE(parse_launch_command("bash NCCL.sh").has_value());
  EXPECT_TRUE(parse_launch_command("NCCL_ALGO=Ring ./sendrecv_perf -g 2")->is_command);
}

TEST(NcclTestsNames, Programs) {
  EXPECT_EQ(perf_program_stem("./build/reduce_scatter_perf"), "reduce_scatter");
  EXPECT_EQ(perf_program_stem("all_reduce_perf;"), "all_reduce");
  EXPECT_EQ(perf_program_stem("perf"), "");
  EXPECT_EQ(collective_of_program("alltoall"), Collective::kAllToAll);
  EXPECT_EQ(collective_of_program("gather"), Collective::kGather);
  EXPECT_FALSE(collective_of_program("hypercube").has_value());
}

// What the table writer prints reads back as what it was written from (one table, both ways).
TEST(NcclTestsNames, WrittenNamesReadBack) {
  for (Collective c : all_collectives()) {
    const auto stem = nccl_tests_program(c);
    if (c == Collective::kBarrier) {
      EXPECT_FALSE(stem.has_value());  // nccl-tests has no barrier_perf
      continue;
    }
    ASSERT_TRUE(stem.has_value()) << to_string(c);
    EXPECT_EQ(collective_of_program(*stem), c);
  }
  for (DataType t : all_data_types()) {
    EXPECT_EQ(data_type_of(nccl_tests_type(t)), t);
    EXPECT_EQ(nccl_tests_type_size(nccl_tests_type(t)), element_size(t));
  }
  for (ReduceOp op : all_reduce_ops()) EXPECT_EQ(reduce_op_of(nccl_tests_redop(op)), op);
  EXPECT_EQ(nccl_tests_program(Collective::kReduceScatter), "reduce_scatter");
  EXPECT_EQ(nccl_tests_type(DataType::kF32), "float");
  EXPECT_EQ(nccl_tests_type(DataType::kBf16), "bfloat16");
}

TEST(NcclTestsNames, TypesAndFactors) {
  EXPECT_EQ(nccl_tests_type_size("bfloat16"), 2u);
  EXPECT_EQ(nccl_tests_type_size("f8e4m3"), 1u);
  EXPECT_FALSE(nccl_tests_type_size("float8").has_value());
  EXPECT_EQ(data_type_of("half"), DataType::kF16);
  EXPECT_EQ(data_type_of("f32"), DataType::kF32);
  // All twelve of NCCL's types (src/nccl.h.in), under nccl-tests' names.
  EXPECT_EQ(data_type_of("uint32"), DataType::kU32);
  EXPECT_EQ(data_type_of("int8"), DataType::kI8);
  EXPECT_EQ(data_type_of("uint64"), DataType::kU64);
  EXPECT_EQ(data_type_of("f8e4m3"), DataType::kF8E4M3);
  EXPECT_EQ(data_type_of("f8e5m2"), DataType::kF8E5M2);
  EXPECT_FALSE(data_type_of("f4e2m1").has_value());
  EXPECT_EQ(data_type_of("char"), DataType::kI8);  // nccl-tests' older names
  EXPECT_EQ(data_type_of("int"), DataType::kI32);
  EXPECT_EQ(reduce_op_of("avg"), ReduceOp::kAvg);
  EXPECT_FALSE(reduce_op_of("none").has_value());
  // docs/nccl-model.md §3.
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kReduceScatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllToAll, 2), 0.5);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kBroadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kSendRecv, 2), 1.0);
}

}  // namespace
}  // namespace collsim
