#include "cli/option_checks.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "topology/error.hpp"

namespace collsim {

void check_writable(const std::string& path, std::string_view option) {
  if (path.empty()) return;
  namespace fs = std::filesystem;
  const fs::path p(path);
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw RequestError(
        fmt::format("{} {}: the directory \"{}\" does not exist", option, path, dir.string()));
  }
  if (fs::is_directory(p, ec)) {
    throw RequestError(fmt::format("{} {}: is a directory; expected a file", option, path));
  }
  const bool exists = fs::exists(p, ec);
  if (::access(exists ? path.c_str() : dir.c_str(), W_OK) != 0) {
    throw RequestError(
        fmt::format("{} {}: cannot write there ({})", option, path, std::strerror(errno)));
  }
}

}  // namespace collsim
