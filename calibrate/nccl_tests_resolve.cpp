// NcclTestsParser::finish(): what can only be decided once the whole file is read — each table's
// collective, rank counts from the launch line, algorithm overrides from the environment — then
// the checks that need them, and the rows gathered by collective.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <iterator>
#include <optional>
#include <set>
#include <string>

#include "algorithms/ir/nccl_tests_names.hpp"
#include "algorithms/models/nccl_release.hpp"
#include "calibrate/nccl_tests_parser.hpp"

namespace collsim::detail {

namespace {

// For each table, the index of the table it takes what it does not say itself from (`says`):
// itself when it says it, else the nearest table before it that does, else (for tables before
// the first that does) that first one; -1 when no table says it. Logs often print a banner or a
// command once for several runs.
template <typename Table, typename Says>
std::vector<int> donors(const std::vector<Table>& tables, Says says) {
  const auto first = std::find_if(tables.begin(), tables.end(), says);
  int donor = first == tables.end() ? -1 : static_cast<int>(first - tables.begin());
  std::vector<int> out;
  for (std::size_t i = 0; i < tables.size(); ++i) {
    if (says(tables[i])) donor = static_cast<int>(i);
    out.push_back(donor);
  }
  return out;
}

}  // namespace

std::vector<MeasurementFile> NcclTestsParser::finish() {
  check_not_empty();
  resolve_collectives();
  summarize_file();
  std::vector<MeasurementFile> parts;
  for (const Table& t : tables_) {
    // make_part() takes the rows of every table of its collective: a table with rows left is the
    // first of another collective.
    if (!t.rows.empty()) parts.push_back(make_part(*t.collective));
  }
  return parts;
}

void NcclTestsParser::check_not_empty() const {
  if (!any_text_) {
    throw MeasurementError(
        fmt::format("{}: empty file; expected an nccl-tests table or a collsim CSV", path_));
  }
  if (std::any_of(tables_.begin(), tables_.end(), [](const Table& t) { return !t.rows.empty(); })) {
    return;
  }
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

// The mention that names `t`'s collective, or nullptr; throws when its mentions disagree.
const NcclTestsParser::ProgramMention* NcclTestsParser::named_collective(const Table& t) const {
  const ProgramMention* found = nullptr;
  for (const ProgramMention& m : t.programs) {
    if (!m.collective) {
      if (m.name != "hypercube_perf") continue;  // some other *_perf tool named in passing
      throw MeasurementError(fmt::format(
          "{}: hypercube_perf measures no collective collsim models; expected one of {}",
          at(m.line), fmt::join(nccl_tests_programs(), ", ")));
    }
    if (found != nullptr && *m.collective != *found->collective) {
      throw MeasurementError(fmt::format(
          "{}: {} here, but {} at line {} for the same rows; expected one collective per table",
          at(m.line), m.name, found->name, found->line));
    }
    if (found == nullptr) found = &m;
  }
  return found;
}

// --op names the collective of a file that names none; a file that names one must agree with it.
void NcclTestsParser::resolve_collectives() {
  for (Table& t : tables_) {
    const ProgramMention* m = named_collective(t);
    if (m == nullptr) continue;
    if (options_.collective && *options_.collective != *m->collective) {
      throw MeasurementError(
          fmt::format("{}: the file measured {}, but --op says {}; expected them to agree",
                      at(m->line), m->name, to_string(*options_.collective)));
    }
    t.collective = m->collective;
    t.collective_source = fmt::format("{} at line {}", m->name, m->line);
  }
  const std::vector<int> from =
      donors(tables_, [](const Table& t) { return t.collective.has_value(); });
  if (from.front() < 0 && !options_.collective) {
    throw MeasurementError(fmt::format(
        "{}: cannot tell which collective was measured: no \"# Collective test starting:\" line "
        "and no command line naming a *_perf program; pass it with --op (e.g. --op allreduce)",
        path_));
  }
  for (std::size_t i = 0; i < tables_.size(); ++i) {
    Table& t = tables_[i];
    if (from[i] < 0) {
      t.collective = options_.collective;
      t.collective_source = "--op";
    } else {
      t.collective = tables_[from[i]].collective;
      t.collective_source = tables_[from[i]].collective_source;
    }
  }
}

// `tables` are those of one collective: a command line names the program it ran, so it does not
// stand for another collective's tables.
void NcclTestsParser::resolve_launches(const std::vector<Table*>& tables) {
  const std::vector<int> from =
      donors(tables, [](const Table* t) { return t->launch.has_value(); });
  for (std::size_t i = 0; i < tables.size(); ++i) {
    if (from[i] < 0 || from[i] == static_cast<int>(i)) continue;
    tables[i]->launch = tables[from[i]]->launch;
    tables[i]->command = tables[from[i]]->command;
  }
}

void NcclTestsParser::resolve_launch_ranks(Table& t) {
  if (!t.launch) return;
  const LaunchCommand& launch = *t.launch;
  // Without a launcher the program is one process; an explicit -g without -t means nccl-tests'
  // one thread. Nothing else is assumed.
  const std::optional<int> processes = launch.launcher ? launch.processes : 1;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    MeasurementRow& row = t.rows[i];
    if (row.ranks != 0) continue;
    std::optional<int> threads = t.snapshots[i].threads;
    std::optional<int> gpus = t.snapshots[i].gpus;
    if (!threads && !gpus && launch.gpus) {
      gpus = launch.gpus;
      threads = launch.threads.value_or(1);
    }
    if (!processes || !threads || !gpus) continue;
    row.ranks = *processes * *threads * *gpus;
    row.ranks_source = RanksSource::kLaunch;
    t.context[i].ranks_origin = fmt::format("from the launch: {} processes x {} threads x {} GPUs",
                                            *processes, *threads, *gpus);
  }
}

void NcclTestsParser::resolve_overrides(Table& t) {
  const auto env = [&](const char* key) -> std::optional<std::string> {
    const auto it = out_.env.find(key);
    if (it == out_.env.end()) return std::nullopt;
    return it->second;
  };
  const std::optional<std::string> nvls = env("NCCL_NVLS_ENABLE");
  for (MeasurementRow& row : t.rows) {
    row.algo_override = label_value(row.labels, "ALGO");
    if (!row.algo_override) row.algo_override = env("NCCL_ALGO");
    if (nvls && *nvls == "0") row.algo_override = nccl_algo_without_nvls(row.algo_override);
    row.proto_override = label_value(row.labels, "PROTO");
    if (!row.proto_override) row.proto_override = env("NCCL_PROTO");
  }
}

// What the whole file says, for every part.
void NcclTestsParser::summarize_file() {
  if (printed_version_) {
    out_.nccl_version = *printed_version_;
  } else if (library_version_) {
    out_.nccl_version = *library_version_;
  } else if (headers_version_) {
    out_.nccl_version = *headers_version_;
  } else if (stated_version_) {
    out_.nccl_version = *stated_version_;
  }
  take_echoed_env();
  take_echoed_channels();
  take_stated_run();
  if (unrecognised_ > kMaxUnrecognisedWarnings) {
    out_.warnings.push_back(fmt::format("{}: {} more lines skipped as above", path_,
                                        unrecognised_ - kMaxUnrecognisedWarnings));
  }
}

// NCCL's own word on a variable it read (an NCCL_DEBUG=INFO log's "NCCL_ALGO set by environment
// to Ring") is what the run had: it fills in what "# env:" and the launcher's -x leave out, and
// where they say otherwise it stands, with a warning.
void NcclTestsParser::take_echoed_env() {
  for (const auto& [key, echoed] : echoed_env_) {
    const auto& [value, line] = echoed;
    const auto [it, added] = out_.env.emplace(key, value);
    if (added || it->second == value) continue;
    out_.warnings.push_back(fmt::format(
        "{}: NCCL says {} was set to {}, where the file's environment says {}; taking NCCL's word",
        at(line), key, value, it->second));
    it->second = value;
  }
}

// Every rank prints its communicator's channel counts at init; one run's ranks agree. Lines that
// do not (communicators of other sizes in one log) leave the counts to the model, with a warning.
void NcclTestsParser::take_echoed_channels() {
  if (echoed_channels_.empty()) return;
  const auto& [first, first_line] = echoed_channels_.front();
  for (const auto& [ch, line] : echoed_channels_) {
    if (ch.coll != first.coll || ch.nvls != first.nvls) {
      out_.warnings.push_back(fmt::format(
          "{}: NCCL reports {} coll channels where line {} reports {}: several communicators; "
          "the channel counts are NCCL's model's, as for a log that reports none",
          at(line), ch.coll, first_line, first.coll));
      return;
    }
  }
  out_.coll_channels = first.coll;
  out_.nvls_channels = first.nvls;
}

// What --nccl-version and --env say of the run, where the file does not say it; where it says
// otherwise, the file is right and the option a mistake.
void NcclTestsParser::take_stated_run() {
  if (const std::optional<std::string>& v = options_.nccl_version) {
    std::optional<NcclRelease> said;
    try {
      if (!out_.nccl_version.empty()) said = parse_nccl_release(out_.nccl_version);
    } catch (const RequestError&) {
      // a version collsim does not know: the file names none it could use
    }
    const NcclRelease given = parse_nccl_release(*v);
    // "2.26" and "2.26.2" agree: one names no patch.
    if (said && (said->minor != given.minor ||
                 (said->patch >= 0 && given.patch >= 0 && said->patch != given.patch))) {
      throw RequestError(
          fmt::format("--nccl-version {}: {} says NCCL {}; give it only for files that do not say",
                      *v, path_, out_.nccl_version));
    }
    if (!said) out_.nccl_version = *v;
  }
  for (const auto& [key, value] : options_.env) {
    const auto it = out_.env.find(key);
    if (it != out_.env.end() && it->second != value) {
      throw RequestError(fmt::format(
          "--env {}={}: {} sets {}={}; give it only for variables the file does not set", key,
          value, path_, key, it->second));
    }
    out_.env.emplace(key, value);
  }
}

// The rows of every table of collective `c`, in file order, with what those tables say.
MeasurementFile NcclTestsParser::make_part(Collective c) {
  std::vector<Table*> tables;
  for (Table& t : tables_) {
    if (*t.collective == c) tables.push_back(&t);
  }
  resolve_launches(tables);
  MeasurementFile part = out_;
  part.collective = c;
  std::vector<RowContext> context;
  const Table* first = nullptr;
  for (Table* t : tables) {
    if (t->rows.empty()) continue;
    resolve_launch_ranks(*t);
    resolve_overrides(*t);
    if (first == nullptr) {
      first = t;
      part.collective_source = t->collective_source;
      part.format = t->format;
      part.command = t->command;
    }
    if (part.run.line == 0) part.run = t->run;
    part.devices.insert(part.devices.end(), t->devices.begin(), t->devices.end());
    part.avg_busbw_GBps.insert(part.avg_busbw_GBps.end(), t->averages.begin(), t->averages.end());
    std::move(t->rows.begin(), t->rows.end(), std::back_inserter(part.rows));
    std::move(t->context.begin(), t->context.end(), std::back_inserter(context));
    t->rows.clear();
  }
  resolve_ranks_and_check(path_, c, part.rows, context);
  summarize_part(part, first->launch);
  return part;
}

void NcclTestsParser::summarize_part(MeasurementFile& part,
                                     const std::optional<LaunchCommand>& launch) {
  const int first = part.rows.front().ranks;
  const bool same = std::all_of(part.rows.begin(), part.rows.end(),
                                [&](const MeasurementRow& r) { return r.ranks == first; });
  part.ranks = same ? first : 0;

  std::set<int> ranks;
  std::set<std::string> hosts;
  int highest = -1;
  for (const DeviceLine& d : part.devices) {
    ranks.insert(d.rank);
    hosts.insert(d.host);
    highest = std::max(highest, d.rank);
    if (std::find(part.gpu_names.begin(), part.gpu_names.end(), d.gpu_name) ==
        part.gpu_names.end()) {
      part.gpu_names.push_back(d.gpu_name);
    }
  }
  // Hosts only count the nodes when every rank is listed (some logs show the last rank only).
  if (!ranks.empty() && static_cast<int>(ranks.size()) == highest + 1) {
    part.nodes = static_cast<int>(hosts.size());
  } else if (launch && launch->nodes) {
    part.nodes = *launch->nodes;
  } else if (launch && !launch->launcher) {
    part.nodes = 1;
  }
}

}  // namespace collsim::detail
