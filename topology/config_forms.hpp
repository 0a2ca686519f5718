// Private to topology/: the two config forms' builders (config_templated.cpp,
// config_explicit.cpp). The root has already been parsed; these validate every key.
#pragma once

#include <string>

#include "topology/config_node.hpp"
#include "topology/loader.hpp"

namespace collsim {

Topology build_templated(const ConfigNode& root, const std::string& default_name,
                         const LoadOptions& options);
Topology build_explicit(const ConfigNode& root, const std::string& default_name,
                        const LoadOptions& options);

}  // namespace collsim
