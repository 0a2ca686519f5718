// A preset's YAML with one more line under its `network:` block, for tests that need a shipped
// cluster with one setting changed (gdr: false, pxn: false, ...): parse it with parse_topology.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace collsim::test {

inline std::string preset_with(const std::string& preset, const std::string& network_line) {
  std::ifstream in(std::string(COLLSIM_SOURCE_DIR) + "/configs/" + preset + ".yaml");
  std::stringstream text;
  text << in.rdbuf();
  std::string yaml = text.str();
  const std::string block = "\nnetwork:\n";
  yaml.insert(yaml.find(block) + block.size(), "  " + network_line + "\n");
  return yaml;
}

}  // namespace collsim::test
