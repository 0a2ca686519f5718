// The nccl-tests / collsim bench reader on arbitrary text: rows or a MeasurementError, nothing
// else.
#include <cstddef>
#include <cstdint>
#include <string>

#include "calibrate/nccl_tests_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)collsim::parse_measurements(text, "fuzz.txt");
  } catch (const collsim::Error&) {
  }
  return 0;
}
