#include "calibrate/nccl_tests_reader.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "algorithms/ir/result_row.hpp"
#include "calibrate/collsim_csv_reader.hpp"
#include "calibrate/nccl_tests_lines.hpp"
#include "calibrate/nccl_tests_parser.hpp"

namespace collsim {

MeasurementFile read_measurements(const std::string& path, const ReadOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw MeasurementError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_measurements(text.str(), path, options);
}

MeasurementFile parse_measurements(std::string_view text, const std::string& path,
                                   const ReadOptions& options) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    lines.push_back(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  // The first line that is not blank or a comment tells the format apart.
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view t = detail::trim(lines[i]);
    if (t.empty() || t.starts_with('#')) continue;
    if (t == csv_header()) return detail::parse_collsim_csv(lines, path, options);
    if (t.starts_with("collective,")) {
      throw MeasurementError(
          fmt::format("{}:{}: expected the collsim CSV header \"{}\", got \"{}\"", path, i + 1,
                      csv_header(), t));
    }
    break;
  }
  detail::NcclTestsParser parser(path, options);
  for (std::size_t i = 0; i < lines.size(); ++i) parser.feed(static_cast<int>(i) + 1, lines[i]);
  return parser.finish();
}

}  // namespace collsim
