// `collsim plan CONFIG --op OP --bytes SIZE [--algo A] [--proto P] [--channels N]`: the schedule
// in its readable text form. `collsim list [--op OP]`: which algorithm runs which collective.
#include <iostream>
#include <memory>

#include "algorithms/generators/registry.hpp"
#include "algorithms/ir/format.hpp"
#include "cli/collective_args.hpp"
#include "cli/commands.hpp"
#include "cli/model_options.hpp"

namespace collsim {

void register_plan(CLI::App& app) {
  auto args = std::make_shared<CollectiveArgs>();
  auto model = std::make_shared<ModelArgs>();
  auto max_ops = std::make_shared<std::uint64_t>(64);
  CLI::App* cmd = app.add_subcommand("plan", "Print the schedule an algorithm generates");
  // The same options and defaults as predict: --algo/--proto auto resolve by --select under
  // --model, so `plan` shows the schedule `predict` would time.
  add_collective_options(cmd, *args);
  add_model_options(cmd, *model, all_models());
  cmd->add_option("--max-ops", *max_ops, "ops printed per channel (0: all)")->capture_default_str();
  cmd->callback([args, model, max_ops] {
    Prepared p = prepare(*args);
    const Predictor pr(predict_setup(p, *model));
    const Choice choice = pr.choose(p.request.count);
    // The request predict times: NCCL's channels at this size, and how it divides among them.
    p.request = pr.request(choice.candidate, p.request.count);
    if (choice.how != "fixed") {
      // Name only what was chosen: `--algo dbtree` leaves the protocol to choose, not the
      // algorithm.
      const bool algo = p.choice.algorithms.size() > 1, proto = p.choice.protocols.size() > 1;
      const std::string what = algo && proto ? "--algo/--proto" : algo ? "--algo" : "--proto";
      const std::string by =
          choice.how == "nccl" ? "as NCCL would pick" : "the fastest by --model " + model->model;
      std::cout << "# " << what << " chosen " << by << ": " << choice.candidate.algorithm << "/"
                << to_string(choice.candidate.protocol) << "\n";
    }
    const Schedule s = plan(p.request);
    write_schedule(std::cout, s, *max_ops == 0 ? kAllOps : *max_ops);
  });
}

void register_list(CLI::App& app) {
  auto op = std::make_shared<std::string>();
  CLI::App* cmd =
      app.add_subcommand("list", "The algorithms x collectives x protocols collsim can generate");
  cmd->add_option("--op", *op, "only this collective");
  cmd->callback([op] {
    std::optional<Collective> only;
    if (!op->empty()) only = parse_collective(*op);
    std::cout << format_algorithm_matrix(only);
  });
}

}  // namespace collsim
