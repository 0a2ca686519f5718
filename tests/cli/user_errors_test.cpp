// Every mistake a user can make on the command of sweep, compare, predict and trace: one line on
// stderr and exit status 1 (docs/cli.md); usage errors (unknown option, out-of-range value) exit 2
// with the command's help.
#include <gtest/gtest.h>

#include "tests/cli/run_collsim.hpp"

namespace collsim::test {
namespace {

TEST(UserErrors, OneLineAndExitOne) {
  struct Case {
    std::string args, message;
  };
  const Case kCases[] = {
      {"sweep dgx-h100 --op allreduse",
       "collsim: unknown collective \"allreduse\": expected one of allreduce, allgather, "
       "reducescatter, broadcast, reduce, gather, scatter, alltoall, barrier, sendrecv; did you "
       "mean \"allreduce\"?\n"},
      {"compare dgx-h100 --op alltoall --algo ring",
       "collsim: algorithm \"ring\" does not implement alltoall; algorithms that do: direct\n"},
      {"predict dgx-h100 --op allreduce --bytes 1M --algo collnet_direct",
       "collsim: --select nccl: NCCL does not run collnet_direct for allreduce on this cluster; "
       "--proto runs it anyway (NCCL could not), --select best picks the fastest\n"},
      {"predict h100-2node-ib --op allreduce --bytes 1M --algo collnet_direct --proto simple",
       "collsim: algorithm \"collnet_direct\" needs switches that reduce (InfiniBand SHARP) with "
       "NCCL's CollNet enabled; h100-2node-ib says network.sharp: false\n"},
      {"predict " COLLSIM_SOURCE_DIR
       "/tests/data/configs/held-out/aws-p4d.yaml --op allreduce --bytes 8 --proto ll",
       "collsim: --select nccl: NCCL runs none of the allowed protocols (ll) on this cluster: its "
       "NICs do not deliver each 128-byte block in order, so its network plugin leaves NCCL "
       "Simple only\n"},
      {"predict " COLLSIM_SOURCE_DIR
       "/tests/data/configs/held-out/aws-p4d.yaml --op allreduce --bytes 8 --algo ring --proto "
       "ll128",
       "collsim: protocol ll128 needs NICs that deliver each 128-byte block in order, and "
       "aws-p4d's do not (node.nics.in_order: false): its network plugin runs NCCL with Simple "
       "only\n"},
      {"predict pcie-2gpu --op allreduce --bytes 8 --proto ll128",
       "collsim: --select nccl: NCCL runs none of the allowed protocols (ll128) on this cluster: "
       "LL128 needs NVLink between the GPUs; --algo with --proto ll128 runs it anyway (NCCL "
       "could not)\n"},
      {"predict dgx-h100 --op allreduce --bytes 0",
       "collsim: --bytes 0: no element to move; allreduce of f32 needs at least 4 B\n"},
      // An all-to-all of Summit's 27,648 GPUs: refused at once, not run for hours.
      {"predict summit --op alltoall --bytes 16M",
       "collsim: --select nccl picked P2P/LL, but simulating alltoall by direct on 27648 ranks "
       "connects every rank with every other, 764384256 pairs, and the simulator holds at most "
       "4192256 (2048 ranks, docs/scale.md); --model alpha-beta gives its closed form\n"},
      {"scale h100-16node-ib --op alltoall --bytes 1M --nodes 512",
       "collsim: --model sim can cost none of the allowed algorithms for alltoall on 512 nodes: "
       "simulating alltoall by direct on 4096 ranks connects every rank with every other, "
       "16773120 pairs, and the simulator holds at most 4192256 (2048 ranks, docs/scale.md); "
       "--model alpha-beta gives its closed form\n"},
      {"trace dgx-h100 --op allgather --bytes 8 -o x.json",
       "collsim: --bytes 8: no element to move; allgather of f32 needs at least 32 B (one "
       "element per rank, 8 ranks)\n"},
      {"sweep dgx-h100 --op allreduce -b 0",
       "collsim: -b 0: the sweep would never grow (0 x 2 = 0); start at one element or more\n"},
      {"sweep dgx-h100 --op allreduce -b 6",
       "collsim: -b 6: size 6 B is not a multiple of the f32 element size (4 B)\n"},
      {"compare dgx-h100 --op allreduce -b 1G -e 1M",
       "collsim: -b 1G (1073741824 B) is greater than -e 1M (1048576 B)\n"},
      {"sweep dgx-h100 --op allreduce -e 1X",
       "collsim: -e 1X: expected a size such as \"64MiB\", got \"1X\"\n"},
      {"sweep tests/data/configs/missing.yaml --op allreduce",
       "collsim: tests/data/configs/missing.yaml: cannot open the config file\n"},
      {"sweep dgx-h100 --op allreduce --proto ^ll,ll128,simple",
       "collsim: --proto \"^ll,ll128,simple\" leaves no protocol\n"},
      {"predict dgx-h100 --op barrier --bytes 0 --select nccl",
       "collsim: --select nccl: NCCL has no barrier collective; use --select best\n"},
      {"sweep dgx-h100 --op allreduce --model nccl --nccl-graph ring=8",
       "collsim: --nccl-graph: expected NAME=CHANNELSxGBPS[/INTER_GBPS] with NAME ring, tree or "
       "nvls (e.g. ring=8x24,tree=8x24), got \"ring=8\"\n"},
      {"predict dgx-h100 --op allreduce --bytes 1M --model nccl --nccl-version 2.31",
       "collsim: --nccl-version: unknown NCCL version \"2.31\": expected a release such as 2.26 "
       "or 2.26.2, from 2.0 to 2.30.7 (the newest collsim models), or head\n"},
      {"predict dgx-h100 --op allreduce --bytes 1M --model nccl --algo rhd",
       "collsim: --model nccl: NCCL has no algorithm \"rhd\"; NCCL's are ring, dbtree (Tree), "
       "nvls, nvls_tree, pat, collnet_direct, collnet_chain\n"},
      {"predict dgx-h100 --op allgather --bytes 1M --algo pat",
       "collsim: --select nccl: NCCL does not run pat for allgather on this cluster (NCCL runs "
       "PAT with one GPU per node only); --proto runs it anyway (NCCL could not), --select best "
       "picks the fastest\n"},
      {"compare dgx-h100 --op allreduce -e 1K --plot plot.pdf",
       "collsim: --plot: expected a file ending in .svg or .png, got \"plot.pdf\"\n"},
  };
  for (const Case& c : kCases) {
    const CommandResult r = run_collsim(c.args);
    EXPECT_EQ(r.status, 1) << c.args;
    EXPECT_EQ(r.err, c.message) << c.args;
    EXPECT_EQ(r.out, "") << c.args;
  }
}

TEST(UserErrors, UsageErrorsExitTwoWithHelp) {
  const std::string kCases[] = {
      "sweep dgx-h100 --op allreduce -f 1",
      "compare dgx-h100 --op allreduce --frobnicate",
      "sweep dgx-h100 --op allreduce --format xml",
      "predict dgx-h100 --op allreduce --bytes 1M --select fastest",
      "sweep dgx-h100",
  };
  for (const std::string& args : kCases) {
    const CommandResult r = run_collsim(args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_EQ(r.err.rfind("collsim: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("Usage:"), std::string::npos) << args << "\n" << r.err;
  }
}

}  // namespace
}  // namespace collsim::test
