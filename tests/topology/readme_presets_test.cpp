// The README's preset table names every preset in configs/, so a new preset cannot go
// undocumented.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "topology/loader.hpp"

namespace collsim {
namespace {

TEST(ReadmePresets, EveryPresetIsInTheTable) {
  std::ifstream in(COLLSIM_SOURCE_DIR "/README.md");
  std::ostringstream text;
  text << in.rdbuf();
  for (const std::string& name : preset_names()) {
    EXPECT_NE(text.str().find("`" + name + "`"), std::string::npos)
        << name << " is missing from README.md's preset table";
  }
}

}  // namespace
}  // namespace collsim
