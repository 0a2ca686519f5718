#include "calibrate/launch_command.hpp"

#include <algorithm>
#include <array>
#include <set>

#include "algorithms/ir/nccl_tests_names.hpp"
#include "calibrate/nccl_tests_lines.hpp"

namespace collsim {

namespace {

using detail::split_words;

std::string_view basename(std::string_view word) {
  const auto slash = word.rfind('/');
  return slash == std::string_view::npos ? word : word.substr(slash + 1);
}

std::optional<int> positive_int(std::string_view s) {
  const auto v = detail::parse_integer(s);
  if (!v || *v <= 0 || *v > (1 << 30)) return std::nullopt;
  return static_cast<int>(*v);
}

// Options of the form "-np 16", "--np=16" or, for short program options, "-g8".
class Options {
 public:
  explicit Options(std::vector<std::string_view> words) : w_(std::move(words)) {}

  // The value of the first of `names` present, or nullopt.
  std::optional<std::string_view> value(std::initializer_list<std::string_view> names,
                                        bool attached = false) const {
    for (std::size_t i = 0; i < w_.size(); ++i) {
      for (std::string_view n : names) {
        if (w_[i] == n && i + 1 < w_.size()) return w_[i + 1];
        if (w_[i].size() > n.size() + 1 && w_[i].starts_with(n) && w_[i][n.size()] == '=') {
          return w_[i].substr(n.size() + 1);
        }
        // "-g2": only for single-letter program options, never "-np".
        if (attached && n.size() == 2 && w_[i].size() > 2 && w_[i].starts_with(n) &&
            detail::is_digits(w_[i].substr(2))) {
          return w_[i].substr(2);
        }
      }
    }
    return std::nullopt;
  }

  std::optional<int> integer(std::initializer_list<std::string_view> names,
                             bool attached = false) const {
    const auto v = value(names, attached);
    return v ? positive_int(*v) : std::nullopt;
  }

  // Every value of a repeatable option ("-x A=1 -x B=2").
  std::vector<std::string_view> values(std::string_view name) const {
    std::vector<std::string_view> out;
    for (std::size_t i = 0; i + 1 < w_.size(); ++i) {
      if (w_[i] == name) out.push_back(w_[i + 1]);
    }
    return out;
  }

 private:
  std::vector<std::string_view> w_;
};

int count_hosts(std::string_view list) {
  std::set<std::string_view> hosts;
  while (!list.empty()) {
    const auto comma = list.find(',');
    std::string_view entry = list.substr(0, comma);
    entry = entry.substr(0, entry.find(':'));  // "host:slots"
    if (!entry.empty()) hosts.insert(entry);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return static_cast<int>(hosts.size());
}

void read_mpirun_options(const Options& o, LaunchCommand& c) {
  c.processes = o.integer({"-np", "--np", "-n", "--n"});
  c.per_node = o.integer({"-N", "--npernode", "-npernode"});
  if (const auto map_by = o.value({"--map-by", "-map-by"}); map_by && map_by->starts_with("ppr:")) {
    const std::string_view rest = map_by->substr(4);
    c.per_node = positive_int(rest.substr(0, rest.find(':')));
  }
  if (const auto hosts = o.value({"-H", "--host", "-host"})) c.nodes = count_hosts(*hosts);
  for (std::string_view x : o.values("-x")) {
    if (auto a = detail::parse_assignment(x)) c.env.push_back(std::move(*a));
  }
}

void read_srun_options(const Options& o, LaunchCommand& c) {
  c.processes = o.integer({"-n", "--ntasks"});
  c.nodes = o.integer({"-N", "--nodes"});
  c.per_node = o.integer({"--ntasks-per-node"});
}

}  // namespace

bool is_launcher(std::string_view word) {
  static constexpr std::array<std::string_view, 6> kLaunchers = {"mpirun", "mpiexec", "orterun",
                                                                 "srun",   "aprun",   "jsrun"};
  const std::string_view b = basename(word);
  return std::find(kLaunchers.begin(), kLaunchers.end(), b) != kLaunchers.end();
}

std::optional<LaunchCommand> parse_launch_command(std::string_view line) {
  const std::vector<std::string_view> w = split_words(line);
  std::size_t p = 0;
  LaunchCommand c;
  for (; p < w.size(); ++p) {
    c.program = perf_program_stem(w[p]);
    if (!c.program.empty()) break;
  }
  if (p == w.size()) return std::nullopt;
  std::size_t first = 0;
  while (first < p && detail::parse_assignment(w[first])) ++first;
  c.is_command = first == p || is_launcher(w[first]);
  if (!c.is_command) return c;

  const auto launcher = std::find_if(w.begin(), w.begin() + p, is_launcher);
  if (launcher != w.begin() + p) {
    c.launcher = true;
    const Options o(std::vector<std::string_view>(launcher + 1, w.begin() + p));
    if (basename(*launcher) == "srun") {
      read_srun_options(o, c);
    } else {
      read_mpirun_options(o, c);
    }
    if (!c.processes && c.nodes && c.per_node) c.processes = *c.nodes * *c.per_node;
    if (!c.nodes && c.processes && c.per_node) {
      c.nodes = (*c.processes + *c.per_node - 1) / *c.per_node;
    }
  }
  const Options program(std::vector<std::string_view>(w.begin() + p + 1, w.end()));
  c.gpus = program.integer({"-g", "--ngpus"}, true);
  c.threads = program.integer({"-t", "--nthreads"}, true);
  c.registration = program.integer({"-R", "--local_register"}, true);
  return c;
}

}  // namespace collsim
