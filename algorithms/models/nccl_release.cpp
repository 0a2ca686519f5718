#include "algorithms/models/nccl_release.hpp"

#include <fmt/format.h>

#include <charconv>

#include "topology/error.hpp"

namespace collsim {

namespace {

// Reads a decimal number at the front of `s` and drops it; nullopt-like -1 when there is none.
int take_number(std::string_view& s) {
  int v = -1;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || v < 0) return -1;
  s.remove_prefix(static_cast<std::size_t>(end - s.data()));
  return v;
}

[[noreturn]] void unknown(std::string_view text) {
  throw RequestError(fmt::format(
      "unknown NCCL version \"{}\": expected a release such as 2.26 or 2.26.2, from 2.0 to {} "
      "(the newest collsim models), or head",
      text, to_string(kNewestNccl)));
}

}  // namespace

NcclRelease parse_nccl_release(std::string_view text) {
  if (text == "head") return kNewestNccl;
  std::string_view s = text;
  if (take_number(s) != 2 || s.empty() || s.front() != '.') unknown(text);
  s.remove_prefix(1);
  NcclRelease v;
  v.minor = take_number(s);
  v.patch = -1;
  if (v.minor < 0) unknown(text);
  if (!s.empty() && s.front() == '.') {
    s.remove_prefix(1);
    v.patch = take_number(s);
    if (v.patch < 0) unknown(text);
  }
  // What may follow a release in NCCL's banner or a package name: "+cuda12.8", "-1".
  if (!s.empty() && s.front() != '+' && s.front() != '-') unknown(text);
  if (v.minor > kNewestNccl.minor) unknown(text);
  return v;
}

std::string to_string(NcclRelease v) {
  return v.patch < 0 ? fmt::format("2.{}", v.minor) : fmt::format("2.{}.{}", v.minor, v.patch);
}

}  // namespace collsim
