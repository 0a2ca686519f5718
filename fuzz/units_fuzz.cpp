// The size, bandwidth and time parsers on arbitrary text: a value or a UnitError / Error.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "topology/units.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)collsim::parse_bytes(text);
  } catch (const collsim::UnitError&) {
  }
  try {
    (void)collsim::parse_bandwidth(text);
  } catch (const collsim::UnitError&) {
  }
  try {
    (void)collsim::parse_time(text);
  } catch (const collsim::UnitError&) {
  } catch (const collsim::Error&) {
  }
  return 0;
}
