#include "calibrate/nccl_tests_json.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

#include "calibrate/measurement.hpp"

namespace collsim::detail {

namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& where, std::string_view what) {
  throw MeasurementError(fmt::format("{}: {}", where, what));
}

// What `key` of `object` holds, when it is of the kind `is` accepts.
const json* member(const json& object, const char* key, bool (json::*is)() const noexcept) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  if (it == object.end() || !((*it).*is)()) return nullptr;
  return &*it;
}

// A number as nccl-tests' table prints it back: the value JSON holds, in the fewest digits that
// read back to it (the reader takes a number's precision from its digits), or the text JSON has
// in its place ("nan").
std::string number(const json& v) {
  if (v.is_number_integer()) return fmt::format("{}", v.get<std::int64_t>());
  if (v.is_number()) return fmt::format("{}", v.get<double>());
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

// One result group, "time algbw busbw #wrong", from {time, alg_bw, bus_bw, nwrong}.
std::string group(const json& g, const std::string& where, const char* name) {
  if (member(g, "cpu_time", &json::is_number) != nullptr) {
    fail(where,
         "the report holds cpu_time (nccl-tests -C 1), the host's time per iteration, not the "
         "collective's; expected time: rerun without -C");
  }
  const json* time = member(g, "time", &json::is_primitive);
  const json* algbw = member(g, "alg_bw", &json::is_primitive);
  const json* busbw = member(g, "bus_bw", &json::is_primitive);
  if (time == nullptr || algbw == nullptr || busbw == nullptr) {
    fail(where, fmt::format("\"{}\" has no time, alg_bw and bus_bw; expected nccl-tests' -J "
                            "report",
                            name));
  }
  // nccl-tests writes the count of wrong elements as a double ("0.000000"), null unchecked.
  const auto wrong = g.find("nwrong");
  std::string check = "N/A";
  if (wrong != g.end() && !wrong->is_null()) {
    check = number(*wrong);
    if (wrong->is_number_float()) {
      const double w = wrong->get<double>();
      if (w >= 0 && w < 9e18 && w == std::floor(w)) check = fmt::format("{}", std::int64_t(w));
    }
  }
  return fmt::format("  {}  {}  {}  {}", number(*time), number(*algbw), number(*busbw), check);
}

}  // namespace

bool looks_like_json(std::string_view text) {
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && text[first] == '{';
}

std::vector<LogLine> nccl_tests_json_lines(std::string_view text, const std::string& path) {
  json report;
  try {
    report = json::parse(text);
  } catch (const json::parse_error& e) {
    fail(path, fmt::format("not valid JSON (byte {}); expected nccl-tests' -J report", e.byte));
  }
  const json* results = member(report, "results", &json::is_array);
  if (results == nullptr) {
    fail(path, "a JSON document without a \"results\" list; expected nccl-tests' -J report");
  }
  std::vector<LogLine> out;
  auto head = [&](std::string line) { out.push_back({1, std::move(line)}); };

  if (const json* args = member(report, "args", &json::is_array)) {
    for (const json& a : *args) {
      if (!a.is_string()) continue;
      const std::string arg = a.get<std::string>();
      const std::string program = arg.substr(arg.find_last_of('/') + 1);
      if (program.find("_perf") == std::string::npos) continue;
      head("# Collective test starting: " + program);
      break;
    }
  }
  if (const json* code = member(report, "nccl_version", &json::is_number_integer)) {
    head("# nccl: " + nccl_version_from_code(code->get<std::int64_t>()) +
         " (the report's nccl_version " + std::to_string(code->get<std::int64_t>()) + ")");
  }
  if (const json* env = member(report, "env", &json::is_array)) {
    std::vector<std::string> nccl;
    for (const json& e : *env) {
      if (!e.is_string()) continue;
      const std::string kv = e.get<std::string>();
      if (kv.starts_with("NCCL_") && kv.find_first_of(" \t") == std::string::npos) {
        nccl.push_back(kv);
      }
    }
    if (!nccl.empty()) head(fmt::format("# env: {}", fmt::join(nccl, " ")));
  }
  const json* config = member(report, "config", &json::is_object);
  if (config != nullptr) {
    const auto integer = [&](const char* key) -> std::optional<std::int64_t> {
      const json* v = member(*config, key, &json::is_number_integer);
      return v != nullptr ? std::optional(v->get<std::int64_t>()) : std::nullopt;
    };
    const auto flag = [&](const char* key) -> std::optional<std::int64_t> {
      if (const json* v = member(*config, key, &json::is_boolean)) return v->get<bool>() ? 1 : 0;
      return integer(key);
    };
    const auto threads = integer("nthreads");
    const auto gpus = integer("ngpus");
    const auto lo = integer("minimum_bytes");
    const auto hi = integer("maximum_bytes");
    const auto factor = integer("step_factor");
    const auto bytes = integer("step_bytes");
    const auto warmup = integer("warmup_iters");
    const auto iters = integer("iterations");
    const auto agg = integer("aggregated_iterations");
    const auto validation = flag("validation");
    const auto graph = integer("graph");
    if (threads && gpus && lo && hi && (factor || bytes) && warmup && iters && agg && validation &&
        graph) {
      head(fmt::format(
          "# nThread {} nGpus {} minBytes {} maxBytes {} step: {}({}) warmup iters: {} iters: {} "
          "agg iters: {} validation: {} graph: {}",
          *threads, *gpus, *lo, *hi, factor ? *factor : *bytes, factor ? "factor" : "bytes",
          *warmup, *iters, *agg, *validation, *graph));
    }
    if (const json* b = member(*config, "blocking_collectives", &json::is_boolean);
        b != nullptr && b->get<bool>()) {
      head("# Blocking Enabled: blocking_collectives in the report's config (nccl-tests -z)");
    }
    // One entry per process (its first rank): every process drives nthreads x ngpus ranks.
    if (const json* devices = member(*config, "devices", &json::is_array)) {
      for (const json& d : *devices) {
        const json* rank = member(d, "rank", &json::is_number_integer);
        const json* host = member(d, "hostname", &json::is_string);
        const json* device = member(d, "device", &json::is_number_integer);
        if (rank == nullptr || host == nullptr || device == nullptr) continue;
        const json* group = member(d, "group", &json::is_number_integer);
        const json* pid = member(d, "pid", &json::is_number_integer);
        const json* bus = member(d, "device_hex", &json::is_string);
        const json* name = member(d, "device_info", &json::is_string);
        head(fmt::format("#  Rank {:2} Group {:2} Pid {:6} on {:>10} device {:2} [{}] {}",
                         rank->get<int>(), group ? group->get<int>() : 0,
                         pid ? pid->get<std::int64_t>() : 0, host->get<std::string>(),
                         device->get<int>(), bus ? bus->get<std::string>() : "0000:00:00",
                         name ? name->get<std::string>() : "GPU"));
      }
      if (threads && gpus && !devices->empty()) {
        head(fmt::format("### GPUS={}",
                         static_cast<std::int64_t>(devices->size()) * *threads * *gpus));
      }
    }
  }
  head(
      "#       size         count      type   redop    root     time   algbw   busbw  #wrong     "
      "time   algbw   busbw  #wrong");

  int index = 0;
  for (const json& r : *results) {
    ++index;
    const std::string where = fmt::format("{}:{}", path, index);
    // "out_of_place": null is a size nccl-tests did not time (writeBenchMarkLineNullBody).
    if (const json* none = member(r, "out_of_place", &json::is_null); none != nullptr) continue;
    const json* oop = member(r, "out_of_place", &json::is_object);
    const json* ip = member(r, "in_place", &json::is_object);
    const json* size = member(r, "size", &json::is_number_unsigned);
    const json* count = member(r, "count", &json::is_number_unsigned);
    const json* type = member(r, "type", &json::is_string);
    const json* redop = member(r, "redop", &json::is_string);
    const json* root = member(r, "root", &json::is_primitive);
    if (size == nullptr || count == nullptr || type == nullptr || redop == nullptr ||
        root == nullptr || oop == nullptr || ip == nullptr) {
      fail(where,
           "a result without size, count, type, redop, root, out_of_place and in_place; "
           "expected nccl-tests' -J report");
    }
    out.push_back(
        {index, fmt::format("  {}  {}  {}  {}  {}{}{}", size->get<std::uint64_t>(),
                            count->get<std::uint64_t>(), type->get<std::string>(),
                            redop->get<std::string>(), trim(number(*root)),
                            group(*oop, where, "out_of_place"), group(*ip, where, "in_place"))});
  }
  return out;
}

}  // namespace collsim::detail
