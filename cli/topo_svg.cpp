#include "cli/topo_svg.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "cli/option_checks.hpp"
#include "topology/error.hpp"
#include "topology/summary.hpp"

extern char** environ;

namespace collsim {

namespace {

// A temporary directory removed on every way out.
class TempDir {
 public:
  TempDir() {
    std::string t = (std::filesystem::temp_directory_path() / "collsim-svg-XXXXXX").string();
    if (mkdtemp(t.data()) == nullptr) throw Error("--svg: cannot create a temporary directory");
    path_ = t;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// dot's exit status, with its stderr in `err`; -1 when it could not be started (errno kept).
int run_dot(const std::string& in, const std::string& out, const std::string& err) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::string a0 = "dot", a1 = "-Tsvg", a2 = "-o";
  std::string a3 = out, a4 = in;
  char* argv[] = {a0.data(), a1.data(), a2.data(), a3.data(), a4.data(), nullptr};
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, "dot", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    errno = rc;
    return -1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

void write_topology_svg(const Topology& topo, const std::string& path) {
  check_writable(path, "--svg");
  TempDir dir;
  const std::string dot = (dir.path() / "cluster.dot").string();
  const std::string err = (dir.path() / "err").string();
  {
    std::ofstream out(dot);
    write_dot(topo, out);
  }
  const int status = run_dot(dot, path, err);
  if (status < 0 && errno == ENOENT) {
    throw Error(
        "--svg needs Graphviz's dot, which is not installed (Debian/Ubuntu: apt-get install "
        "graphviz; or run scripts/install-deps.sh); --dot FILE writes the DOT text without it");
  }
  if (status < 0) throw Error(fmt::format("--svg: cannot run dot: {}", std::strerror(errno)));
  if (status != 0) {
    std::string line;
    std::ifstream e(err);
    std::getline(e, line);
    throw Error(
        fmt::format("--svg: dot failed to write \"{}\"{}", path, line.empty() ? "" : ": " + line));
  }
}

}  // namespace collsim
