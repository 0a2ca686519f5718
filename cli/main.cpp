// collsim: predict, compare and explain collective-communication costs on GPU clusters.
// Exit status: 0 success, 1 a user error (one line on stderr), 2 a usage error (with help).
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/commands.hpp"
#include "topology/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "collsim: what collectives cost on a GPU cluster, in nccl-tests' vocabulary.\n"
      "CONFIG is a YAML file or a preset name from configs/ (e.g. dgx-h100)."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "collsim 0.1.0");
  collsim::register_topo(app);
  collsim::register_list(app);
  collsim::register_plan(app);
  collsim::register_predict(app);
  collsim::register_trace(app);
  collsim::register_sweep(app);
  collsim::register_compare(app);
  collsim::register_scale(app);
  collsim::register_bench(app);
  collsim::register_calibrate(app);
  collsim::register_validate(app);
  collsim::register_diagnose(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "collsim: " << e.what() << "\n";
    // The help of the deepest subcommand the user reached.
    const CLI::App* cmd = &app;
    while (!cmd->get_subcommands().empty()) cmd = cmd->get_subcommands().front();
    std::cerr << cmd->help();
    return 2;
  } catch (const collsim::Error& e) {
    std::cerr << "collsim: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    // Not a user mistake collsim anticipated (out of memory, a bug): still one line and a status,
    // never an abort.
    std::cerr << "collsim: internal error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
