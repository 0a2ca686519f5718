// Parsers for single lines of nccl-tests output, used by the reader (nccl_tests_reader.cpp).
// unwrap_log() first undoes what launchers do to the lines; the others each take the text of one
// line and say what they found; none throws except parse_column_header, whose failure is a
// user-facing error.
//
//   std::vector<detail::LogLine> l = detail::unwrap_log({"[1,0]<stdout>:# Using devices"});
//   // l[0].text == "# Using devices", l[0].line == 1
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "calibrate/measurement.hpp"

namespace collsim::detail {

std::string_view trim(std::string_view s);
std::vector<std::string_view> split_words(std::string_view s);
// Whether s is a non-empty run of decimal digits.
bool is_digits(std::string_view s);
std::optional<std::int64_t> parse_integer(std::string_view s);
// Whether `word` reads as a number, possibly with a unit ("33554432", "3.3e7", "32M", "1GB"),
// which is how a table row starts; host names ("0666a154:12:12") and dates do not.
bool looks_like_number(std::string_view word);

// A line as the program printed it, the launcher's wrapping undone: `line` is the 1-based line of
// the file where it begins.
struct LogLine {
  int line = 0;
  std::string text;
};

// The lines of a log with the launcher's wrapping undone, in the order they end:
// - Open MPI's --tag-output tags ("[1,0]<stdout>:", "[1,3]<stderr>:") are removed wherever they
//   are. One in the middle of a line means another rank's output cut in before this rank ended
//   its line: each tag's pieces are joined into the line that rank printed (untagged text before
//   a tag is a line of its own). Every stream is read alike, since what a line says does not
//   depend on the stream it went to.
// - One prefix at the start of a line is removed: Intel MPI's "[0] " (-prepend-rank), srun's
//   "0: " (--label), Ray's "(head, rank=0, pid=3808) " (a parenthesised group naming a pid).
// `lines` are the file's lines without their line ends ("\n", "\r\n").
std::vector<LogLine> unwrap_log(const std::vector<std::string_view>& lines);

// The text of `line` after its launcher prefix (Intel MPI, srun or Ray, as above), if any.
std::string_view strip_line_prefix(std::string_view line);

// "#  Rank  0 Group  0 Pid 4180122 on cnode3-002 device  0 [0000:1b:00] NVIDIA H100 80GB HBM3"
// (the old format has no Group); `body` is the text after '#'.
std::optional<DeviceLine> parse_device_line(std::string_view body, int line);

// "# nThread 1 nGpus 1 minBytes 8 maxBytes 4294967296 step: 2(factor) warmup iters: 5 ..."
std::optional<RunParameters> parse_run_header(std::string_view body, int line);

// The table's column header, e.g. "size count type redop root time algbw busbw #wrong time
// algbw busbw #wrong" (the old format: no root, "error" for "#wrong"; the in-place group may be
// missing). nccl-tests 2.19 can add to each group its per-iteration summary, "i_min i_max i_p99
// i_cv%" (-I 1), and to the row a closing "timestamp" of two words, "2026-11-28 11:02:03"
// (-S 1).
struct ColumnLayout {
  bool has_root = true;
  bool old_error = false;  // "error" columns rather than "#wrong"
  bool has_inplace = true;
  bool per_iter = false;   // each group ends with i_min i_max i_p99 i_cv%
  bool timestamp = false;  // the row ends with a date and a time
  int columns = 13;        // fields of a row (the timestamp counts two)
  // Fields of one result group: time, algbw, busbw, #wrong (or error), and the summary.
  int group_columns() const { return per_iter ? 8 : 4; }
};
// Whether `body` (after '#') starts like a column header: "size count type ...".
bool looks_like_column_header(std::string_view body);
// The layout, or nullopt (with `got` set to the names found) when the names are not the ones
// nccl-tests prints.
std::optional<ColumnLayout> parse_column_header(std::string_view body, std::string* got);
// The layout a row of `fields` has when no header precedes it: 13 with root, 12 without; 21 with
// the per-iteration summaries; two more with a closing date and time.
std::optional<ColumnLayout> layout_for_row_fields(const std::vector<std::string_view>& fields);

// "# env:" text read as KEY=VALUE assignments: parenthesised remarks between them are skipped,
// and reading stops at the first other word, since what follows is prose whose assignments are
// not claims about this run ("... the repo example sets NCCL_ALGO=RING, but ...").
std::vector<std::pair<std::string, std::string>> parse_env_assignments(std::string_view text);
// Whether `word` is KEY=VALUE with KEY made of upper-case letters, digits and '_'.
std::optional<std::pair<std::string, std::string>> parse_assignment(std::string_view word);
// The same with KEY in any case (a "###" label's words, --env's argument): letters, digits and
// '_', not starting with a digit; the value loses one pair of enclosing quotes.
std::optional<std::pair<std::string, std::string>> parse_any_assignment(std::string_view word);

// "### ALGO=Ring size=268435456": the KEY=VALUE words of an annotation line (after "###").
std::map<std::string, std::string> parse_label(std::string_view text);
// A label's value for `key`, in any case and with or without "NCCL_": "ALGO" matches "ALGO",
// "algo" and "NCCL_ALGO".
std::optional<std::string> label_value(const std::map<std::string, std::string>& labels,
                                       std::string_view key);

// "2.29.2" from the NCCL_VERSION_CODE nccl-tests prints (nccl-library=22902): 10000 x major +
// 100 x minor + patch since NCCL 2.9, 1000 x major + 100 x minor + patch before.
std::string nccl_version_from_code(std::int64_t code);
// "2.29.2" from "NCCL version 2.29.2+cuda13.1" anywhere in a line (NCCL's own banner or INFO
// line); nullopt when the line has none.
std::optional<std::string> find_nccl_version(std::string_view line);
// {"NCCL_ALGO", "Ring"} from NCCL's own echo of a variable it read, "... NCCL INFO NCCL_ALGO set
// by environment to Ring" (src/graph/tuning.cc; integer parameters end in '.', "NCCL_MIN_NCHANNELS
// set by environment to 32.", src/misc/param.cc, which is dropped); nullopt for any other line.
std::optional<std::pair<std::string, std::string>> find_nccl_env(std::string_view line);
// NCCL's summary of a communicator's channels at init, "... NCCL INFO 24 coll channels, 24
// collnet channels, 16 nvls channels, 32 p2p channels, 32 p2p channels per peer" (src/init.cc;
// without collnet before 2.2x, without nvls before 2.17): comm->nChannels and, where printed,
// comm->nvlsChannels. nullopt for any other line.
struct EchoedChannels {
  int coll = 0;
  std::optional<int> nvls;
};
std::optional<EchoedChannels> find_nccl_channels(std::string_view line);
// "2.22.3" from a value that opens with a release, such as a curated file's
// "# nccl: 2.22.3+cuda12.6 (printed in log)"; nullopt for "not printed", "probably 2.29.2", ...
std::optional<std::string> leading_nccl_version(std::string_view value);

}  // namespace collsim::detail
