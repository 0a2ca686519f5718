// `collsim plan CONFIG --op OP --bytes SIZE --algo ALGO [--proto P] [--channels N]`: the schedule
// in its readable text form. `collsim list [--op OP]`: which algorithm runs which collective.
#include <iostream>
#include <memory>

#include "algorithms/format.hpp"
#include "algorithms/registry.hpp"
#include "cli/commands.hpp"
#include "cli/request_options.hpp"

namespace collsim {

void register_plan(CLI::App& app) {
  auto opts = std::make_shared<RequestOptions>();
  auto max_ops = std::make_shared<std::uint64_t>(64);
  CLI::App* cmd = app.add_subcommand("plan", "Print the schedule an algorithm generates");
  add_request_options(*cmd, *opts);
  cmd->add_option("--max-ops", *max_ops, "ops printed per channel (0: all)")
      ->capture_default_str();
  cmd->callback([opts, max_ops] {
    const Topology topo = opts->load();
    const Schedule s = plan(opts->request(topo));
    write_schedule(std::cout, s, *max_ops == 0 ? kAllOps : *max_ops);
  });
}

void register_list(CLI::App& app) {
  auto op = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "list", "The algorithms x collectives x protocols collsim can generate");
  cmd->add_option("--op", *op, "only this collective");
  cmd->callback([op] {
    std::optional<Collective> only;
    if (!op->empty()) only = parse_collective(*op);
    std::cout << format_algorithm_matrix(only);
  });
}

}  // namespace collsim
