#include "topology/loader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "topology/builder.hpp"
#include "topology/config_forms.hpp"
#include "topology/config_node.hpp"
#include "topology/error.hpp"
#include "topology/faults.hpp"

namespace collsim {

namespace fs = std::filesystem;

std::string preset_directory() {
  if (const char* env = std::getenv("COLLSIM_CONFIG_DIR"); env != nullptr && *env != '\0') {
    return env;
  }
  return COLLSIM_DEFAULT_CONFIG_DIR;
}

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(preset_directory(), ec)) {
    if (entry.path().extension() == ".yaml") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<std::string> read_at_most(std::istream& in, std::size_t limit) {
  std::string text;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > limit) return std::nullopt;
  }
  return text;
}

namespace {

// /dev/zero or a log passed by mistake must not grow without bound.
std::string read_bounded(std::istream& in, const std::string& file, std::string_view what) {
  std::optional<std::string> text = read_at_most(in, kMaxConfigBytes);
  if (!text) {
    throw ConfigError(
        fmt::format("{}: the {} is larger than {} MiB; expected a YAML cluster description", file,
                    what, kMaxConfigBytes >> 20));
  }
  return std::move(*text);
}

std::string read_text(const std::string& file, std::string_view what) {
  std::ifstream in(file);
  if (!in) throw ConfigError(fmt::format("{}: cannot open the {}", file, what));
  return read_bounded(in, file, what);
}

}  // namespace

CostSettings load_cost_overlay(const std::string& file) {
  const ConfigNode root = ConfigNode::parse(read_text(file, "costs file"), file);
  root.allow_keys({"calibration", "costs"});
  return read_cost_settings(root.at("costs"));
}

Topology parse_topology(const std::string& text, const std::string& file,
                        const LoadOptions& options) {
  const ConfigNode root = ConfigNode::parse(text, file);
  std::string default_name = fs::path(file).stem().string();
  Topology topo = root.has("devices") || root.has("links")
                      ? build_explicit(root, default_name, options)
                      : build_templated(root, default_name, options);
  if (options.default_costs) TopologyBuilder::clear_cost_layers(topo);
  for (const std::string& f : options.cost_files) {
    TopologyBuilder::add_cost_layer(topo, load_cost_overlay(f), f);
  }
  // The cluster's own what-if faults (docs/config.md), before any given on the command line.
  if (const auto faults = root.get("faults")) {
    try {
      apply_faults(topo, read_fault_list(*faults));
    } catch (const RequestError& e) {
      faults->fail(e.what());
    }
  }
  return topo;
}

Topology load_topology(const std::string& config, const LoadOptions& options) {
  if (config == "-")
    return parse_topology(read_bounded(std::cin, "<stdin>", "config"), "stdin", options);
  fs::path path(config);
  const bool looks_like_path = config.find('/') != std::string::npos ||
                               path.extension() == ".yaml" || path.extension() == ".yml";
  if (!looks_like_path) {
    const fs::path preset = fs::path(preset_directory()) / (config + ".yaml");
    if (fs::exists(preset)) {
      path = preset;
    } else if (!fs::exists(path)) {
      throw ConfigError(fmt::format("unknown config \"{}\": not a file and not a preset; {}",
                                    config, expected_one_of(config, preset_names())));
    }
  }
  if (!std::ifstream(path)) {
    throw ConfigError(fmt::format("{}: cannot open the config file", config));
  }
  return parse_topology(read_text(path.string(), "config file"),
                        looks_like_path ? config : path.string(), options);
}

}  // namespace collsim
