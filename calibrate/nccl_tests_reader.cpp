#include "calibrate/nccl_tests_reader.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>

#include "algorithms/ir/result_row.hpp"
#include "calibrate/collsim_csv_reader.hpp"
#include "calibrate/nccl_tests_json.hpp"
#include "calibrate/nccl_tests_lines.hpp"
#include "calibrate/nccl_tests_parser.hpp"
#include "topology/loader.hpp"

namespace collsim {

namespace {

// The lines of `text` without their line ends, "\n" or "\r\n".
std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (line.ends_with('\r')) line.remove_suffix(1);
    lines.push_back(line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return lines;
}

// The one part of `parts`; a file of several collectives is an error at the second one's first
// row.
MeasurementFile only_part(std::vector<MeasurementFile> parts) {
  if (parts.size() > 1) {
    const MeasurementFile& second = parts[1];
    throw MeasurementError(fmt::format(
        "{}:{}: rows of {} ({}) after those of {} ({}); expected one collective here "
        "(read_measurement_parts() reads a file of several)",
        second.path, second.rows.front().line, to_string(second.collective),
        second.collective_source, to_string(parts[0].collective), parts[0].collective_source));
  }
  return std::move(parts.front());
}

// At most kMaxMeasurementBytes: /dev/zero or /dev/urandom passed by mistake fails at once.
std::string read_capped(std::istream& in, const std::string& path) {
  std::optional<std::string> text = read_at_most(in, kMaxMeasurementBytes);
  if (!text) {
    throw MeasurementError(
        fmt::format("{}: larger than {} MiB; expected an nccl-tests log or collsim's output", path,
                    kMaxMeasurementBytes >> 20));
  }
  return std::move(*text);
}

}  // namespace

std::vector<MeasurementFile> read_measurement_parts(const std::string& path,
                                                    const ReadOptions& options) {
  if (path == "-")
    return parse_measurement_parts(read_capped(std::cin, "<stdin>"), "stdin", options);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw MeasurementError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  }
  return parse_measurement_parts(read_capped(in, path), path, options);
}

MeasurementFile read_measurements(const std::string& path, const ReadOptions& options) {
  return only_part(read_measurement_parts(path, options));
}

std::vector<MeasurementFile> parse_measurement_parts(std::string_view text, const std::string& path,
                                                     const ReadOptions& options) {
  if (detail::looks_like_json(text)) {
    detail::NcclTestsParser parser(path, options);
    for (const detail::LogLine& l : detail::nccl_tests_json_lines(text, path)) {
      parser.feed(l.line, l.text);
    }
    return parser.finish();
  }
  const std::vector<std::string_view> lines = split_lines(text);
  // The first line that is not blank or a comment tells the format apart.
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view t = detail::trim(lines[i]);
    if (t.empty() || t.starts_with('#')) continue;
    if (t == csv_header()) return {detail::parse_collsim_csv(lines, path, options)};
    if (t.starts_with("collective,")) {
      throw MeasurementError(
          fmt::format("{}:{}: expected the collsim CSV header \"{}\", got \"{}\"", path, i + 1,
                      csv_header(), t));
    }
    break;
  }
  detail::NcclTestsParser parser(path, options);
  for (const detail::LogLine& l : detail::unwrap_log(lines)) parser.feed(l.line, l.text);
  return parser.finish();
}

MeasurementFile parse_measurements(std::string_view text, const std::string& path,
                                   const ReadOptions& options) {
  return only_part(parse_measurement_parts(text, path, options));
}

}  // namespace collsim
