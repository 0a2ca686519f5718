// What a command line says about how an nccl-tests program was launched: which program, how
// many processes on how many nodes, how many GPUs and threads per process, which environment.
//
//   auto l = parse_launch_command("mpirun -np 16 -H a:8,b:8 -x NCCL_ALGO=Ring "
//                                 "./build/all_reduce_perf -b 8 -e 8G -g 1");
//   // l->program == "all_reduce", l->processes == 16, l->nodes == 2, l->gpus == 1,
//   // l->env == {{"NCCL_ALGO", "Ring"}}
//
// Only what the line states is returned: an option that is absent or not a plain integer
// ("-np $NP", "-g {2,4,6}") leaves its field empty, never a default. A line that does not start
// with the launcher or the program (after KEY=VALUE prefixes) is prose that merely names the
// program ("not committed; all_reduce_perf single-size runs"): only `program` is set.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace collsim {

struct LaunchCommand {
  std::string program;      // nccl-tests program stem: "all_reduce" for ./build/all_reduce_perf
  bool is_command = false;  // the line starts with the launcher or the program; else prose
  bool launcher = false;    // mpirun, mpiexec, orterun, srun, aprun or jsrun precedes the program
  std::optional<int> processes;  // -np / -n / --ntasks, or nodes x per_node
  std::optional<int> nodes;      // srun -N / --nodes; mpirun -H / --host list entries
  std::optional<int> per_node;   // mpirun -N / --npernode / --map-by ppr:K:node; srun
                                 // --ntasks-per-node
  std::optional<int> gpus;       // the program's -g / --ngpus
  std::optional<int> threads;    // the program's -t / --nthreads
  // The program's -R / --local_register: 1 registers the buffers with NCCL (ncclCommRegister),
  // 2 as symmetric memory (ncclCommWindowRegister, NCCL 2.27+); empty for 0 or none.
  std::optional<int> registration;
  std::vector<std::pair<std::string, std::string>> env;  // mpirun -x KEY=VALUE
};

// nullopt when no word of the line names an nccl-tests *_perf program.
std::optional<LaunchCommand> parse_launch_command(std::string_view line);

// Whether `word` is a launcher program (path allowed): mpirun, mpiexec, orterun, srun, ...
bool is_launcher(std::string_view word);

}  // namespace collsim
