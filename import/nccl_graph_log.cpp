#include "import/nccl_graph_log.hpp"

#include <fmt/format.h>

#include <fstream>
#include <optional>
#include <regex>
#include <sstream>

#include "import/xml.hpp"
#include "topology/loader.hpp"

namespace collsim {

namespace {

struct Graph {
  int channels = 0;
  std::string intra, inter;  // GB/s per channel as logged, trailing zeros dropped
};

std::string trimmed(const std::string& number) {
  std::string s = number;
  if (s.find('.') != std::string::npos) {
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

std::string item(const char* name, const Graph& g) {
  return fmt::format("{}={}x{}/{}", name, g.channels, g.intra, g.inter);
}

}  // namespace

NcclGraphLog read_nccl_graph_log(std::string_view text, std::string_view file) {
  static const std::regex kPattern(
      R"(Pattern (\d+), crossNic (\d+), nChannels (\d+), (?:bw|speed) ([0-9.]+)/([0-9.]+))");
  std::istringstream in{std::string(text)};
  std::string line;
  int number = 0;
  std::optional<Graph> ring, tree, nvls;
  std::string pattern_name;
  while (std::getline(in, line)) {
    ++number;
    const auto at = line.find("NCCL INFO Pattern ");
    if (at == std::string::npos) continue;
    std::smatch m;
    const std::string rest = line.substr(at + 10);
    if (!std::regex_search(rest, m, kPattern) || m.position(0) != 0) {
      throw ImportError(fmt::format(
          "{}:{}: expected \"Pattern P, crossNic C, nChannels N, bw INTRA/INTER\", got \"{}\"",
          file, number, rest.substr(0, 80)));
    }
    const int pattern = std::stoi(m[1]);
    const Graph g{std::stoi(m[3]), trimmed(m[4]), trimmed(m[5])};
    if (g.channels < 1 || g.channels > 64) {
      throw ImportError(
          fmt::format("{}:{}: nChannels {}: expected 1 to 64", file, number, g.channels));
    }
    if (pattern == 4 && !ring) ring = g;
    if (pattern >= 1 && pattern <= 3 && !tree) {
      tree = g;
      pattern_name = pattern == 1 ? "balanced" : pattern == 2 ? "split" : "tree";
    }
    if (pattern == 5 && !nvls) nvls = g;
  }
  if (!ring && !tree && !nvls) {
    throw ImportError(
        fmt::format("{}: no NCCL graph lines (\"NCCL INFO Pattern ...\"): run with "
                    "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH",
                    file));
  }
  NcclGraphLog out;
  auto add = [&](const char* name, const std::optional<Graph>& g) {
    if (g) out.graph += (out.graph.empty() ? "" : ",") + item(name, *g);
  };
  add("ring", ring);
  add("tree", tree);
  add("nvls", nvls);
  out.tree_pattern = pattern_name;
  return out;
}

NcclGraphLog read_nccl_graph_log_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ImportError(fmt::format("--nccl-log {}: cannot open the file", path));
  const std::optional<std::string> text = read_at_most(in, std::size_t{64} << 20);
  if (!text) throw ImportError(fmt::format("--nccl-log {}: larger than 64 MiB", path));
  return read_nccl_graph_log(*text, path);
}

}  // namespace collsim
