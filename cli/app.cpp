#include "cli/app.hpp"

#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <mutex>

#include "cli/commands.hpp"
#include "topology/error.hpp"

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
  register_diagnose(*app);
  return app;
}

namespace {

// Points the process's standard output (file descriptor 1, which std::cout and fmt::print both
// reach through stdio) at a temporary file for its lifetime, restoring it even when the command
// throws.
class CaptureStdout {
 public:
  CaptureStdout() {
    std::cout.flush();
    std::fflush(stdout);
    file_ = std::tmpfile();
    saved_ = dup(STDOUT_FILENO);
    if (file_ == nullptr || saved_ < 0 || dup2(fileno(file_), STDOUT_FILENO) < 0) {
      release();
      throw Error("cannot capture standard output (no temporary file)");
    }
  }
  ~CaptureStdout() { release(); }
  CaptureStdout(const CaptureStdout&) = delete;
  CaptureStdout& operator=(const CaptureStdout&) = delete;

  std::string text() {
    std::cout.flush();
    std::fflush(stdout);
    std::string out;
    std::rewind(file_);
    char buf[1 << 16];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, file_)) > 0;) out.append(buf, n);
    return out;
  }

 private:
  void release() {
    std::cout.flush();
    std::fflush(stdout);
    if (saved_ >= 0) {
      dup2(saved_, STDOUT_FILENO);
      close(saved_);
      saved_ = -1;
    }
    if (file_ != nullptr) {
      std::fclose(file_);
      file_ = nullptr;
    }
  }
  std::FILE* file_ = nullptr;
  int saved_ = -1;
};

}  // namespace

std::string run_command(const std::vector<std::string>& args) {
  // One command at a time: standard output is the process's, not the caller's.
  static std::mutex one_at_a_time;
  const std::lock_guard<std::mutex> lock(one_at_a_time);
  const std::unique_ptr<CLI::App> app = make_app();
  // CLI11 takes a vector in reverse order (it pops arguments off the back).
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  CaptureStdout capture;
  app->parse(reversed);
  return capture.text();
}

}  // namespace collsim
