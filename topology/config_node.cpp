#include "topology/config_node.hpp"

#include <fmt/format.h>

#include <cmath>
#include <set>

#include "topology/error.hpp"

namespace collsim {

namespace {

std::string location(const std::string& file, const YAML::Mark& mark) {
  if (mark.is_null()) return file;
  return fmt::format("{}:{}:{}", file, mark.line + 1, mark.column + 1);
}

}  // namespace

ConfigNode::ConfigNode(YAML::Node node, std::string path, std::shared_ptr<const std::string> file)
    : node_(std::move(node)), path_(std::move(path)), file_(std::move(file)) {}

ConfigNode ConfigNode::parse(const std::string& text, const std::string& file) {
  auto name = std::make_shared<const std::string>(file);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw ConfigError(fmt::format("{}: invalid YAML: {}", location(file, e.mark), e.msg));
  }
  ConfigNode n(root, "", name);
  if (!root.IsMap()) {
    throw ConfigError(fmt::format("{}: expected a mapping of cluster settings at the top level",
                                  location(file, root.Mark())));
  }
  return n;
}

void ConfigNode::fail(std::string_view message) const {
  const std::string where = location(*file_, node_.Mark());
  if (path_.empty()) throw ConfigError(fmt::format("{}: {}", where, message));
  throw ConfigError(fmt::format("{}: {}: {}", where, path_, message));
}

std::string ConfigNode::child_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
}

bool ConfigNode::has(std::string_view key) const {
  return node_.IsMap() && node_[std::string(key)].IsDefined();
}

ConfigNode ConfigNode::at(std::string_view key) const {
  if (!node_.IsMap()) fail("expected a mapping");
  const YAML::Node child = node_[std::string(key)];
  if (!child.IsDefined() || child.IsNull()) {
    fail(fmt::format("missing required key \"{}\"", key));
  }
  return ConfigNode(child, child_path(key), file_);
}

std::optional<ConfigNode> ConfigNode::get(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  return at(key);
}

void ConfigNode::allow_keys(std::initializer_list<std::string_view> allowed) const {
  allow_keys(std::vector<std::string>(allowed.begin(), allowed.end()));
}

void ConfigNode::allow_keys(const std::vector<std::string>& names) const {
  if (!node_.IsMap()) fail("expected a mapping");
  std::set<std::string> seen;
  for (const auto& kv : node_) {
    const std::string key = kv.first.Scalar();
    const ConfigNode at_key(kv.first, child_path(key), file_);
    if (!seen.insert(key).second) at_key.fail("duplicate key");
    if (std::find(names.begin(), names.end(), key) == names.end()) {
      at_key.fail(fmt::format("unknown key; {}", expected_one_of(key, names)));
    }
  }
}

std::size_t ConfigNode::size() const {
  if (!node_.IsSequence()) fail("expected a list");
  return node_.size();
}

ConfigNode ConfigNode::operator[](std::size_t i) const {
  if (!node_.IsSequence()) fail("expected a list");
  return ConfigNode(node_[i], fmt::format("{}[{}]", path_, i), file_);
}

std::string ConfigNode::scalar_text() const {
  if (node_.IsScalar()) return node_.Scalar();
  if (node_.IsSequence()) return "a list";
  if (node_.IsMap()) return "a mapping";
  return "nothing";
}

std::string ConfigNode::as_string() const {
  if (!node_.IsScalar()) fail(fmt::format("expected a string, got {}", scalar_text()));
  return node_.Scalar();
}

std::string ConfigNode::as_choice(const std::vector<std::string>& accepted,
                                  std::string_view what) const {
  if (!node_.IsScalar()) fail(fmt::format("expected {}, got {}", what, scalar_text()));
  const std::string s = node_.Scalar();
  if (std::find(accepted.begin(), accepted.end(), s) == accepted.end()) {
    fail(fmt::format("unknown {} \"{}\"; {}", what, s, expected_one_of(s, accepted)));
  }
  return s;
}

long long ConfigNode::as_int(long long min, long long max) const {
  const std::string expected = fmt::format("expected an integer from {} to {}", min, max);
  if (!node_.IsScalar()) fail(fmt::format("{}, got {}", expected, scalar_text()));
  const std::string& s = node_.Scalar();
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != s.size()) fail(fmt::format("{}, got \"{}\"", expected, s));
  if (v < min || v > max) fail(fmt::format("{}, got {}", expected, v));
  return v;
}

double ConfigNode::as_number(double min, double max) const {
  const std::string expected = fmt::format("expected a number from {:g} to {:g}", min, max);
  if (!node_.IsScalar()) fail(fmt::format("{}, got {}", expected, scalar_text()));
  const std::string& s = node_.Scalar();
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != s.size() || !std::isfinite(v)) {
    fail(fmt::format("{}, got \"{}\"", expected, s));
  }
  if (v < min || v > max) fail(fmt::format("{}, got {:g}", expected, v));
  return v;
}

bool ConfigNode::as_bool() const {
  if (node_.IsScalar()) {
    const std::string& s = node_.Scalar();
    if (s == "true") return true;
    if (s == "false") return false;
  }
  fail(fmt::format("expected true or false, got \"{}\"", scalar_text()));
}

Bandwidth ConfigNode::as_bandwidth() const {
  try {
    return parse_bandwidth(as_string());
  } catch (const UnitError& e) {
    fail(e.what());
  }
}

Time ConfigNode::as_time() const {
  try {
    return parse_time(as_string());
  } catch (const UnitError& e) {
    fail(e.what());
  }
}

Time ConfigNode::as_time(Time most, std::string_view what) const {
  const Time t = as_time();
  if (t > most) fail(time_above_bound(most, what, scalar_text()));
  return t;
}

std::string time_above_bound(Time most, std::string_view what, std::string_view got) {
  return fmt::format("expected at most {} for {}, got \"{}\"", to_string(most), what, got);
}

std::vector<long long> ConfigNode::as_int_list(long long min, long long max) const {
  std::vector<long long> out;
  for (std::size_t i = 0; i < size(); ++i) out.push_back((*this)[i].as_int(min, max));
  return out;
}

}  // namespace collsim
