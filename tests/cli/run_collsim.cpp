#include "tests/cli/run_collsim.hpp"

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace collsim::test {

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

CommandResult run_collsim(const std::string& args) {
  static int counter = 0;
  const std::string base = std::string(COLLSIM_BINARY_DIR) + "/cli_test_" +
                           std::to_string(::getpid()) + "_" + std::to_string(counter++);
  const std::string cmd = std::string(COLLSIM_BINARY_DIR) + "/cli/collsim " + args + " >" + base +
                          ".out 2>" + base + ".err";
  const int raw = std::system(cmd.c_str());
  CommandResult r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  r.out = slurp(base + ".out");
  r.err = slurp(base + ".err");
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  return r;
}

std::string golden(const std::string& name, const std::string& actual) {
  const std::string path = std::string(COLLSIM_SOURCE_DIR) + "/tests/data/golden/" + name;
  if (const char* update = std::getenv("COLLSIM_UPDATE_GOLDEN");
      update && std::string(update) == "1") {
    std::ofstream(path) << actual;
  }
  return slurp(path);
}

std::vector<double> predicted_us(const std::string& validate_json) {
  const nlohmann::json j = nlohmann::json::parse(validate_json);
  std::vector<double> t;
  for (const auto& row : j.at("rows")) t.push_back(row.at("time_us"));
  return t;
}

}  // namespace collsim::test
