// `collsim scale CONFIG --op OP --bytes SIZE --nodes LIST [--algo A] [--proto P] [--channels N]
//  [--model M] [--nccl-*] [--costs F...] [--format table|csv|json] [--plot FILE.svg|png]`:
// one collective of one size as a templated cluster grows (docs/cli.md). Each node count rebuilds
// the cluster with that many nodes (the fabric grown as its config says, docs/config.md), and
// every applicable algorithm x protocol is costed there: time, busbw, the fastest marked, what
// NCCL's tuning model would pick, the node ranges each candidate wins and the crossovers
// between them. --nodes takes a list (1,2,4,64) or a range a:b[:f] (a, a*f, a*f^2, ... up to
// and including b; f defaults to 2). --channels left out follows NCCL's channel count at each
// size of the cluster. CSV: a `nodes` column, then docs/cli.md's columns, one row per node count
// and candidate; JSON: the same rows with "nodes" and "best", plus "ranges" and "crossovers".
#include <fmt/format.h>

#include <charconv>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/collective_args.hpp"
#include "cli/commands.hpp"
#include "cli/nccl_tests_table.hpp"
#include "cli/output_rows.hpp"
#include "cli/plot.hpp"
#include "cli/progress.hpp"
#include "cli/sweep_output.hpp"
#include "topology/error.hpp"

namespace collsim {

namespace {

struct ScaleArgs {
  CollectiveArgs c;
  std::string nodes;
  ModelArgs model;
  std::string format = "table";
  std::string plot;
};

constexpr long long kMaxNodeCounts = 4096;

long long parse_count(const std::string& text, const std::string& whole) {
  long long v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end || v < 1 || v > (1 << 20)) {
    throw RequestError(
        fmt::format("--nodes {}: \"{}\" is not a node count (expected a whole number from 1 to {})",
                    whole, text, 1 << 20));
  }
  return v;
}

}  // namespace

std::vector<int> parse_node_counts(const std::string& text) {
  std::vector<int> out;
  if (text.find(':') != std::string::npos) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (std::size_t colon; (colon = text.find(':', start)) != std::string::npos;) {
      parts.push_back(text.substr(start, colon - start));
      start = colon + 1;
    }
    parts.push_back(text.substr(start));
    if (parts.size() > 3) {
      throw RequestError(fmt::format("--nodes {}: expected a range a:b or a:b:factor", text));
    }
    const long long a = parse_count(parts[0], text), b = parse_count(parts[1], text);
    const long long f = parts.size() == 3 ? parse_count(parts[2], text) : 2;
    if (b < a) throw RequestError(fmt::format("--nodes {}: the range ends before it starts", text));
    if (f < 2) throw RequestError(fmt::format("--nodes {}: the factor must be at least 2", text));
    for (long long n = a; n <= b; n *= f) out.push_back(static_cast<int>(n));
    if (out.back() != b) out.push_back(static_cast<int>(b));
  } else {
    std::size_t start = 0;
    while (true) {
      const std::size_t comma = text.find(',', start);
      const std::string item = text.substr(start, comma - start);
      const long long n = parse_count(item, text);
      if (!out.empty() && n <= out.back()) {
        throw RequestError(fmt::format("--nodes {}: node counts must increase ({} after {})", text,
                                       n, out.back()));
      }
      out.push_back(static_cast<int>(n));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  if (static_cast<long long>(out.size()) > kMaxNodeCounts) {
    throw RequestError(
        fmt::format("--nodes {}: {} node counts, at most {}", text, out.size(), kMaxNodeCounts));
  }
  return out;
}

namespace {

struct ScaleRow {
  int nodes = 0;
  std::vector<std::optional<ResultRow>> rows;  // per candidate (Scaling::candidates)
  std::size_t best = 0;
  std::string nccl_pick;
  std::string detail;  // the best one's evaluation detail (bottleneck link, ...)
};

struct Scaling {
  std::vector<Candidate> candidates;  // every candidate costed at some node count
  std::vector<ScaleRow> rows;
  std::string cluster, model;
  Collective collective = Collective::kAllReduce;
  DataType dtype = DataType::kF32;
  std::uint64_t bytes = 0;
  std::string nccl_version;
};

std::size_t candidate_index(Scaling& s, const Candidate& c) {
  for (std::size_t k = 0; k < s.candidates.size(); ++k) {
    if (to_string(s.candidates[k]) == to_string(c)) return k;
  }
  s.candidates.push_back(c);
  for (ScaleRow& r : s.rows) r.rows.emplace_back();
  return s.candidates.size() - 1;
}

Scaling scale(const ScaleArgs& a, const std::vector<int>& counts) {
  Scaling out;
  Progress progress("scale", counts.size(), "node counts");
  for (int nodes : counts) {
    CollectiveArgs args = a.c;
    args.req.nodes = nodes;
    const Prepared p = prepare(args);
    const Predictor ev(predict_setup(p, a.model));
    if (out.rows.empty()) {
      out.cluster = p.topo.name();
      out.model = model_description(ev);
      out.collective = p.request.collective;
      out.dtype = p.request.dtype;
      out.bytes = ev.size_of(p.request.count);
      out.nccl_version =
          ev.nccl() ? std::string(to_string(ev.nccl()->input().version)) : a.model.nccl_version;
    }
    const auto grid = ev.evaluate_grid({p.request.count}, ev.candidates()).front();
    ScaleRow row;
    row.nodes = nodes;
    row.rows.resize(out.candidates.size());
    out.rows.push_back(std::move(row));
    std::optional<std::size_t> best;
    Time best_time;
    for (std::size_t j = 0; j < grid.size(); ++j) {
      if (!grid[j]) continue;
      const std::size_t k = candidate_index(out, ev.candidates()[j]);
      ScaleRow& r = out.rows.back();
      r.rows[k] = make_row(p.request, ev.candidates()[j], grid[j]->time);
      if (!best || grid[j]->time < best_time) {
        best = k;
        best_time = grid[j]->time;
        r.detail = grid[j]->detail;
      }
    }
    if (!best) {
      throw RequestError(fmt::format(
          "--model {} can cost none of the allowed algorithms for {} "
          "on {} node{}",
          a.model.model, to_string(p.request.collective), nodes, nodes == 1 ? "" : "s"));
    }
    out.rows.back().best = *best;
    try {
      const NcclModel* nccl = ev.nccl();
      std::optional<NcclModel> own;
      if (!nccl) {
        own.emplace(nccl_input(a.model, p.topo, p.request.comm));
        nccl = &*own;
      }
      out.rows.back().nccl_pick =
          select_nccl(*nccl, p.request.collective, out.bytes, p.choice, false).nccl_pick;
    } catch (const Error&) {
      out.rows.back().nccl_pick.clear();  // NCCL's model has no say here
    }
    progress.step(fmt::format("{} nodes", nodes));
  }
  return out;
}

// "ring/ll: 1-4 nodes; dbtree/ll: 16-4096 nodes".
std::string best_ranges(const Scaling& s) {
  std::string out;
  for (std::size_t i = 0; i < s.rows.size();) {
    std::size_t j = i;
    while (j + 1 < s.rows.size() && s.rows[j + 1].best == s.rows[i].best) ++j;
    const int lo = s.rows[i].nodes, hi = s.rows[j].nodes;
    out += fmt::format("{}{}: {} node{}", out.empty() ? "" : "; ",
                       to_string(s.candidates[s.rows[i].best]),
                       lo == hi ? std::to_string(lo) : fmt::format("{}-{}", lo, hi),
                       lo == 1 && hi == 1 ? "" : "s");
    i = j + 1;
  }
  return out;
}

// "ring/ll -> dbtree/ll between 4 and 16 nodes (ring/ll 2.1x slower at 16)".
std::vector<std::string> crossovers(const Scaling& s) {
  std::vector<std::string> out;
  for (std::size_t i = 1; i < s.rows.size(); ++i) {
    const std::size_t from = s.rows[i - 1].best, to = s.rows[i].best;
    if (from == to) continue;
    std::string ratio;
    if (const auto& old = s.rows[i].rows[from]) {
      ratio = fmt::format(" ({} {:.3g}x slower at {})", to_string(s.candidates[from]),
                          old->time_us / s.rows[i].rows[to]->time_us, s.rows[i].nodes);
    }
    out.push_back(fmt::format("{} -> {} between {} and {} nodes{}", to_string(s.candidates[from]),
                              to_string(s.candidates[to]), s.rows[i - 1].nodes, s.rows[i].nodes,
                              ratio));
  }
  return out;
}

void print_table(const Scaling& s) {
  fmt::print("# collsim scale: {} of {} ({}) on {}, {} to {} nodes\n", to_string(s.collective),
             human_bytes(s.bytes), to_string(s.dtype), s.cluster, s.rows.front().nodes,
             s.rows.back().nodes);
  fmt::print("# model: {}\n", s.model);
  fmt::print(
      "# time (us) per algorithm and protocol; * = the fastest at that node count; - = the "
      "model cannot cost it; busbw (GB/s) of the fastest; NCCL picks = NCCL's tuning model ({})\n",
      s.nccl_version);
  std::size_t width = 4;
  for (const Candidate& c : s.candidates) width = std::max(width, to_string(c).size());
  std::string head1 = fmt::format("{:>7} {:>8}", "", "");
  std::string head2 = fmt::format("{:>7} {:>8}", "nodes", "ranks");
  for (const Candidate& c : s.candidates) {
    head1 += fmt::format("  {:>7} ", c.algorithm);
    head2 += fmt::format("  {:>7} ", to_string(c.protocol));
  }
  head2 += fmt::format("  {:<{}}  {:>7}  {}", "best", width, "busbw", "NCCL picks");
  fmt::print("{}\n{}\n", head1, head2);
  for (const ScaleRow& r : s.rows) {
    const ResultRow& b = *r.rows[r.best];
    std::string line = fmt::format("{:>7} {:>8}", r.nodes, b.ranks);
    for (std::size_t k = 0; k < s.candidates.size(); ++k) {
      const auto& o = r.rows[k];
      line += o ? fmt::format("  {}{}", nccl_tests_time(o->time_us), k == r.best ? "*" : " ")
                : fmt::format("  {:>7} ", "-");
    }
    line += fmt::format("  {:<{}}  {:7.2f}  {}", to_string(s.candidates[r.best]), width,
                        b.busbw_GBps, r.nccl_pick.empty() ? "-" : r.nccl_pick);
    fmt::print("{}\n", line);
  }
  fmt::print("\nbest: {}\n", best_ranges(s));
  const auto cross = crossovers(s);
  if (cross.empty()) {
    fmt::print("crossovers: none in this range\n");
  } else {
    fmt::print("crossovers:\n");
    for (const std::string& c : cross) fmt::print("  {}\n", c);
  }
}

void plot(const std::string& path, const Scaling& s) {
  ComparePlot plot;
  plot.x_nodes = true;
  plot.title = fmt::format("{} of {} on {} by node count, model {}", to_string(s.collective),
                           human_bytes(s.bytes), s.cluster, s.model);
  std::vector<std::string> algos;
  for (std::size_t k = 0; k < s.candidates.size(); ++k) {
    const Candidate& c = s.candidates[k];
    auto it = std::find(algos.begin(), algos.end(), c.algorithm);
    if (it == algos.end()) it = algos.insert(algos.end(), c.algorithm);
    PlotSeries ser{to_string(c),
                   static_cast<int>(it - algos.begin()),
                   c.protocol == Protocol::kSimple  ? 0
                   : c.protocol == Protocol::kLL128 ? 1
                                                    : 2,
                   {}};
    for (const ScaleRow& r : s.rows) {
      if (const auto& o = r.rows[k]) {
        ser.points.push_back({static_cast<std::uint64_t>(r.nodes), o->time_us, o->busbw_GBps});
      }
    }
    plot.series.push_back(std::move(ser));
  }
  for (const ScaleRow& r : s.rows) {
    const ResultRow& b = *r.rows[r.best];
    plot.best.push_back({static_cast<std::uint64_t>(r.nodes), b.time_us, b.busbw_GBps});
  }
  write_plot(path, plot);
}

void run_scale(const ScaleArgs& a) {
  if (!a.plot.empty()) check_plot_output(a.plot);
  const std::vector<int> counts = parse_node_counts(a.nodes);
  const Scaling s = scale(a, counts);
  if (a.format == "csv") {
    std::cout << "nodes," << csv_header() << "\n";
    for (const ScaleRow& r : s.rows) {
      for (const auto& o : r.rows) {
        if (o) std::cout << r.nodes << "," << csv_line(*o) << "\n";
      }
    }
  } else if (a.format == "json") {
    nlohmann::ordered_json j;
    j["cluster"] = s.cluster;
    j["collective"] = std::string(to_string(s.collective));
    j["dtype"] = std::string(to_string(s.dtype));
    j["bytes"] = s.bytes;
    j["model"] = s.model;
    j["nccl_version"] = s.nccl_version;
    j["rows"] = nlohmann::ordered_json::array();
    for (const ScaleRow& r : s.rows) {
      for (std::size_t k = 0; k < s.candidates.size(); ++k) {
        if (!r.rows[k]) continue;
        nlohmann::ordered_json row;
        row["nodes"] = r.nodes;
        row.update(to_json(*r.rows[k]));
        row["best"] = k == r.best;
        if (k == r.best && !r.nccl_pick.empty()) row["nccl_pick"] = r.nccl_pick;
        j["rows"].push_back(std::move(row));
      }
    }
    j["ranges"] = best_ranges(s);
    j["crossovers"] = crossovers(s);
    std::cout << j.dump(2) << "\n";
  } else {
    print_table(s);
  }
  if (!a.plot.empty()) {
    plot(a.plot, s);
    if (a.format == "table") fmt::print("plot: {}\n", a.plot);
  }
}

}  // namespace

void register_scale(CLI::App& app) {
  auto args = std::make_shared<ScaleArgs>();
  CLI::App* cmd = app.add_subcommand(
      "scale", "One collective as the cluster grows: time and busbw per algorithm by node count");
  add_collective_options(cmd, args->c, true);
  cmd->remove_option(cmd->get_option("--nodes"));
  cmd->add_option("--nodes", args->nodes,
                  "node counts: a list (1,2,4,64) or a range a:b[:factor] (doubling by default)")
      ->required();
  add_model_options(cmd, args->model, all_models(), "best");
  cmd->add_option("--format", args->format, "table, csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  cmd->add_option("--plot", args->plot,
                  "also draw time and busbw against node count (.svg or .png)");
  cmd->callback([args] { run_scale(*args); });
}

}  // namespace collsim
