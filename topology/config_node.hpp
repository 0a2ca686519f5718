// Private to topology/: a YAML node that knows where it is, for precise config errors.
//
//   ConfigNode root = ConfigNode::parse(text, "configs/x.yaml");
//   root.allow_keys({"name", "nodes", "node", "network"});
//   int nodes = root.at("nodes").as_int(1, 1 << 20);
//   // throws ConfigError "configs/x.yaml:2:8: nodes: expected an integer from 1 to 1048576, got "two""
#pragma once

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "topology/units.hpp"

namespace collsim {

class ConfigNode {
 public:
  // Parses YAML text; syntax errors become ConfigError "file:line:col: message".
  static ConfigNode parse(const std::string& text, const std::string& file);

  const std::string& path() const { return path_; }
  bool is_map() const { return node_.IsMap(); }
  bool is_sequence() const { return node_.IsSequence(); }

  // Map access. `at` throws when the key is missing; `get` returns nullopt.
  bool has(std::string_view key) const;
  ConfigNode at(std::string_view key) const;
  std::optional<ConfigNode> get(std::string_view key) const;
  // Rejects keys outside `allowed` (and duplicate keys) with the nearest accepted one suggested.
  // Also fails unless this node is a map.
  void allow_keys(std::initializer_list<std::string_view> allowed) const;
  void allow_keys(const std::vector<std::string>& allowed) const;

  // Sequence access; fails unless this node is a sequence.
  std::size_t size() const;
  ConfigNode operator[](std::size_t i) const;

  std::string as_string() const;
  // One of `accepted`, else an error listing them and suggesting the nearest.
  std::string as_choice(const std::vector<std::string>& accepted, std::string_view what) const;
  long long as_int(long long min, long long max) const;
  double as_number(double min, double max) const;
  bool as_bool() const;
  Bandwidth as_bandwidth() const;
  Time as_time() const;
  // At most `most`, else "expected at most <most> for <what>, got ...".
  Time as_time(Time most, std::string_view what) const;
  // A link's latency: at most kMaxLinkLatency (topology/units.hpp).
  Time as_link_latency() const { return as_time(kMaxLinkLatency, "a link's latency"); }
  std::vector<long long> as_int_list(long long min, long long max) const;

  // Throws ConfigError "file:line:col: path: message" at this node.
  [[noreturn]] void fail(std::string_view message) const;

 private:
  ConfigNode(YAML::Node node, std::string path, std::shared_ptr<const std::string> file);
  std::string child_path(std::string_view key) const;
  std::string scalar_text() const;  // the value as written, for "got ..." messages

  YAML::Node node_;
  std::string path_;
  std::shared_ptr<const std::string> file_;
};

// "expected at most <most> for <what>, got "<got>"": a time past its bound, worded alike in a
// config (ConfigNode::as_time) and on the command line (faults.cpp).
std::string time_above_bound(Time most, std::string_view what, std::string_view got);

}  // namespace collsim
