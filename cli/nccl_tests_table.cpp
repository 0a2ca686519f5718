#include "cli/nccl_tests_table.hpp"

#include <fmt/format.h>

#include <array>
#include <utility>

#include "algorithms/ir/nccl_tests_names.hpp"

namespace collsim {

namespace {

// nccl-tests' title line, verbatim: each title over its half of the columns.
constexpr std::string_view kOutOfPlaceTitle =
    "#                                                              out-of-place";
constexpr std::string_view kInPlaceTitle = "                       in-place          ";

// nccl-tests' program for the collective, or collsim's own name for one nccl-tests lacks
// (barrier), which the reader takes as well.
std::string program_name(Collective c) {
  const auto stem = nccl_tests_program(c);
  return stem ? fmt::format("{}_perf", *stem) : std::string(to_string(c));
}

void write_run_header(std::ostream& out, const NcclTestsTable& t) {
  out << fmt::format(
      "# nThread 1 nGpus {} minBytes {} maxBytes {} step: {}(factor) warmup iters: {} iters: {} "
      "agg iters: 1 validation: {} graph: {}\n",
      t.gpus, t.min_bytes, t.max_bytes, t.factor, t.warmup, t.iters, t.validation,
      t.graph ? 1 : 0);
}

void write_devices(std::ostream& out, const NcclTestsTable& t) {
  out << "#\n# Using devices\n";
  const int listed = static_cast<int>(t.devices.size());
  for (int r = 0; r < listed; ++r) {
    const NcclTestsTable::Device& d = t.devices[r];
    out << fmt::format("#  Rank {:2} Group  0 Pid {:>6} on {:>10} device {:2} {}\n", r, d.pid,
                       d.host, d.device, d.description);
  }
  if (listed < t.ranks) {
    out << fmt::format("#  ... ranks {} to {} not listed ({} ranks)\n", listed, t.ranks - 1,
                       t.ranks);
  }
  out << "#\n";
}

// One header line: the row's leading columns, then the out-of-place half's, then (ended by a
// space, as nccl-tests ends it) the in-place half's.
std::string header_line(const std::array<std::string_view, 5>& lead,
                        const std::array<std::string_view, 4>& half, bool in_place) {
  const std::string h =
      fmt::format("  {:>7}  {:>6}  {:>6}  {:>6}", half[0], half[1], half[2], half[3]);
  return fmt::format("#{:>11}  {:>12}  {:>8}  {:>6}  {:>6}{}{}\n", lead[0], lead[1], lead[2],
                     lead[3], lead[4], h, in_place ? h + " " : "");
}

void write_column_header(std::ostream& out, bool in_place) {
  out << kOutOfPlaceTitle << (in_place ? kInPlaceTitle : "") << "\n";
  out << header_line({"size", "count", "type", "redop", "root"},
                     {"time", "algbw", "busbw", "#wrong"}, in_place);
  out << header_line({"(B)", "(elements)", "", "", ""}, {"(us)", "(GB/s)", "(GB/s)", ""}, in_place);
}

void write_row(std::ostream& out, const NcclTestsTable& t, const NcclTestsTable::Row& row) {
  const Collective c = t.collective;
  const ResultRow& r = row.result;
  const std::string wrong = row.wrong ? fmt::format("{}", *row.wrong) : "N/A";
  const std::string half = fmt::format("  {}  {:6.2f}  {:6.2f}  {:>6}", nccl_tests_time(r.time_us),
                                       r.algbw_GBps, r.busbw_GBps, wrong);
  out << fmt::format("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}{}{}\n", r.bytes, r.count,
                     nccl_tests_type(r.dtype), is_reduction(c) ? nccl_tests_redop(t.redop) : "none",
                     has_root(c) ? t.root : -1, half, t.repeat_in_place ? half : "");
}

void write_footer(std::ostream& out, const NcclTestsTable& t) {
  std::uint64_t wrong = 0;
  double busbw_sum = 0;
  for (const NcclTestsTable::Row& row : t.rows) {
    wrong += row.wrong.value_or(0);
    busbw_sum += row.result.busbw_GBps;
  }
  out << fmt::format("# Out of bounds values : {} {}\n", wrong, wrong == 0 ? "OK" : "FAILED");
  out << fmt::format("# Avg bus bandwidth    : {:.6g} \n",
                     t.rows.empty() ? 0.0 : busbw_sum / static_cast<double>(t.rows.size()));
}

}  // namespace

std::string nccl_tests_time(double us) {
  for (int decimals = 2; decimals > 0; --decimals) {
    std::string s = fmt::format("{:7.{}f}", us, decimals);
    if (s.size() <= 7) return s;
  }
  return fmt::format("{:7.0f}", us);
}

void write_nccl_tests_table(std::ostream& out, const NcclTestsTable& t) {
  NcclTestsTableWriter w(out, t);
  for (const NcclTestsTable::Row& row : t.rows) w.row(row);
  w.end();
}

NcclTestsTableWriter::NcclTestsTableWriter(std::ostream& out, NcclTestsTable frame)
    : out_(out), t_(std::move(frame)) {
  t_.rows.clear();
  out_ << "# Collective test starting: " << program_name(t_.collective) << "\n";
  write_run_header(out_, t_);
  write_devices(out_, t_);
  for (const std::string& line : t_.comments) out_ << "# " << line << "\n";
  if (!t_.label.empty()) out_ << "### " << t_.label << "\n";
  write_column_header(out_, t_.repeat_in_place);
  out_.flush();
}

void NcclTestsTableWriter::row(const NcclTestsTable::Row& row) {
  if (!row.label.empty() && row.label != last_label_) {
    out_ << "### " << row.label << "\n";
    last_label_ = row.label;
  }
  write_row(out_, t_, row);
  t_.rows.push_back(row);
  out_.flush();
}

void NcclTestsTableWriter::end(const std::vector<std::string>& trailer) {
  for (const std::string& line : trailer) out_ << "# " << line << "\n";
  write_footer(out_, t_);
  out_ << "#\n# Collective test concluded: " << program_name(t_.collective) << "\n#\n";
  out_.flush();
}

}  // namespace collsim
