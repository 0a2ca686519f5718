// collsim: predict, compare and explain collective-communication costs on GPU clusters.
// Exit status: 0 success, 1 a user error (one line on stderr), 2 a usage error (with help).
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/app.hpp"
#include "topology/error.hpp"

int main(int argc, char** argv) {
  const std::unique_ptr<CLI::App> app_ptr = collsim::make_app();
  CLI::App& app = *app_ptr;
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
