#include "cli/nccl_tests_table.hpp"

#include <fmt/format.h>

#include "algorithms/nccl_tests_names.hpp"

namespace collsim {

namespace {

// Beyond this many ranks the "Using devices" list shows the first ones only (the labels carry
// the rank count, so the reader does not need the full list).
constexpr int kListedRanks = 64;

// nccl-tests' program for the collective, or collsim's own name for one nccl-tests lacks
// (barrier), which the reader takes as well.
std::string program_name(Collective c) {
  const auto stem = nccl_tests_program(c);
  return stem ? fmt::format("{}_perf", *stem) : std::string(to_string(c));
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
  const Collective c = t.collective;
  const std::string program = program_name(c);
  out << "# Collective test starting: " << program << "\n";
  out << fmt::format(
      "# nThread 1 nGpus 1 minBytes {} maxBytes {} step: {}(factor) warmup iters: 0 iters: 1 "
      "agg iters: 1 validation: 0 graph: 0\n",
      t.min_bytes, t.max_bytes, t.factor);
  out << "#\n# Using devices\n";
  const int listed = t.ranks > kListedRanks ? 8 : t.ranks;
  for (int r = 0; r < listed; ++r) {
    out << fmt::format("#  Rank {:2} Group  0 Pid {:6} on {:>10} device {:2} [sim] {}\n", r, r,
                       t.rank_hosts.at(r), t.rank_devices.at(r), t.device_name);
  }
  if (listed < t.ranks) {
    out << fmt::format("#  ... ranks {} to {} not listed ({} ranks)\n", listed, t.ranks - 1,
                       t.ranks);
  }
  out << "#\n";
  for (const std::string& line : t.comments) out << "# " << line << "\n";
  out << "#                                                              out-of-place          "
         "             in-place          \n"
         "#       size         count      type   redop    root     time   algbw   busbw  #wrong  "
         "   time   algbw   busbw  #wrong \n"
         "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)         "
         "    (us)  (GB/s)  (GB/s)         \n";
  const std::string_view redop = is_reduction(c) ? nccl_tests_redop(t.redop) : "none";
  const int root = has_root(c) ? t.root : -1;
  std::string last_label;
  double busbw_sum = 0;
  for (const NcclTestsTable::Row& row : t.rows) {
    if (!row.label.empty() && row.label != last_label) {
      out << "### " << row.label << "\n";
      last_label = row.label;
    }
    const std::string half =
        fmt::format("  {}  {:6.2f}  {:6.2f}  {:>6}", nccl_tests_time(row.time_us), row.algbw_GBps,
                    row.busbw_GBps, "N/A");
    out << fmt::format("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}{}{}\n", row.bytes, row.count,
                       nccl_tests_type(t.dtype), redop, root, half, half);
    busbw_sum += row.busbw_GBps;
  }
  out << "# Out of bounds values : 0 OK\n";
  out << fmt::format("# Avg bus bandwidth    : {:.6g} \n",
                     t.rows.empty() ? 0.0 : busbw_sum / static_cast<double>(t.rows.size()));
  out << "#\n# Collective test concluded: " << program << "\n#\n";
}

}  // namespace collsim
