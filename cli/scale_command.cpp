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
// Rows are printed as their node counts are finished; Ctrl-C keeps them (cli/interrupt.hpp).
// Under `mpirun -np K` the node counts are shared out and process 0 prints.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <iostream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/collective_args.hpp"
#include "cli/commands.hpp"
#include "cli/distribute.hpp"
#include "cli/interrupt.hpp"
#include "cli/json_stream.hpp"
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
  std::vector<Candidate> candidates;  // every allowed candidate (the same at each node count)
  std::vector<ScaleRow> rows;         // the node counts done, in order
  std::string cluster, model;
  Collective collective = Collective::kAllReduce;
  DataType dtype = DataType::kF32;
  std::uint64_t bytes = 0;
  std::string nccl_version;
};

Prepared prepare_nodes(const ScaleArgs& a, int nodes) {
  CollectiveArgs args = a.c;
  args.req.nodes = nodes;
  return prepare(args);
}

// What the output's header says, from the cluster at its first node count.
void describe(const ScaleArgs& a, const Prepared& p, const Predictor& ev, Scaling& s) {
  s.candidates = ev.candidates();
  s.cluster = p.topo.name();
  s.model = model_description(ev);
  s.collective = p.request.collective;
  s.dtype = p.request.dtype;
  s.bytes = ev.size_of(p.request.count);
  s.nccl_version =
      ev.nccl() ? nccl_release_text(ev.nccl()->input()) : a.model.nccl_version;
}

// Every candidate at `nodes` nodes, the fastest marked, and NCCL's pick. The first call also
// fills in what the output's header says.
ScaleRow scale_row(const ScaleArgs& a, int nodes, Scaling& s) {
  const Prepared p = prepare_nodes(a, nodes);
  const Predictor ev(predict_setup(p, a.model));
  if (s.candidates.empty()) describe(a, p, ev, s);
  const auto grid = ev.evaluate_grid({p.request.count}, ev.candidates()).front();
  ScaleRow row;
  row.nodes = nodes;
  row.rows.resize(grid.size());
  std::optional<std::size_t> best;
  for (std::size_t j = 0; j < grid.size(); ++j) {
    if (!grid[j]) continue;
    row.rows[j] = make_row(ev.request(ev.candidates()[j], p.request.count), ev.candidates()[j],
                           grid[j]->time);
    if (!best || grid[j]->time < grid[*best]->time) {
      best = j;
      row.detail = grid[j]->detail;
    }
  }
  if (!best) {
    const std::string why = ev.why_none(ev.candidates(), p.request.count);
    throw RequestError(
        fmt::format("--model {} can cost none of the allowed algorithms for {} "
                    "on {} node{}{}{}",
                    a.model.model, to_string(p.request.collective), nodes, nodes == 1 ? "" : "s",
                    why.empty() ? "" : ": ", why));
  }
  row.best = *best;
  try {
    const NcclModel* nccl = ev.nccl();
    std::optional<NcclModel> own;
    if (!nccl) {
      own.emplace(nccl_input(a.model, p.topo, p.request.comm));
      nccl = &*own;
    }
    row.nccl_pick = select_nccl(*nccl, p.request.collective, s.bytes, p.choice,
                                {p.request.redop, p.request.dtype})
                        .nccl_pick;
  } catch (const Error&) {
    row.nccl_pick.clear();  // NCCL's model has no say here
  }
  return row;
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

// The table's columns: candidates by index (the order of Scaling::candidates).
using Columns = std::vector<std::size_t>;

std::size_t name_width(const Scaling& s, const Columns& columns) {
  std::size_t width = 4;
  for (const ScaleRow& r : s.rows) width = std::max(width, to_string(s.candidates[r.best]).size());
  for (std::size_t k : columns) width = std::max(width, to_string(s.candidates[k]).size());
  return width;
}

void print_table_preamble(const Scaling& s, const std::vector<int>& counts) {
  fmt::print("# collsim scale: {} of {} ({}) on {}, {} to {} nodes\n", to_string(s.collective),
             human_bytes(s.bytes), to_string(s.dtype), s.cluster, counts.front(), counts.back());
  fmt::print("# model: {}\n", s.model);
  fmt::print(
      "# time (us) per algorithm and protocol; * = the fastest at that node count; - = the "
      "model cannot cost it; busbw (GB/s) of the fastest; NCCL picks = NCCL's tuning model ({})\n",
      s.nccl_version);
}

void print_column_header(const Scaling& s, const Columns& columns) {
  std::string head1 = fmt::format("{:>7} {:>8}", "", "");
  std::string head2 = fmt::format("{:>7} {:>8}", "nodes", "ranks");
  for (std::size_t k : columns) {
    head1 += fmt::format("  {:>7} ", s.candidates[k].algorithm);
    head2 += fmt::format("  {:>7} ", to_string(s.candidates[k].protocol));
  }
  head2 +=
      fmt::format("  {:<{}}  {:>7}  {}", "best", name_width(s, columns), "busbw", "NCCL picks");
  fmt::print("{}\n{}\n", head1, head2);
}

void print_table_row(const Scaling& s, const Columns& columns, const ScaleRow& r) {
  const ResultRow& b = *r.rows[r.best];
  std::string line = fmt::format("{:>7} {:>8}", r.nodes, b.ranks);
  for (std::size_t k : columns) {
    const auto& o = r.rows[k];
    line += o ? fmt::format("  {}{}", nccl_tests_time(o->time_us), k == r.best ? "*" : " ")
              : fmt::format("  {:>7} ", "-");
  }
  line +=
      fmt::format("  {:<{}}  {:7.2f}  {}", to_string(s.candidates[r.best]), name_width(s, columns),
                  b.busbw_GBps, r.nccl_pick.empty() ? "-" : r.nccl_pick);
  fmt::print("{}\n", line);
}

void print_table_summary(const Scaling& s) {
  fmt::print("\nbest: {}\n", best_ranges(s));
  const auto cross = crossovers(s);
  if (cross.empty()) {
    fmt::print("crossovers: none in this range\n");
  } else {
    fmt::print("crossovers:\n");
    for (const std::string& c : cross) fmt::print("  {}\n", c);
  }
}

// scale's output, written as the node counts are finished (table, CSV or JSON).
class ScaleOutput {
 public:
  ScaleOutput(const ScaleArgs& a, const Scaling& s, const std::vector<int>& counts)
      : a_(a), s_(s) {
    if (a_.format == "csv") {
      std::cout << "nodes," << csv_header() << "\n";
    } else if (a_.format == "json") {
      nlohmann::ordered_json j;
      j["cluster"] = s.cluster;
      j["collective"] = std::string(to_string(s.collective));
      j["dtype"] = std::string(to_string(s.dtype));
      j["bytes"] = s.bytes;
      j["model"] = s.model;
      j["nccl_version"] = s.nccl_version;
      json_.emplace(std::cout, j);
    } else {
      print_table_preamble(s, counts);
    }
    std::cout.flush();
  }

  void row(const ScaleRow& r) {
    if (a_.format == "csv") {
      for (const auto& o : r.rows) {
        if (o) std::cout << r.nodes << "," << csv_line(*o) << "\n";
      }
    } else if (a_.format == "json") {
      for (std::size_t k = 0; k < r.rows.size(); ++k) {
        if (!r.rows[k]) continue;
        nlohmann::ordered_json row;
        row["nodes"] = r.nodes;
        row.update(to_json(*r.rows[k]));
        row["best"] = k == r.best;
        if (k == r.best && !r.nccl_pick.empty()) row["nccl_pick"] = r.nccl_pick;
        json_->row(row);
      }
    } else {
      table_row(r);
    }
    std::cout.flush();
  }

  // `cut`: why node counts are missing ("interrupted" or the error that stopped the study).
  void end(std::size_t total, const std::string& cut) {
    const std::string said =
        fmt::format("{}: {} of {} node counts done; best and crossovers are over those",
                    cut == "interrupted" ? cut : "stopped by an error", s_.rows.size(), total);
    if (a_.format == "json") {
      nlohmann::ordered_json tail;
      tail["ranges"] = best_ranges(s_);
      tail["crossovers"] = crossovers(s_);
      if (cut == "interrupted") tail["interrupted"] = true;
      if (!cut.empty() && cut != "interrupted") tail["error"] = cut;
      json_->close(tail);
    } else if (a_.format == "table") {
      print_table_summary(s_);
      if (!cut.empty()) fmt::print("{}\n", said);
    }
    std::cout.flush();
  }

 private:
  // The table's columns are the candidates costed at the first node count. A candidate first
  // costed at a larger one (nvls_tree from 2 nodes, where NCCL's pick often is) opens a new
  // header that adds its column, so every time costed is in the table while it streams.
  void table_row(const ScaleRow& r) {
    std::vector<std::string> added;
    for (std::size_t k = 0; k < r.rows.size(); ++k) {
      if (!r.rows[k] || std::find(columns_.begin(), columns_.end(), k) != columns_.end()) continue;
      columns_.insert(std::upper_bound(columns_.begin(), columns_.end(), k), k);
      added.push_back(to_string(s_.candidates[k]));
    }
    if (!added.empty()) {
      if (headed_) {
        fmt::print("# from {} nodes also costed: {}\n", r.nodes, fmt::join(added, ", "));
      }
      print_column_header(s_, columns_);
      headed_ = true;
    }
    print_table_row(s_, columns_, r);
  }

  const ScaleArgs& a_;
  const Scaling& s_;
  std::optional<JsonRows> json_;
  Columns columns_;
  bool headed_ = false;
};

void plot(const std::string& path, const Scaling& s) {
  ComparePlot plot;
  plot.x_nodes = true;
  plot.title = fmt::format("{} of {} on {} by node count, model {}", to_string(s.collective),
                           human_bytes(s.bytes), s.cluster, s.model);
  std::vector<std::string> algos;
  for (std::size_t k = 0; k < s.candidates.size(); ++k) {
    const Candidate& c = s.candidates[k];
    std::vector<PlotPoint> points;
    for (const ScaleRow& r : s.rows) {
      if (const auto& o = r.rows[k]) {
        points.push_back({static_cast<std::uint64_t>(r.nodes), o->time_us, o->busbw_GBps});
      }
    }
    if (points.empty()) continue;  // the model costs it at none of these node counts
    auto it = std::find(algos.begin(), algos.end(), c.algorithm);
    if (it == algos.end()) it = algos.insert(algos.end(), c.algorithm);
    plot.series.push_back({to_string(c), static_cast<int>(it - algos.begin()),
                           c.protocol == Protocol::kSimple  ? 0
                           : c.protocol == Protocol::kLL128 ? 1
                                                            : 2,
                           std::move(points)});
  }
  for (const ScaleRow& r : s.rows) {
    const ResultRow& b = *r.rows[r.best];
    plot.best.push_back({static_cast<std::uint64_t>(r.nodes), b.time_us, b.busbw_GBps});
  }
  write_plot(path, plot);
}

void finish(const ScaleArgs& a, const Scaling& s) {
  if (!a.plot.empty()) {
    plot(a.plot, s);
    if (a.format == "table") fmt::print("plot: {}\n", a.plot);
  }
}

nlohmann::json encode(const ScaleRow& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& o : r.rows) rows.push_back(o ? encode(*o) : nlohmann::json());
  return {{"nodes", r.nodes},   {"rows", rows},         {"best", r.best},
          {"nccl_pick", r.nccl_pick}, {"detail", r.detail}};
}

ScaleRow decode_scale_row(const nlohmann::json& j) {
  ScaleRow r;
  r.nodes = j.at("nodes").get<int>();
  for (const nlohmann::json& o : j.at("rows")) {
    r.rows.push_back(o.is_null() ? std::nullopt : std::optional(decode_row(o)));
  }
  r.best = j.at("best").get<std::size_t>();
  r.nccl_pick = j.at("nccl_pick").get<std::string>();
  r.detail = j.at("detail").get<std::string>();
  return r;
}

// Under `mpirun -np K`: the node counts, largest first (weighed by ranks squared, which is how a
// ring's work grows), handed out to the processes as they free up and gathered on process 0,
// which prints what one process would (cli/distribute.hpp). One worker a process: a node count
// costs its candidates in parallel already, and holds a whole cluster.
void scale_across_processes(const ScaleArgs& a, const std::vector<int>& counts,
                            const Distribution& d) {
  std::vector<double> weights;
  for (const int n : counts) weights.push_back(static_cast<double>(n) * n);
  Scaling s;
  Progress progress("scale", counts.size(), "node counts handed out", d.prints());
  const Gathered all = d.run(
      weights, 1, [&](std::size_t u) { return encode(scale_row(a, counts[u], s)); },
      [&](std::size_t u) { progress.step(fmt::format("{} nodes", counts[u])); });
  progress.done();
  if (!d.prints()) return;
  s = Scaling();
  const Prepared first = prepare_nodes(a, counts.front());
  describe(a, first, Predictor(predict_setup(first, a.model)), s);
  for (const auto& [u, row] : all) s.rows.push_back(decode_scale_row(row));
  ScaleOutput output(a, s, counts);
  for (const ScaleRow& r : s.rows) output.row(r);
  output.end(counts.size(), "");
  finish(a, s);
}

void run_scale(const ScaleArgs& a) {
  if (!a.plot.empty()) check_plot_output(a.plot);
  const std::vector<int> counts = parse_node_counts(a.nodes);
  const Distribution processes;
  if (processes.distributed()) {
    scale_across_processes(a, counts, processes);
    return;
  }
  Scaling s;
  Progress progress("scale", counts.size(), "node counts");
  s.rows.push_back(scale_row(a, counts.front(), s));
  progress.step(fmt::format("{} nodes", counts.front()));
  ScaleOutput output(a, s, counts);
  progress.above([&] { output.row(s.rows.front()); });

  // The node counts one after the other (each simulates its candidates in parallel); the rows
  // are printed as they come, and an interrupt keeps them.
  std::mutex mutex;  // `s.rows`, between the work thread and an interrupted wait
  InterruptWatch watch;
  bool finished = false;
  try {
    finished = watch.run([&] {
      for (std::size_t i = 1; i < counts.size() && !watch.cancel()->load(); ++i) {
        ScaleRow row = scale_row(a, counts[i], s);
        const std::lock_guard<std::mutex> lock(mutex);
        if (watch.cancel()->load()) return;
        s.rows.push_back(std::move(row));
        progress.step(fmt::format("{} nodes", counts[i]));
        progress.above([&] { output.row(s.rows.back()); });
      }
    });
  } catch (const std::exception& e) {
    progress.done();
    output.end(counts.size(), e.what());
    throw;
  }
  const std::lock_guard<std::mutex> lock(mutex);
  progress.done();
  output.end(counts.size(), finished ? "" : "interrupted");
  finish(a, s);
  if (!finished) {
    finish_interrupted(fmt::format("{} of {} node counts done; not done: {} to {} nodes",
                                   s.rows.size(), counts.size(), counts[s.rows.size()],
                                   counts.back()));
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
