#include "topology/loader.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "topology/config_forms.hpp"
#include "topology/config_node.hpp"
#include "topology/error.hpp"

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

Topology parse_topology(const std::string& text, const std::string& file,
                        const LoadOptions& options) {
  const ConfigNode root = ConfigNode::parse(text, file);
  std::string default_name = fs::path(file).stem().string();
  if (root.has("devices") || root.has("links")) return build_explicit(root, default_name, options);
  return build_templated(root, default_name, options);
}

Topology load_topology(const std::string& config, const LoadOptions& options) {
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
  std::ifstream in(path);
  if (!in) throw ConfigError(fmt::format("{}: cannot open the config file", config));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_topology(text.str(), looks_like_path ? config : path.string(), options);
}

}  // namespace collsim
