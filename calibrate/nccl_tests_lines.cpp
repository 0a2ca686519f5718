#include "calibrate/nccl_tests_lines.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

namespace collsim::detail {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

bool is_key_char(char c, bool upper_only) {
  if (c >= 'A' && c <= 'Z') return true;
  if (c >= '0' && c <= '9') return true;
  if (c == '_') return true;
  return !upper_only && c >= 'a' && c <= 'z';
}

std::string_view strip_quotes(std::string_view s) {
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front()) {
    return s.substr(1, s.size() - 2);
  }
  return s;
}

std::optional<std::pair<std::string, std::string>> split_assignment(std::string_view word,
                                                                    bool upper_only) {
  const auto eq = word.find('=');
  if (eq == 0 || eq == std::string_view::npos) return std::nullopt;
  const std::string_view key = word.substr(0, eq);
  if (key.front() >= '0' && key.front() <= '9') return std::nullopt;
  for (char c : key) {
    if (!is_key_char(c, upper_only)) return std::nullopt;
  }
  return std::pair{std::string(key), std::string(strip_quotes(word.substr(eq + 1)))};
}

bool is_digit_at(std::string_view s, std::size_t i) {
  return i < s.size() && s[i] >= '0' && s[i] <= '9';
}

// The length of the Open MPI --tag-output tag "[job,rank]<stream>:" at the start of `s`; 0 if
// there is none.
std::size_t open_mpi_tag_length(std::string_view s) {
  std::size_t i = 0;
  auto skip_digits = [&] {
    const std::size_t start = i;
    while (is_digit_at(s, i)) ++i;
    return i > start;
  };
  auto expect = [&](std::string_view what) {
    if (s.substr(i, what.size()) != what) return false;
    i += what.size();
    return true;
  };
  if (!expect("[") || !skip_digits() || !expect(",") || !skip_digits() || !expect("]<")) return 0;
  const std::size_t stream = i;
  while (i < s.size() && s[i] >= 'a' && s[i] <= 'z') ++i;
  if (i == stream || !expect(">:")) return 0;
  return i;
}

// A stretch of a physical line and the Open MPI tag before it ("" for text before any tag).
struct TaggedPiece {
  std::string_view tag;
  std::string_view text;
};

// `line` cut at its Open MPI tags: the text before the first tag, then each tag's text.
std::vector<TaggedPiece> split_at_tags(std::string_view line) {
  std::vector<TaggedPiece> pieces(1);
  std::size_t start = 0;  // of the last piece's text
  for (std::size_t i = line.find('['); i != std::string_view::npos; i = line.find('[', i + 1)) {
    const std::size_t n = open_mpi_tag_length(line.substr(i));
    if (n == 0) continue;
    pieces.back().text = line.substr(start, i - start);
    pieces.push_back({line.substr(i, n - 1), {}});  // the tag without its ':'
    start = i + n;
    i = start - 1;
  }
  pieces.back().text = line.substr(start);
  return pieces;
}

}  // namespace

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split_words(std::string_view s) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_space(s[i])) ++i;
    const std::size_t start = i;
    while (i < s.size() && !is_space(s[i])) ++i;
    if (i > start) words.push_back(s.substr(start, i - start));
  }
  return words;
}

bool is_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

bool looks_like_number(std::string_view w) {
  std::size_t i = 0;
  auto digits = [&] {
    const std::size_t start = i;
    while (i < w.size() && w[i] >= '0' && w[i] <= '9') ++i;
    return i > start;
  };
  if (!digits()) return false;
  if (i < w.size() && w[i] == '.' && (++i, !digits())) return false;
  if (i < w.size() && (w[i] == 'e' || w[i] == 'E')) {
    ++i;
    if (i < w.size() && (w[i] == '+' || w[i] == '-')) ++i;
    if (!digits()) return false;
  }
  const std::string_view unit = w.substr(i);
  for (std::string_view u : {"", "B", "K", "M", "G", "T", "KB", "MB", "GB", "TB", "KiB", "MiB",
                             "GiB", "TiB", "k", "m", "g"}) {
    if (unit == u) return true;
  }
  return false;
}

std::optional<std::int64_t> parse_integer(std::string_view s) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string_view strip_line_prefix(std::string_view line) {
  // Intel MPI -prepend-rank: "[3] ".
  if (line.starts_with('[')) {
    const auto bracket = line.find(']');
    if (bracket != std::string_view::npos && is_digits(line.substr(1, bracket - 1))) {
      return line.substr(bracket + 1);
    }
    return line;
  }
  // Ray: "(head, rank=0, pid=3808) ", "(RayTrainWorker pid=3808, ip=10.0.0.2) ". No nccl-tests
  // line starts with '('.
  if (line.starts_with('(')) {
    const auto close = line.find(')');
    const auto pid = line.find("pid=");
    if (close != std::string_view::npos && pid < close && is_digit_at(line, pid + 4)) {
      return line.substr(close + 1);
    }
    return line;
  }
  // srun --label: "12: ", right-aligned (" 3: ") when there are ten tasks or more. A table row
  // never has a colon after its first number.
  const std::string_view t = trim(line);
  const auto colon = t.find(':');
  if (colon != std::string_view::npos && colon > 0 && is_digits(t.substr(0, colon)) &&
      (colon + 1 == t.size() || t[colon + 1] == ' ')) {
    return t.substr(colon + 1);
  }
  return line;
}

std::vector<LogLine> unwrap_log(const std::vector<std::string_view>& lines) {
  std::vector<LogLine> out;
  // Per tag, the line its rank began and has not ended yet.
  std::map<std::string, LogLine, std::less<>> open;
  auto finish = [&](LogLine l) {
    l.text = std::string(strip_line_prefix(l.text));
    out.push_back(std::move(l));
  };
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::vector<TaggedPiece> pieces = split_at_tags(lines[i]);
    for (std::size_t k = 0; k < pieces.size(); ++k) {
      const TaggedPiece& p = pieces[k];
      if (k == 0 && p.text.empty() && pieces.size() > 1) continue;  // the line starts with a tag
      auto it = open.try_emplace(std::string(p.tag), LogLine{static_cast<int>(i) + 1, ""}).first;
      it->second.text += p.text;
      // A rank's line goes on when another tag follows. Untagged text (the launcher's own, a
      // curator's note) is not continued elsewhere: it ends where a tag cuts in.
      if (k + 1 < pieces.size() && !p.tag.empty()) continue;
      finish(std::move(it->second));
      open.erase(it);
    }
  }
  // Lines the file ends before their rank ended them: read as they are, so that a row cut short
  // is reported as such.
  std::vector<LogLine> rest;
  for (auto& [tag, l] : open) rest.push_back(std::move(l));
  std::stable_sort(rest.begin(), rest.end(),
                   [](const LogLine& a, const LogLine& b) { return a.line < b.line; });
  for (LogLine& l : rest) finish(std::move(l));
  return out;
}

std::optional<DeviceLine> parse_device_line(std::string_view body, int line) {
  const std::vector<std::string_view> w = split_words(body);
  if (w.size() < 2 || w[0] != "Rank") return std::nullopt;
  DeviceLine d;
  d.line = line;
  const auto rank = parse_integer(w[1]);
  if (!rank || *rank < 0) return std::nullopt;
  d.rank = static_cast<int>(*rank);
  std::size_t i = 2;
  while (i < w.size() && w[i] != "on") ++i;
  if (i + 1 >= w.size()) return std::nullopt;
  d.host = std::string(w[i + 1]);
  while (i < w.size() && w[i] != "device") ++i;
  if (i + 2 >= w.size()) return std::nullopt;
  const auto device = parse_integer(w[i + 1]);
  if (!device) return std::nullopt;
  d.device = static_cast<int>(*device);
  const std::string_view bus = w[i + 2];
  if (bus.size() < 2 || bus.front() != '[' || bus.back() != ']') return std::nullopt;
  d.bus_id = std::string(bus.substr(1, bus.size() - 2));
  const std::size_t after = static_cast<std::size_t>(bus.data() + bus.size() - body.data());
  d.gpu_name = std::string(trim(body.substr(after)));
  return d;
}

std::optional<RunParameters> parse_run_header(std::string_view body, int line) {
  const std::vector<std::string_view> w = split_words(body);
  if (w.empty() || w[0] != "nThread") return std::nullopt;
  RunParameters p;
  p.line = line;
  auto int_at = [&](std::size_t i) -> std::optional<int> {
    if (i >= w.size()) return std::nullopt;
    const auto v = parse_integer(w[i]);
    if (!v) return std::nullopt;
    return static_cast<int>(*v);
  };
  auto bytes_at = [&](std::size_t i) -> std::optional<std::uint64_t> {
    if (i >= w.size()) return std::nullopt;
    const auto v = parse_integer(w[i]);
    if (!v || *v < 0) return std::nullopt;
    return static_cast<std::uint64_t>(*v);
  };
  for (std::size_t i = 0; i < w.size(); ++i) {
    const std::string_view k = w[i];
    const bool iters_next = i + 1 < w.size() && w[i + 1] == "iters:";
    if (k == "nThread") p.threads = int_at(i + 1);
    if (k == "nGpus") p.gpus_per_thread = int_at(i + 1);
    if (k == "minBytes") p.min_bytes = bytes_at(i + 1);
    if (k == "maxBytes") p.max_bytes = bytes_at(i + 1);
    if (k == "validation:") p.validation = int_at(i + 1);
    if (k == "graph:") p.graph = int_at(i + 1);
    if ((k == "warmup" || k == "agg") && iters_next) {
      (k == "warmup" ? p.warmup_iters : p.agg_iters) = int_at(i + 2);
      i += 2;  // so that their "iters:" is not read as the plain iteration count
      continue;
    }
    if (k == "iters:") p.iters = int_at(i + 1);
    if (k == "step:" && i + 1 < w.size()) {
      const std::string_view s = w[i + 1];
      const auto paren = s.find('(');
      const std::string_view num = s.substr(0, paren);
      if (s.ends_with("(factor)")) {
        double f = 0;
        const auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), f);
        if (ec == std::errc() && end == num.data() + num.size()) p.step_factor = f;
      } else if (s.ends_with("(bytes)")) {
        if (const auto v = parse_integer(num); v && *v >= 0) {
          p.step_bytes = static_cast<std::uint64_t>(*v);
        }
      }
    }
  }
  return p;
}

bool looks_like_column_header(std::string_view body) {
  const std::vector<std::string_view> w = split_words(body);
  return w.size() >= 3 && w[0] == "size" && w[1] == "count" && w[2] == "type";
}

std::optional<ColumnLayout> parse_column_header(std::string_view body, std::string* got) {
  const std::vector<std::string_view> w = split_words(body);
  *got = fmt::format("{}", fmt::join(w, " "));
  ColumnLayout layout;
  std::size_t i = 0;
  for (std::string_view name : {"size", "count", "type", "redop"}) {
    if (i >= w.size() || w[i] != name) return std::nullopt;
    ++i;
  }
  layout.has_root = i < w.size() && w[i] == "root";
  if (layout.has_root) ++i;
  std::size_t end = w.size();
  if (end > i && w[end - 1] == "timestamp") {
    layout.timestamp = true;
    --end;
  }
  const auto summary_at = [&](std::size_t k) {
    return k + 4 <= end && w[k] == "i_min" && w[k + 1] == "i_max" && w[k + 2] == "i_p99" &&
           w[k + 3] == "i_cv%";
  };
  int groups = 0;
  while (i < end) {
    if (i + 4 > end || w[i] != "time" || w[i + 1] != "algbw" || w[i + 2] != "busbw") {
      return std::nullopt;
    }
    const bool error = w[i + 3] == "error";
    if (!error && w[i + 3] != "#wrong") return std::nullopt;
    if (groups > 0 && error != layout.old_error) return std::nullopt;
    layout.old_error = error;
    i += 4;
    const bool summary = summary_at(i);
    if (groups > 0 && summary != layout.per_iter) return std::nullopt;
    layout.per_iter = summary;
    if (summary) i += 4;
    ++groups;
  }
  if (groups < 1 || groups > 2) return std::nullopt;
  layout.has_inplace = groups == 2;
  layout.columns = static_cast<int>(end) + (layout.timestamp ? 2 : 0);
  return layout;
}

namespace {

// nccl-tests' -S timestamp, "%Y-%m-%d %H:%M:%S": its two words.
bool is_date_time(std::string_view date, std::string_view time) {
  const auto digits = [](std::string_view s, std::string_view shape) {
    if (s.size() != shape.size()) return false;
    for (std::size_t k = 0; k < s.size(); ++k) {
      if (shape[k] == 'd' ? !std::isdigit(static_cast<unsigned char>(s[k])) : s[k] != shape[k]) {
        return false;
      }
    }
    return true;
  };
  return digits(date, "dddd-dd-dd") && digits(time, "dd:dd:dd");
}

}  // namespace

std::optional<ColumnLayout> layout_for_row_fields(const std::vector<std::string_view>& fields) {
  ColumnLayout layout;
  std::size_t n = fields.size();
  if (n >= 2 && is_date_time(fields[n - 2], fields[n - 1])) {
    layout.timestamp = true;
    n -= 2;
  }
  if (n == 13 || n == 21) {
    layout.per_iter = n == 21;
  } else if (n == 12) {
    layout.has_root = false;
    layout.old_error = true;
  } else {
    return std::nullopt;
  }
  layout.columns = static_cast<int>(fields.size());
  return layout;
}

std::optional<std::pair<std::string, std::string>> parse_assignment(std::string_view word) {
  return split_assignment(word, true);
}

std::optional<std::pair<std::string, std::string>> parse_any_assignment(std::string_view word) {
  return split_assignment(word, false);
}

std::vector<std::pair<std::string, std::string>> parse_env_assignments(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> out;
  const std::vector<std::string_view> w = split_words(text);
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (w[i].starts_with('(')) {
      int depth = 0;
      for (; i < w.size(); ++i) {
        for (char c : w[i]) depth += c == '(' ? 1 : c == ')' ? -1 : 0;
        if (depth <= 0) break;
      }
      continue;
    }
    std::string_view word = w[i];
    while (!word.empty() && (word.back() == ';' || word.back() == ',' || word.back() == '.')) {
      word.remove_suffix(1);
    }
    auto a = parse_assignment(word);
    if (!a) break;
    out.push_back(std::move(*a));
  }
  return out;
}

std::map<std::string, std::string> parse_label(std::string_view text) {
  std::map<std::string, std::string> out;
  for (std::string_view word : split_words(text)) {
    if (auto a = parse_any_assignment(word)) out[a->first] = a->second;
  }
  return out;
}

std::optional<std::string> label_value(const std::map<std::string, std::string>& labels,
                                       std::string_view key) {
  for (const auto& [k, v] : labels) {
    std::string upper;
    for (char c : k) upper += static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    if (upper == key || upper == "NCCL_" + std::string(key)) return v;
  }
  return std::nullopt;
}

std::string nccl_version_from_code(std::int64_t code) {
  if (code >= 10000) return fmt::format("{}.{}.{}", code / 10000, code % 10000 / 100, code % 100);
  return fmt::format("{}.{}.{}", code / 1000, code % 1000 / 100, code % 100);
}

std::optional<std::string> find_nccl_version(std::string_view line) {
  constexpr std::string_view kBanner = "NCCL version ";
  const auto at = line.find(kBanner);
  if (at == std::string_view::npos) return std::nullopt;
  return leading_nccl_version(line.substr(at + kBanner.size()));
}

namespace {

// What an NCCL INFO line says after "NCCL INFO " ("host:pid:tid [dev] NCCL INFO ..."); nullopt
// for any other line.
std::optional<std::string_view> nccl_info_text(std::string_view line) {
  constexpr std::string_view kInfo = "NCCL INFO ";
  const auto info = line.find(kInfo);
  if (info == std::string_view::npos) return std::nullopt;
  return line.substr(info + kInfo.size());
}

}  // namespace

std::optional<std::pair<std::string, std::string>> find_nccl_env(std::string_view line) {
  constexpr std::string_view kSet = " set by environment to ";
  const std::optional<std::string_view> info = nccl_info_text(line);
  if (!info) return std::nullopt;
  const std::string_view rest = *info;
  const auto set = rest.find(kSet);
  if (set == std::string_view::npos || set == 0) return std::nullopt;
  const std::string_view key = rest.substr(0, set);
  const bool variable = std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
  if (!variable) return std::nullopt;
  std::string_view value = trim(rest.substr(set + kSet.size()));
  const bool integer = value.size() > 1 && value.back() == '.' &&
                       std::all_of(value.begin(), value.end() - 1,
                                   [](char c) { return (c >= '0' && c <= '9') || c == '-'; });
  if (integer) value.remove_suffix(1);
  return std::make_pair(std::string(key), std::string(value));
}

std::optional<EchoedChannels> find_nccl_channels(std::string_view line) {
  const std::optional<std::string_view> info = nccl_info_text(line);
  if (!info) return std::nullopt;
  // "<n> <what> channels" items, comma-separated.
  const auto count_of = [](std::string_view item, std::string_view what) -> std::optional<int> {
    item = trim(item);
    const std::string suffix = " " + std::string(what) + " channels";
    if (!item.ends_with(suffix)) return std::nullopt;
    const std::string_view digits = item.substr(0, item.size() - suffix.size());
    int n = -1;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (ec != std::errc() || end != digits.data() + digits.size() || n < 0) return std::nullopt;
    return n;
  };
  std::string_view rest = *info;
  std::vector<std::string_view> items;
  for (std::size_t comma = rest.find(','); !rest.empty(); comma = rest.find(',')) {
    items.push_back(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  if (items.empty()) return std::nullopt;
  const std::optional<int> coll = count_of(items[0], "coll");
  if (!coll) return std::nullopt;
  EchoedChannels out{*coll, std::nullopt};
  for (std::size_t i = 1; i < items.size(); ++i) {
    if (const std::optional<int> n = count_of(items[i], "nvls")) out.nvls = n;
  }
  return out;
}

std::optional<std::string> leading_nccl_version(std::string_view rest) {
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  std::size_t n = 0;
  int dots = 0;
  while (n < rest.size() && ((rest[n] >= '0' && rest[n] <= '9') || rest[n] == '.')) {
    dots += rest[n] == '.';
    ++n;
  }
  if (dots != 2 || n == 0 || rest[n - 1] == '.') return std::nullopt;
  return std::string(rest.substr(0, n));
}

}  // namespace collsim::detail
