// Every subcommand, fed bad arguments and bad files: each gives a clear first line on stderr
// ("collsim: what was wrong"), exit status 1 for a user error (that one line and nothing else)
// or 2 for a usage error (the line, then the command's help), and never a crash (a signal) or an
// uncaught exception. A row per case; "{D}" stands for tests/data.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/cli/run_collsim.hpp"

namespace collsim {
namespace {

struct BadCall {
  std::string args;
  int status;
  std::string first_line;
};

const std::vector<BadCall> kCatalogue = {
    {"topo", 2, "collsim: CONFIG is required"},
    {"topo dgx-h100 --nodes 0", 2, "collsim: --nodes: Value 0 not in range 1 to 1048576"},
    {"topo dgx-h100 --format xml", 2, "collsim: --format: xml not in {table,json}"},
    {"topo {D}/configs/bad/syntax-error.yaml", 1,
     "collsim: {D}/configs/bad/syntax-error.yaml:3:5: invalid YAML: end of sequence flow not "
     "found"},
    {"list --bogus", 2, "collsim: The following argument was not expected: --bogus"},
    {"plan dgx-h100 --op allreduce --bytes 3", 1,
     "collsim: size 3 B is not a multiple of the f32 element size (4 B)"},
    {"predict dgx-h100 --op allreduce", 2, "collsim: --bytes is required"},
    {"predict dgx-h100 --op allreduce --bytes 64Q", 1,
     "collsim: --bytes: expected a size such as \"64MiB\", got \"64Q\""},
    {"predict dgx-h100 --op allreduce --bytes 1M --proto ll256", 1,
     "collsim: --proto: unknown protocol \"ll256\": expected one of ll, ll128, simple"},
    {"predict dgx-h100 --op allreduce --bytes 1M --channels 0", 2,
     "collsim: --channels: Value 0 not in range 1 to 1024"},
    {"predict dgx-h100 --op allreduce --bytes 1M --model magic", 2,
     "collsim: --model: magic not in {sim,contention-free,alpha-beta,nccl}"},
    {"predict dgx-h100 --op allreduce --bytes 1M --nccl-version 1.0", 1,
     "collsim: --nccl-version: unknown NCCL version \"1.0\": expected a release such as 2.26 or "
     "2.26.2, from 2.0 to 2.30.7 (the newest collsim models), or head"},
    {"predict dgx-h100 --op allreduce --bytes 1M --costs /nonexistent.yaml", 1,
     "collsim: /nonexistent.yaml: cannot open the costs file"},
    {"predict dgx-h100 --op broadcast --bytes 1M --root 9", 1,
     "collsim: root 9 is not a rank of this 8-rank communicator"},
    {"trace dgx-h100 --op allreduce --bytes 1M", 2, "collsim: --output is required"},
    {"trace dgx-h100 --op allreduce --bytes 1M -o /nonexistent-dir/t.json", 1,
     "collsim: -o /nonexistent-dir/t.json: the directory \"/nonexistent-dir\" does not exist"},
    {"sweep dgx-h100 --op allreduce -b 1M -e 1K", 1,
     "collsim: -b 1M (1048576 B) is greater than -e 1K (1024 B)"},
    {"sweep dgx-h100 --op allreduce -b 8 -e 1M -f 1", 2,
     "collsim: --stepfactor: Value 1 not in range 2 to 1048576"},
    {"compare dgx-h100 --op allreduce --plot /tmp/x.gif", 1,
     "collsim: --plot: expected a file ending in .svg or .png, got \"/tmp/x.gif\""},
    {"bench --backend quantum --op allreduce", 1,
     "collsim: unknown backend \"quantum\": expected one of cpu, mpi, cuda, nccl, nccl-native, "
     "dry-run"},
    {"bench --backend cpu --op allreduce --algo rung", 1,
     "collsim: --algo: unknown algorithm \"rung\": expected one of ring, bintree, dbtree, ring2d, "
     "rhd, direct, binomial, nvls, nvls_tree, pat, collnet_direct, collnet_chain, tree, "
     "collnetdirect, collnetchain, nvlstree; did you mean \"ring\"?"},
    {"calibrate dgx-h100 --measurements /nonexistent -o /tmp/x.yaml", 2,
     "collsim: --measurements: File does not exist: /nonexistent"},
    {"calibrate dgx-h100 --measurements {D}/nccl-tests-bad/garbage.txt -o /tmp/x.yaml", 1,
     "collsim: {D}/nccl-tests-bad/garbage.txt: no measurement rows; expected an nccl-tests table "
     "(rows that start with the size in bytes) or a collsim CSV; first unrecognised line 2: "
     "\"Segmentation fault (core dumped)\""},
    {"calibrate pcie-2gpu --measurements "
     "{D}/nccl-tests/rtx2080ti-x2_1node-pcie-noP2P_allreduce_anthony-hoo-blog.txt -o "
     "/nonexistent-dir/x.yaml",
     1, "collsim: -o /nonexistent-dir/x.yaml: the directory \"/nonexistent-dir\" does not exist"},
    {"validate dgx-h100 --measurements {D}/nccl-tests-bad/truncated-row.txt", 1,
     "collsim: {D}/nccl-tests-bad/truncated-row.txt:24: expected 13 columns as in the header at "
     "line 19, got 6 (truncated row?)"},
    {"validate dgx-h100 --measurements {D}/nccl-tests-bad/garbage.txt --format yaml", 2,
     "collsim: --format: yaml not in {table,csv,json}"},
    {"validate pcie-2gpu --measurements {D}/nccl-tests/h100x8_1node_allreduce_NVLS_together.txt", 1,
     "collsim: {D}/nccl-tests/h100x8_1node_allreduce_NVLS_together.txt:23: 8 ranks do not fit the "
     "cluster pcie-2gpu (2 GPUs, 2 per node): expected all of its GPUs, at most 2 on one node, or "
     "whole nodes"},
    {"validate dgx-h100 --measurements {D}/nccl-tests-bad/garbage.txt --min-bytes 1X", 1,
     "collsim: --min-bytes: expected a size such as \"64MiB\", got \"1X\""},
    {"calibrate pcie-2gpu --measurements {D}/nccl-tests-bad/garbage.txt --op allgathr -o x.yaml", 1,
     "collsim: unknown collective \"allgathr\": expected one of allreduce, allgather, "
     "reducescatter, broadcast, reduce, gather, scatter, alltoall, barrier, sendrecv; did you "
     "mean \"allgather\"?"},
};

std::string with_data(std::string s) {
  const std::string data = std::string(COLLSIM_SOURCE_DIR) + "/tests/data";
  for (std::size_t at; (at = s.find("{D}")) != std::string::npos;) s.replace(at, 3, data);
  return s;
}

class ErrorCatalogue : public ::testing::TestWithParam<BadCall> {};

TEST_P(ErrorCatalogue, OneClearLineAndTheRightStatus) {
  const BadCall& c = GetParam();
  const test::CommandResult r = test::run_collsim(with_data(c.args));
  ASSERT_LT(r.status, 128) << "killed by a signal: " << r.err;
  EXPECT_EQ(r.status, c.status) << r.err;
  const std::string first = r.err.substr(0, r.err.find('\n'));
  EXPECT_EQ(first, with_data(c.first_line));
  if (c.status == 1) {
    EXPECT_EQ(r.err, first + "\n") << "a user error is one line";
  }
  EXPECT_EQ(r.err.find("terminate called"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(EverySubcommand, ErrorCatalogue, ::testing::ValuesIn(kCatalogue));

}  // namespace
}  // namespace collsim
