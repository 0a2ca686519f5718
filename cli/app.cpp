#include "cli/app.hpp"

#include <iostream>
#include <sstream>

#include "cli/commands.hpp"

namespace collsim {

std::unique_ptr<CLI::App> make_app() {
  auto app = std::make_unique<CLI::App>(
      "collsim: what collectives cost on a GPU cluster, in nccl-tests' vocabulary.\n"
      "CONFIG is a YAML file or a preset name from configs/ (e.g. dgx-h100).");
  app->require_subcommand(1);
  app->set_version_flag("--version", "collsim 0.1.0");
  register_topo(*app);
  register_list(*app);
  register_plan(*app);
  register_predict(*app);
  register_trace(*app);
  register_sweep(*app);
  register_compare(*app);
  register_scale(*app);
  register_bench(*app);
  register_calibrate(*app);
  register_validate(*app);
  register_import(*app);
  return app;
}

namespace {

// Points std::cout at a string for its lifetime, restoring the previous buffer even when the
// command throws.
class CaptureCout {
 public:
  CaptureCout() : previous_(std::cout.rdbuf(text_.rdbuf())) {}
  ~CaptureCout() { std::cout.rdbuf(previous_); }
  CaptureCout(const CaptureCout&) = delete;
  CaptureCout& operator=(const CaptureCout&) = delete;
  std::string text() const { return text_.str(); }

 private:
  std::ostringstream text_;
  std::streambuf* previous_;
};

}  // namespace

std::string run_command(const std::vector<std::string>& args) {
  const std::unique_ptr<CLI::App> app = make_app();
  // CLI11 takes a vector in reverse order (it pops arguments off the back).
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  CaptureCout capture;
  app->parse(reversed);
  return capture.text();
}

}  // namespace collsim
