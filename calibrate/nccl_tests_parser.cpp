#include "calibrate/nccl_tests_parser.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "algorithms/ir/nccl_tests_names.hpp"
#include "calibrate/nccl_tests_row.hpp"

namespace collsim::detail {

namespace {

std::string quote_start(std::string_view s, std::size_t max = 60) {
  if (s.size() <= max) return std::string(s);
  return std::string(s.substr(0, max)) + "...";
}

// "# source: text": a curator's lower-case key followed directly by a colon.
std::optional<std::pair<std::string, std::string>> metadata_line(std::string_view body) {
  const auto colon = body.find(':');
  if (colon == 0 || colon == std::string_view::npos) return std::nullopt;
  for (char c : body.substr(0, colon)) {
    if (!((c >= 'a' && c <= 'z') || c == '-')) return std::nullopt;
  }
  return std::pair{std::string(body.substr(0, colon)), std::string(trim(body.substr(colon + 1)))};
}

// NCCL's "host:pid:tid [dev] NCCL INFO ..." and anything else naming NCCL is log output.
bool is_log_output(std::string_view text) { return text.find("NCCL") != std::string_view::npos; }

}  // namespace

NcclTestsParser::NcclTestsParser(std::string path, ReadOptions options)
    : path_(std::move(path)), options_(options), tables_(1) {
  out_.path = path_;
}

void NcclTestsParser::feed(int line, std::string_view raw) {
  const std::string_view text = trim(raw);
  if (text.empty()) return;
  any_text_ = true;
  if (text.starts_with("###")) return on_label(text.substr(3), line);
  if (text.starts_with('#')) return on_comment(trim(text.substr(1)), line);
  const std::vector<std::string_view> words = split_words(text);
  if (looks_like_number(words[0])) return on_row(words, text, line);
  on_foreign(text, words, line);
}

// Lines before a table's first row introduce it, so the lines that begin a run (its banner,
// header or command) only start a new table once the current one has rows.
void NcclTestsParser::start_table() {
  if (table().rows.empty()) return;
  // What the run before said about its rows does not apply to this one's; a label put after its
  // last row (a curator's, above this run's header) does.
  if (label_line_ < table().rows.back().line) labels_.clear();
  tables_.emplace_back();
  layout_.reset();
  run_ = {};
  run_devices_.clear();
  average_from_ = 0;
  ++segment_;
}

void NcclTestsParser::on_label(std::string_view text, int line) {
  std::map<std::string, std::string> labels = parse_label(text);
  if (labels.empty()) return;  // a "###" comment, not an annotation
  labels_ = std::move(labels);
  label_line_ = line;
  ++segment_;
}

void NcclTestsParser::on_comment(std::string_view body, int line) {
  if (auto meta = metadata_line(body)) {
    if (meta->first == "env") {
      for (auto& [k, v] : parse_env_assignments(meta->second)) out_.env.emplace(k, v);
    } else if (meta->first == "command") {
      on_command(meta->second, line);
    } else if (meta->first == "nccl" && !stated_version_) {
      stated_version_ = leading_nccl_version(meta->second);
    }
    out_.metadata.push_back(std::move(*meta));
    return;
  }
  on_own_line(body, line);
}

// nccl-tests prints everything but its rows after '#'; `body` is such a line without it. Whether
// it is one of nccl-tests' own (its banner, run header, rank lines, column header, summary), read.
bool NcclTestsParser::on_own_line(std::string_view body, int line) {
  const std::vector<std::string_view> w = split_words(body);
  if (w.empty()) return false;
  if (body.starts_with("Collective test starting:")) {
    on_banner(w, true, line);
  } else if (body.starts_with("Collective test concluded:")) {
    on_banner(w, false, line);
  } else if (auto run = parse_run_header(body, line)) {
    start_table();
    run_ = *run;
    run_devices_.clear();
    ++segment_;
    if (table().run.line == 0) table().run = run_;
  } else if (auto device = parse_device_line(body, line)) {
    run_devices_.push_back(*device);
    table().devices.push_back(std::move(*device));
  } else if (w[0] == "nccl-tests" && w.size() >= 3 && w[1] == "version") {
    start_table();
    out_.nccl_tests_version = std::string(w[2]);
    for (std::string_view word : w) {
      if (!word.starts_with("nccl-library=")) continue;
      if (const auto code = parse_integer(word.substr(13))) {
        library_version_ = nccl_version_from_code(*code);
      }
    }
    for (std::string_view word : w) {
      if (!word.starts_with("nccl-headers=")) continue;
      if (const auto code = parse_integer(word.substr(13))) {
        headers_version_ = nccl_version_from_code(*code);
      }
    }
  } else if (w[0] == "Reducing" && w.size() >= 4 && w[1] == "maxBytes") {
    out_.warnings.push_back(fmt::format("{}: nccl-tests: {}", at(line), body));
    if (const auto v = parse_integer(w[3]); v && *v >= 0) {
      run_.max_bytes = static_cast<std::uint64_t>(*v);
      if (table().run.line == run_.line) table().run.max_bytes = run_.max_bytes;
    }
  } else if (body.starts_with("Blocking Enabled")) {
    // nccl-tests -z: each iteration waits for its collective (and may barrier) before the next
    // is launched, where by default launches run ahead of the GPUs.
    out_.warnings.push_back(fmt::format(
        "{}: nccl-tests: {}: the rows time a wait after every iteration, which collsim's host "
        "loop (launches running ahead of the GPUs) does not; expect small sizes to read slow",
        at(line), trim(body)));
  } else if (looks_like_column_header(body)) {
    on_column_header(body, line);
  } else if (body.starts_with("Avg bus bandwidth")) {
    on_average(trim(body.substr(body.find(':') + 1)), line);
  } else if (body.starts_with("Out of bounds values")) {
    if (w.size() < 2 || w[w.size() - 2] != "0" || w.back() != "OK") {
      out_.warnings.push_back(fmt::format("{}: nccl-tests: {}", at(line), body));
    }
  } else if (!body.starts_with("Using devices") && !body.starts_with("out-of-place") &&
             !body.starts_with("(B)")) {
    return false;  // the rank list's title and the header's upper lines carry nothing to read
  }
  return true;
}

// "# Collective test starting: all_reduce_perf" begins a run; "# Collective test concluded: ..."
// names the run it ends. collsim's spellings ("allreduce") are read too.
void NcclTestsParser::on_banner(const std::vector<std::string_view>& w, bool starting, int line) {
  if (starting) start_table();
  if (w.size() < 4) return;
  const std::string stem = perf_program_stem(w[3]);
  if (!stem.empty()) return add_program(stem, line);
  try {
    table().programs.push_back({std::string(w[3]), parse_collective(w[3]), line});
  } catch (const RequestError&) {
    // Not a collective name either; the file may still name its program elsewhere.
  }
}

void NcclTestsParser::on_column_header(std::string_view body, int line) {
  std::string got;
  const auto layout = parse_column_header(body, &got);
  if (!layout) {
    if ((" " + got + " ").find(" cputime ") != std::string::npos) {
      throw MeasurementError(fmt::format(
          "{}: the table reports cputime (nccl-tests -C 1), the host's time per iteration, not "
          "the collective's; expected time columns: rerun without -C",
          at(line)));
    }
    throw MeasurementError(fmt::format(
        "{}: unrecognised column header \"{}\"; expected \"size count type redop root time algbw "
        "busbw #wrong time algbw busbw #wrong\" (or the older form without root and with "
        "\"error\" for \"#wrong\"; each group may end with \"i_min i_max i_p99 i_cv%\" and the "
        "header with \"timestamp\")",
        at(line), got));
  }
  layout_ = layout;
  layout_line_ = line;
  layout_from_header_ = true;
}

const ColumnLayout& NcclTestsParser::layout_for_row(const std::vector<std::string_view>& words,
                                                    int line) {
  const int columns = static_cast<int>(words.size());
  if (!layout_) {
    layout_ = layout_for_row_fields(words);
    if (!layout_) {
      throw MeasurementError(fmt::format(
          "{}: expected 13 columns (size count type redop root time algbw busbw #wrong time algbw "
          "busbw #wrong), 12 (the older form without root) or 21 (with the per-iteration "
          "summaries of -I 1), and two more for -S 1's timestamp, got {}{}",
          at(line), columns, columns < 12 ? " (truncated row?)" : ""));
    }
    layout_line_ = line;
    layout_from_header_ = false;
  }
  if (columns != layout_->columns) {
    throw MeasurementError(
        fmt::format("{}: expected {} columns as in the {} at line {}, got {}{}", at(line),
                    layout_->columns, layout_from_header_ ? "header" : "first row", layout_line_,
                    columns, columns < layout_->columns ? " (truncated row?)" : ""));
  }
  return *layout_;
}

void NcclTestsParser::on_row(const std::vector<std::string_view>& words, std::string_view text,
                             int line) {
  if (text.find("NCCL") != std::string_view::npos) {
    // Quote from the first field that is not a number: where the log output took over.
    std::string_view from = text;
    for (std::size_t i = 4; i < words.size(); ++i) {
      if (words[i] != "N/A" && !parse_printed(words[i])) {
        from = text.substr(static_cast<std::size_t>(words[i].data() - text.data()));
        break;
      }
    }
    throw MeasurementError(fmt::format(
        "{}: row interrupted by log output (\"{}\"); expected a complete row: remove the "
        "interleaved lines or rerun without NCCL_DEBUG",
        at(line), quote_start(from)));
  }
  const ColumnLayout& layout = layout_for_row(words, line);
  RowContext ctx;
  MeasurementRow row = parse_table_row(words, layout, at(line), &ctx.numbers);
  check_algbw(row.bytes, ctx.numbers, at(line));
  row.line = line;
  row.labels = labels_;
  Table& t = table();
  if (t.rows.empty()) {
    t.format = layout.has_root ? MeasurementFormat::kNcclTests : MeasurementFormat::kNcclTestsOld;
  }
  for (const auto& [name, wrong] :
       {std::pair{"out-of-place", row.wrong}, std::pair{"in-place", row.inplace_wrong}}) {
    if (wrong && *wrong > 0) {
      out_.warnings.push_back(fmt::format("{}: {} #wrong = {}: nccl-tests found wrong results",
                                          at(line), name, *wrong));
    }
  }

  RankSnapshot snap{0, RanksSource::kUnknown, run_.threads, run_.gpus_per_thread};
  ctx.segment = segment_;
  if (const auto gpus = label_value(labels_, "GPUS")) {
    if (const auto n = parse_integer(*gpus); n && *n > 0 && *n <= (1 << 30)) {
      snap = {static_cast<int>(*n), RanksSource::kLabel, {}, {}};
      ctx.ranks_origin = fmt::format("from the ### label at line {}", label_line_);
    }
  }
  if (snap.source == RanksSource::kUnknown && !run_devices_.empty()) {
    // A complete listing (ranks 0..n-1) gives n; a partial one only "at least highest + 1".
    std::set<int> listed;
    for (const DeviceLine& d : run_devices_) listed.insert(d.rank);
    const int highest = *listed.rbegin();
    ctx.ranks_origin = fmt::format("from the rank lines at line {}", run_devices_.front().line);
    if (static_cast<int>(listed.size()) == highest + 1) {
      snap = {highest + 1, RanksSource::kRankLines, {}, {}};
    } else {
      ctx.min_ranks = highest + 1;
    }
  }
  row.ranks = snap.ranks;
  row.ranks_source = snap.source;
  t.rows.push_back(std::move(row));
  t.context.push_back(std::move(ctx));
  t.snapshots.push_back(snap);
}

void NcclTestsParser::on_foreign(std::string_view text, const std::vector<std::string_view>& words,
                                 int line) {
  // Some renderers of published logs drop nccl-tests' '#' (dstack's documentation pages): its
  // own lines are read as if it were there.
  if (on_own_line(text, line)) return;
  ++out_.skipped_lines;
  if (auto v = find_nccl_version(text); v && !printed_version_) printed_version_ = std::move(v);
  if (auto ch = find_nccl_channels(text)) echoed_channels_.emplace_back(*ch, line);
  if (auto kv = find_nccl_env(text)) {
    echoed_env_.emplace(std::move(kv->first), std::make_pair(std::move(kv->second), line));
  }
  if (text.starts_with('>') || text.starts_with('$')) return on_command(text.substr(1), line);
  if (is_launcher(words[0]) || !perf_program_stem(words[0]).empty()) return on_command(text, line);
  if (is_log_output(text)) return;
  if (++unrecognised_ == 1) {
    first_unrecognised_ = fmt::format("line {}: \"{}\"", line, quote_start(text));
  }
  if (unrecognised_ <= kMaxUnrecognisedWarnings) {
    out_.warnings.push_back(
        fmt::format("{}: skipped a line that is neither nccl-tests nor NCCL "
                    "output: \"{}\"",
                    at(line), quote_start(text)));
  }
}

// A line naming a *_perf program begins a run, whether it launches it or a curator's note says
// what ran.
void NcclTestsParser::on_command(std::string_view text, int line) {
  auto cmd = parse_launch_command(text);
  if (!cmd) return;
  start_table();
  add_program(cmd->program, line);
  for (auto& [k, v] : cmd->env) out_.env.emplace(k, v);
  if (cmd->is_command && !table().launch) {
    table().launch = std::move(cmd);
    table().command = std::string(trim(text));
  }
}

void NcclTestsParser::add_program(std::string_view stem, int line) {
  table().programs.push_back({std::string(stem) + "_perf", collective_of_program(stem), line});
}

void NcclTestsParser::on_average(std::string_view value, int line) {
  const std::vector<std::string_view> words = split_words(value);
  const auto printed = words.empty() ? std::nullopt : parse_printed(words[0]);
  if (!printed) return;
  Table& t = table();
  t.averages.push_back(printed->value);
  double sum = 0;
  int n = 0;
  for (std::size_t i = average_from_; i < t.rows.size(); ++i) {
    for (const Half& h : t.context[i].numbers.halves) {
      sum += h.busbw.value;
      ++n;
    }
  }
  average_from_ = t.rows.size();
  if (n == 0) return;
  // nccl-tests averages the unrounded busbw of every half, so the mean of the printed values can
  // be off by their rounding (0.005) plus the rounding of the printed average.
  const double mean = sum / n;
  if (std::abs(mean - printed->value) <= 0.005 + printed->half_unit + 1e-9) return;
  out_.warnings.push_back(fmt::format(
      "{}: \"# Avg bus bandwidth\" {} does not match the mean busbw {:.3f} of the {} values above "
      "(rows left out of the file?)",
      at(line), printed->text, mean, n));
}

}  // namespace collsim::detail
