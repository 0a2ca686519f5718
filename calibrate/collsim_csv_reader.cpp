#include "calibrate/collsim_csv_reader.hpp"

#include <fmt/format.h>

#include "algorithms/ir/nccl_tests_names.hpp"
#include "algorithms/ir/result_row.hpp"
#include "calibrate/measurement_checks.hpp"
#include "calibrate/nccl_tests_lines.hpp"
#include "calibrate/nccl_tests_row.hpp"

namespace collsim::detail {

namespace {

std::vector<std::string_view> split_csv(std::string_view line) {
  std::vector<std::string_view> fields;
  while (true) {
    const auto comma = line.find(',');
    fields.push_back(trim(line.substr(0, comma)));
    if (comma == std::string_view::npos) return fields;
    line.remove_prefix(comma + 1);
  }
}

// A row's fields, by the column the writers put them in; messages name the column.
class CsvRow {
 public:
  CsvRow(std::vector<std::string_view> fields, std::string where)
      : f_(std::move(fields)), where_(std::move(where)) {}

  std::string_view text(ResultColumn c) const { return f_[static_cast<int>(c)]; }

  std::int64_t integer(ResultColumn c, std::int64_t min) const {
    const auto v = parse_integer(text(c));
    if (!v || *v < min) fail(c, min == 0 ? "a non-negative integer" : "a positive integer");
    return *v;
  }

  Printed number(ResultColumn c, std::string_view what) const {
    const auto p = parse_printed(text(c));
    if (!p || p->value < 0) fail(c, what);
    return *p;
  }

  [[noreturn]] void fail(ResultColumn c, std::string_view what) const {
    throw MeasurementError(
        fmt::format("{}: {}: expected {}, got \"{}\"", where_, column_name(c), what, text(c)));
  }

 private:
  std::vector<std::string_view> f_;
  std::string where_;
};

}  // namespace

MeasurementFile parse_collsim_csv(const std::vector<std::string_view>& lines,
                                  const std::string& path, const ReadOptions& options) {
  // Its columns say what ran (algorithm, protocol, channels), and it has no NCCL of its own.
  if (options.nccl_version || !options.env.empty()) {
    throw RequestError(fmt::format(
        "{}: {} is for nccl-tests output; this is collsim's CSV, whose columns say what ran", path,
        options.nccl_version ? "--nccl-version" : "--env"));
  }
  MeasurementFile out;
  out.path = path;
  out.format = MeasurementFormat::kCollsimCsv;
  std::vector<RowContext> context;
  bool header_seen = false;
  int first_line = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const int line = static_cast<int>(i) + 1;
    const std::string where = fmt::format("{}:{}", path, line);
    const std::string_view text = trim(lines[i]);
    if (text.empty() || text.starts_with('#')) continue;
    if (!header_seen) {  // the caller saw to it that this is the header
      header_seen = true;
      continue;
    }
    const std::vector<std::string_view> fields = split_csv(text);
    if (static_cast<int>(fields.size()) != kResultColumnCount) {
      throw MeasurementError(
          fmt::format("{}: expected {} comma-separated columns as in the "
                      "header, got {}{}",
                      where, kResultColumnCount, fields.size(),
                      fields.size() < kResultColumnCount ? " (truncated row?)" : ""));
    }
    const CsvRow f(fields, where);
    Collective c;
    try {
      c = parse_collective(f.text(ResultColumn::kCollective));
    } catch (const RequestError& e) {
      throw MeasurementError(
          fmt::format("{}: {}: {}", where, column_name(ResultColumn::kCollective), e.what()));
    }
    if (out.rows.empty()) {
      if (options.collective && *options.collective != c) {
        throw MeasurementError(
            fmt::format("{}: the file measured {}, but --op says {}; expected them to agree", where,
                        to_string(c), to_string(*options.collective)));
      }
      out.collective = c;
      out.collective_source = fmt::format("the collective column at line {}", line);
      first_line = line;
    } else if (c != out.collective) {
      throw MeasurementError(
          fmt::format("{}: {} here, but {} at line {}; expected one "
                      "collective per file",
                      where, to_string(c), to_string(out.collective), first_line));
    }
    MeasurementRow r;
    r.line = line;
    r.algo_override = std::string(f.text(ResultColumn::kAlgorithm));
    r.proto_override = std::string(f.text(ResultColumn::kProtocol));
    r.channels = static_cast<int>(f.integer(ResultColumn::kChannels, 0));
    r.ranks = static_cast<int>(f.integer(ResultColumn::kRanks, 1));
    r.ranks_source = RanksSource::kCsvColumn;
    r.bytes = static_cast<std::uint64_t>(f.integer(ResultColumn::kBytes, 0));
    r.count = static_cast<std::uint64_t>(f.integer(ResultColumn::kCount, 0));
    r.dtype = std::string(f.text(ResultColumn::kDtype));
    r.data_type = data_type_of(r.dtype);
    constexpr std::string_view kTime = "a positive number of microseconds";
    Half h{"out-of-place", f.number(ResultColumn::kTimeUs, kTime),
           f.number(ResultColumn::kAlgbwGBps, "a bandwidth in GB/s"),
           f.number(ResultColumn::kBusbwGBps, "a bandwidth in GB/s")};
    if (h.time.value == 0 && r.bytes > 0) f.fail(ResultColumn::kTimeUs, kTime);
    r.time_us = h.time.value;
    r.algbw_GBps = h.algbw.value;
    r.busbw_GBps = h.busbw.value;
    RowContext ctx{0, "from the ranks column", {{std::move(h)}}};
    check_algbw(r.bytes, ctx.numbers, where);
    out.rows.push_back(std::move(r));
    context.push_back(std::move(ctx));
  }
  if (out.rows.empty()) {
    throw MeasurementError(fmt::format("{}: no measurement rows under the CSV header", path));
  }
  resolve_ranks_and_check(path, out.collective, out.rows, context);
  out.ranks = out.rows.front().ranks;
  for (const MeasurementRow& r : out.rows) {
    if (r.ranks != out.ranks) out.ranks = 0;
  }
  return out;
}

}  // namespace collsim::detail
