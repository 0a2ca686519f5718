// NcclTestsParser::finish(): what can only be decided once the whole file is read — the
// collective, rank counts from the launch line, algorithm overrides from the environment — then
// the checks that need them.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "algorithms/ir/nccl_tests_names.hpp"
#include "calibrate/nccl_tests_parser.hpp"

namespace collsim::detail {

MeasurementFile NcclTestsParser::finish() {
  if (!any_text_) {
    throw MeasurementError(
        fmt::format("{}: empty file; expected an nccl-tests table or a collsim CSV", path_));
  }
  if (out_.rows.empty()) {
    if (layout_from_header_) {
      throw MeasurementError(fmt::format(
          "{}: no measurement rows after the column header at line {}; expected rows that start "
          "with the size in bytes (truncated file?)",
          path_, layout_line_));
    }
    throw MeasurementError(fmt::format(
        "{}: no measurement rows; expected an nccl-tests table (rows that start with the size in "
        "bytes) or a collsim CSV{}",
        path_, first_unrecognised_.empty() ? "" : "; first unrecognised " + first_unrecognised_));
  }
  resolve_collective();
  resolve_launch_ranks();
  resolve_overrides();
  resolve_ranks_and_check(path_, out_.collective, out_.rows, context_);
  summarize();
  return std::move(out_);
}

void NcclTestsParser::resolve_collective() {
  const ProgramMention* found = nullptr;
  for (const ProgramMention& m : programs_) {
    if (!m.collective) {
      if (m.name != "hypercube_perf") continue;  // some other *_perf tool named in passing
      throw MeasurementError(fmt::format(
          "{}: hypercube_perf measures no collective collsim models; expected one of {}",
          at(m.line), fmt::join(nccl_tests_programs(), ", ")));
    }
    if (found != nullptr && *m.collective != *found->collective) {
      throw MeasurementError(
          fmt::format("{}: {} here, but {} at line {}; expected one collective per file",
                      at(m.line), m.name, found->name, found->line));
    }
    if (found == nullptr) found = &m;
  }
  if (found != nullptr && options_.collective && *options_.collective != *found->collective) {
    throw MeasurementError(
        fmt::format("{}: the file measured {}, but --op says {}; expected them to agree",
                    at(found->line), found->name, to_string(*options_.collective)));
  }
  if (found != nullptr) {
    out_.collective = *found->collective;
    out_.collective_source = fmt::format("{} at line {}", found->name, found->line);
  } else if (options_.collective) {
    out_.collective = *options_.collective;
    out_.collective_source = "--op";
  } else {
    throw MeasurementError(fmt::format(
        "{}: cannot tell which collective was measured: no \"# Collective test starting:\" line "
        "and no command line naming a *_perf program; pass it with --op (e.g. --op allreduce)",
        path_));
  }
}

void NcclTestsParser::resolve_launch_ranks() {
  if (!launch_) return;
  // Without a launcher the program is one process; an explicit -g without -t means nccl-tests'
  // one thread. Nothing else is assumed.
  const std::optional<int> processes = launch_->launcher ? launch_->processes : 1;
  for (std::size_t i = 0; i < out_.rows.size(); ++i) {
    MeasurementRow& row = out_.rows[i];
    if (row.ranks != 0) continue;
    std::optional<int> threads = snapshots_[i].threads;
    std::optional<int> gpus = snapshots_[i].gpus;
    if (!threads && !gpus && launch_->gpus) {
      gpus = launch_->gpus;
      threads = launch_->threads.value_or(1);
    }
    if (!processes || !threads || !gpus) continue;
    row.ranks = *processes * *threads * *gpus;
    row.ranks_source = RanksSource::kLaunch;
    context_[i].ranks_origin = fmt::format("from the launch: {} processes x {} threads x {} GPUs",
                                           *processes, *threads, *gpus);
  }
}

void NcclTestsParser::resolve_overrides() {
  const auto env = [&](const char* key) -> std::optional<std::string> {
    const auto it = out_.env.find(key);
    if (it == out_.env.end()) return std::nullopt;
    return it->second;
  };
  for (MeasurementRow& row : out_.rows) {
    row.algo_override = label_value(row.labels, "ALGO");
    if (!row.algo_override) row.algo_override = env("NCCL_ALGO");
    row.proto_override = label_value(row.labels, "PROTO");
    if (!row.proto_override) row.proto_override = env("NCCL_PROTO");
  }
}

void NcclTestsParser::summarize() {
  const int first = out_.rows.front().ranks;
  const bool same = std::all_of(out_.rows.begin(), out_.rows.end(),
                                [&](const MeasurementRow& r) { return r.ranks == first; });
  out_.ranks = same ? first : 0;

  std::set<int> ranks;
  std::set<std::string> hosts;
  int highest = -1;
  for (const DeviceLine& d : out_.devices) {
    ranks.insert(d.rank);
    hosts.insert(d.host);
    highest = std::max(highest, d.rank);
    if (std::find(out_.gpu_names.begin(), out_.gpu_names.end(), d.gpu_name) ==
        out_.gpu_names.end()) {
      out_.gpu_names.push_back(d.gpu_name);
    }
  }
  // Hosts only count the nodes when every rank is listed (some logs show the last rank only).
  if (!ranks.empty() && static_cast<int>(ranks.size()) == highest + 1) {
    out_.nodes = static_cast<int>(hosts.size());
  } else if (launch_ && launch_->nodes) {
    out_.nodes = *launch_->nodes;
  } else if (launch_ && !launch_->launcher) {
    out_.nodes = 1;
  }

  if (printed_version_) {
    out_.nccl_version = *printed_version_;
  } else if (library_version_) {
    out_.nccl_version = *library_version_;
  } else if (headers_version_) {
    out_.nccl_version = *headers_version_;
  }
  if (unrecognised_ > kMaxUnrecognisedWarnings) {
    out_.warnings.push_back(fmt::format("{}: {} more lines skipped as above", path_,
                                        unrecognised_ - kMaxUnrecognisedWarnings));
  }
}

}  // namespace collsim::detail
