#include "algorithms/ir/result_row.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

namespace collsim {

namespace {

constexpr std::array<std::string_view, kResultColumnCount> kColumnNames = {
    "collective", "algorithm", "protocol", "channels",   "ranks",     "bytes",
    "count",      "dtype",     "time_us",  "algbw_GBps", "busbw_GBps"};

double rounded(double v, double scale) { return std::round(v * scale) / scale; }

std::string csv_field(ResultColumn c, const ColumnValue& v, CsvNumbers numbers) {
  if (numbers == CsvNumbers::kFixed) {
    if (c == ResultColumn::kTimeUs) return fmt::format("{:.3f}", std::get<double>(v));
    if (c == ResultColumn::kAlgbwGBps || c == ResultColumn::kBusbwGBps) {
      return fmt::format("{:.4f}", std::get<double>(v));
    }
  }
  return std::visit([](const auto& x) { return fmt::format("{}", x); }, v);
}

}  // namespace

std::string_view column_name(ResultColumn c) { return kColumnNames.at(static_cast<int>(c)); }

ResultRow result_row(const Request& r, const Candidate& c, Time t) {
  ResultRow o;
  o.collective = r.collective;
  o.algorithm = c.algorithm;
  o.protocol = to_string(c.protocol);
  o.channels = r.channels;
  o.ranks = r.comm.size();
  o.bytes = request_bytes(r).count();
  o.count = r.count;
  o.dtype = r.dtype;
  const double seconds = t.seconds();
  o.time_us = t.us();
  o.algbw_GBps = seconds > 0 ? static_cast<double>(o.bytes) / seconds * 1e-9 : 0.0;
  o.busbw_GBps = o.algbw_GBps * busbw_factor(r.collective, o.ranks);
  return o;
}

ResultRow rounded(ResultRow row) {
  row.time_us = rounded(row.time_us, 1e6);
  row.algbw_GBps = rounded(row.algbw_GBps, 1e4);
  row.busbw_GBps = rounded(row.busbw_GBps, 1e4);
  return row;
}

ResultRow make_row(const Request& r, const Candidate& c, Time t) {
  return rounded(result_row(r, c, t));
}

std::array<ColumnValue, kResultColumnCount> column_values(const ResultRow& r) {
  std::array<ColumnValue, kResultColumnCount> v;
  auto set = [&v](ResultColumn c, ColumnValue x) { v.at(static_cast<int>(c)) = x; };
  set(ResultColumn::kCollective, to_string(r.collective));
  set(ResultColumn::kAlgorithm, std::string_view(r.algorithm));
  set(ResultColumn::kProtocol, std::string_view(r.protocol));
  set(ResultColumn::kChannels, std::int64_t{r.channels});
  set(ResultColumn::kRanks, std::int64_t{r.ranks});
  set(ResultColumn::kBytes, r.bytes);
  set(ResultColumn::kCount, r.count);
  set(ResultColumn::kDtype, to_string(r.dtype));
  set(ResultColumn::kTimeUs, r.time_us);
  set(ResultColumn::kAlgbwGBps, r.algbw_GBps);
  set(ResultColumn::kBusbwGBps, r.busbw_GBps);
  return v;
}

std::string csv_header() { return fmt::format("{}", fmt::join(kColumnNames, ",")); }

std::string csv_line(const ResultRow& r, CsvNumbers numbers) {
  const auto values = column_values(r);
  std::string line;
  for (int i = 0; i < kResultColumnCount; ++i) {
    if (i > 0) line += ',';
    line += csv_field(static_cast<ResultColumn>(i), values.at(i), numbers);
  }
  return line;
}

}  // namespace collsim
