// `collsim compare CONFIG --op OP [-b MIN] [-e MAX] [-f FACTOR] [--algo A] [--proto P]
//  [--channels N] [--model M] [--nccl-*] [--format table|csv|json] [--plot FILE.svg|png]`:
// every applicable algorithm x protocol across a size sweep (docs/cli.md). The table gives the time
// of each at each size, the best marked with '*', what NCCL's tuning model would pick, and
// names the size ranges over which each wins and the crossovers between them. `--algo` /
// `--proto` lists (NCCL_ALGO syntax) narrow the candidates. CSV: docs/cli.md's columns, one row per
// size and candidate; JSON: the same rows with "best", plus "ranges" and "crossovers".
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/collective_args.hpp"
#include "cli/commands.hpp"
#include "cli/nccl_tests_table.hpp"
#include "cli/output_rows.hpp"
#include "cli/plot.hpp"
#include "cli/progress.hpp"
#include "cli/sweep_args.hpp"
#include "cli/sweep_output.hpp"
#include "topology/error.hpp"

namespace collsim {

namespace {

struct CompareArgs {
  CollectiveArgs c;
  SweepArgs sweep;
  ModelArgs model;
  std::string format = "table";
  std::string plot;
};

struct Comparison {
  std::vector<SweepPoint> points;
  std::vector<Candidate> candidates;                        // those with a time at some size
  std::vector<std::vector<std::optional<ResultRow>>> rows;  // [size][candidate]
  std::vector<std::size_t> best;                            // per size, index into candidates
  std::vector<std::string> nccl_pick;                       // per size, "" if NCCL has no say
};

Comparison compare(const Predictor& ev, const ModelArgs& m, const std::vector<SweepPoint>& points) {
  std::vector<std::uint64_t> counts;
  for (const SweepPoint& pt : points) counts.push_back(pt.count);
  const std::vector<Candidate>& all = ev.candidates();
  std::vector<std::vector<std::optional<Prediction>>> grid;
  {
    Progress progress("compare", counts.size(), "sizes");
    grid = ev.evaluate_grid(counts, all, [&](const std::string& s) { progress.step(s); });
  }
  Comparison out;
  out.points = points;
  std::vector<std::size_t> keep;
  for (std::size_t j = 0; j < all.size(); ++j) {
    for (const auto& row : grid) {
      if (row[j]) {
        keep.push_back(j);
        break;
      }
    }
  }
  if (keep.empty()) {
    throw RequestError(fmt::format("--model {} can cost none of the allowed algorithms for {}",
                                   std::string(to_string(ev.model())),
                                   to_string(ev.request().collective)));
  }
  for (std::size_t j : keep) out.candidates.push_back(all[j]);
  const NcclModel* nccl = ev.nccl();
  std::optional<NcclModel> own;
  if (!nccl) {
    try {
      own.emplace(nccl_input(m, ev.topology(), ev.request().comm));
      nccl = &*own;
    } catch (const Error&) {
      nccl = nullptr;
    }
  }
  for (std::size_t i = 0; i < points.size(); ++i) {
    Request r = ev.request();
    r.count = points[i].count;
    std::vector<std::optional<ResultRow>> row;
    std::optional<std::size_t> best;
    for (std::size_t k = 0; k < keep.size(); ++k) {
      const auto& e = grid[i][keep[k]];
      row.push_back(e ? std::optional(make_row(r, all[keep[k]], e->time)) : std::nullopt);
      if (e && (!best || e->time < grid[i][keep[*best]]->time)) best = k;
    }
    out.rows.push_back(std::move(row));
    out.best.push_back(best.value_or(0));
    std::string pick;
    if (nccl) {
      try {
        pick = select_nccl(*nccl, r.collective, points[i].bytes, ev.allowed(), false).nccl_pick;
      } catch (const RequestError&) {
        pick.clear();
      }
    }
    out.nccl_pick.push_back(pick);
  }
  return out;
}

std::vector<SizedWinner> winners(const Comparison& c) {
  std::vector<SizedWinner> w;
  for (std::size_t i = 0; i < c.points.size(); ++i) {
    w.push_back({c.points[i].bytes, to_string(c.candidates[c.best[i]])});
  }
  return w;
}

void print_table(const Predictor& ev, const Prepared& p, const ModelArgs& m, const Comparison& c) {
  fmt::print("# collsim compare: {} of {} on {}, {} ranks on {} node{}, {} channels\n",
             to_string(p.request.collective), to_string(p.request.dtype), p.topo.name(),
             p.request.comm.size(), p.request.comm.node_count(),
             p.request.comm.node_count() == 1 ? "" : "s", p.request.channels);
  fmt::print("# model: {}\n", model_description(ev));
  fmt::print(
      "# time (us) per algorithm and protocol; * = the fastest at that size; - = the "
      "model cannot cost it; busbw (GB/s) of the fastest; NCCL picks = NCCL's tuning "
      "model ({})\n",
      ev.nccl() ? to_string(ev.nccl()->input().version) : m.nccl_version);
  // Two header lines (algorithm over protocol) keep the columns narrow: 8 characters, the
  // time in nccl-tests' 7-character form plus the best marker.
  std::size_t width = 4;
  for (const Candidate& cand : c.candidates) width = std::max(width, to_string(cand).size());
  std::string head1 = fmt::format("{:>10}", "");
  std::string head2 = fmt::format("{:>10}", "size");
  for (const Candidate& cand : c.candidates) {
    head1 += fmt::format("  {:>7}{}", cand.algorithm, &cand == &c.candidates.back() ? "" : " ");
    head2 += fmt::format("  {:>7} ", to_string(cand.protocol));
  }
  head2 += fmt::format("  {:<{}}  {:>7}  {}", "best", width, "busbw", "NCCL picks");
  fmt::print("{}\n{}\n", head1, head2);
  for (std::size_t i = 0; i < c.points.size(); ++i) {
    std::string line = fmt::format("{:>10}", human_bytes(c.points[i].bytes));
    for (std::size_t k = 0; k < c.candidates.size(); ++k) {
      const auto& r = c.rows[i][k];
      line += r ? fmt::format("  {}{}", nccl_tests_time(r->time_us), k == c.best[i] ? "*" : " ")
                : fmt::format("  {:>7} ", "-");
    }
    const ResultRow& b = *c.rows[i][c.best[i]];
    line += fmt::format("  {:<{}}  {:7.2f}  {}", to_string(c.candidates[c.best[i]]), width,
                        b.busbw_GBps, c.nccl_pick[i].empty() ? "-" : c.nccl_pick[i]);
    fmt::print("{}\n", line);
  }
  const auto w = winners(c);
  fmt::print("\nbest: {}\n", describe_best_ranges(w));
  const auto cross = describe_crossovers(w);
  if (cross.empty()) {
    fmt::print("crossovers: none in this range\n");
  } else {
    fmt::print("crossovers:\n");
    for (const std::string& s : cross) fmt::print("  {}\n", s);
  }
}

void plot(const std::string& path, const Predictor& ev, const Prepared& p, const Comparison& c) {
  ComparePlot plot;
  plot.title =
      fmt::format("{} on {} ({} ranks, {} node{}), model {}", to_string(p.request.collective),
                  p.topo.name(), p.request.comm.size(), p.request.comm.node_count(),
                  p.request.comm.node_count() == 1 ? "" : "s", std::string(to_string(ev.model())));
  std::vector<std::string> algos;
  for (std::size_t k = 0; k < c.candidates.size(); ++k) {
    const Candidate& cand = c.candidates[k];
    auto it = std::find(algos.begin(), algos.end(), cand.algorithm);
    if (it == algos.end()) it = algos.insert(algos.end(), cand.algorithm);
    PlotSeries s{to_string(cand),
                 static_cast<int>(it - algos.begin()),
                 static_cast<int>(cand.protocol == Protocol::kSimple  ? 0
                                  : cand.protocol == Protocol::kLL128 ? 1
                                                                      : 2),
                 {}};
    for (std::size_t i = 0; i < c.points.size(); ++i) {
      if (const auto& r = c.rows[i][k]) s.points.push_back({r->bytes, r->time_us, r->busbw_GBps});
    }
    plot.series.push_back(std::move(s));
  }
  for (std::size_t i = 0; i < c.points.size(); ++i) {
    const ResultRow& b = *c.rows[i][c.best[i]];
    plot.best.push_back({b.bytes, b.time_us, b.busbw_GBps});
  }
  write_plot(path, plot);
}

void run_compare(const CompareArgs& a) {
  if (!a.plot.empty()) check_plot_output(a.plot);
  const Prepared p = prepare(a.c);
  const std::vector<SweepPoint> points = sweep_points(a.sweep, p);
  const Predictor ev(predict_setup(p, a.model));
  const Comparison c = compare(ev, a.model, points);
  if (a.format == "csv") {
    std::cout << csv_header() << "\n";
    for (const auto& row : c.rows) {
      for (const auto& r : row) {
        if (r) std::cout << csv_line(*r) << "\n";
      }
    }
  } else if (a.format == "json") {
    nlohmann::ordered_json j = run_json(ev);
    j["rows"] = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < c.points.size(); ++i) {
      for (std::size_t k = 0; k < c.candidates.size(); ++k) {
        if (!c.rows[i][k]) continue;
        nlohmann::ordered_json row = to_json(*c.rows[i][k]);
        row["best"] = k == c.best[i];
        if (!c.nccl_pick[i].empty()) row["nccl_pick"] = c.nccl_pick[i];
        j["rows"].push_back(std::move(row));
      }
    }
    const auto w = winners(c);
    j["ranges"] = describe_best_ranges(w);
    j["crossovers"] = describe_crossovers(w);
    std::cout << j.dump(2) << "\n";
  } else {
    print_table(ev, p, a.model, c);
  }
  if (!a.plot.empty()) {
    plot(a.plot, ev, p, c);
    if (a.format == "table") fmt::print("plot: {}\n", a.plot);
  }
}

}  // namespace

void register_compare(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compare", "Every applicable algorithm x protocol across sizes: best, crossovers, plot");
  add_collective_options(cmd, args->c, false);
  add_sweep_options(cmd, args->sweep);
  add_model_options(cmd, args->model, all_models(), "best");
  cmd->add_option("--format", args->format, "table, csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  cmd->add_option("--plot", args->plot, "also draw time and busbw against size (.svg or .png)");
  cmd->callback([args] { run_compare(*args); });
}

}  // namespace collsim
