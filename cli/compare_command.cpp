// `collsim compare CONFIG --op OP [-b MIN] [-e MAX] [-f FACTOR] [--algo A] [--proto P]
//  [--channels N] [--model M] [--nccl-*] [--format table|csv|json] [--plot FILE.svg|png]`:
// every applicable algorithm x protocol across a size sweep (docs/cli.md). The table gives the time
// of each at each size, the best marked with '*', what NCCL's tuning model would pick, and
// names the size ranges over which each wins and the crossovers between them. `--algo` /
// `--proto` lists (NCCL_ALGO syntax) narrow the candidates. CSV: docs/cli.md's columns, one row per
// size and candidate; JSON: the same rows with "best", plus "ranges" and "crossovers". Rows are
// printed as their sizes are finished; Ctrl-C keeps them, with the ranges over those sizes. Under
// `mpirun -np K` the size x candidate cells are shared out and process 0 prints.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/collective_args.hpp"
#include "cli/distribute.hpp"
#include "cli/interrupt.hpp"
#include "cli/json_stream.hpp"
#include "cli/commands.hpp"
#include "cli/nccl_tests_table.hpp"
#include "cli/output_rows.hpp"
#include "cli/plot.hpp"
#include "cli/progress.hpp"
#include "cli/row_stream.hpp"
#include "cli/sweep_args.hpp"
#include "cli/sweep_output.hpp"
#include "predict/parallel.hpp"
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
  std::vector<SweepPoint> points;                           // the sizes done, in order
  std::vector<Candidate> candidates;                        // the columns
  std::vector<std::vector<std::optional<ResultRow>>> rows;  // [size][candidate]
  std::vector<std::size_t> best;                            // per size, index into candidates
  std::vector<std::string> nccl_pick;                       // per size, "" if NCCL has no say
};

// NCCL's tuning model for the "NCCL picks" column: the predictor's own, or one built for the
// purpose; null where NCCL's model has no say on this cluster.
const NcclModel* nccl_for_picks(const Predictor& ev, const ModelArgs& m,
                                std::optional<NcclModel>& own) {
  if (ev.nccl() != nullptr) return ev.nccl();
  try {
    own.emplace(nccl_input(m, ev.topology(), ev.request().comm));
    return &*own;
  } catch (const Error&) {
    return nullptr;
  }
}

// The columns: the candidates the model can cost at the smallest size. Whether a model can cost
// an algorithm depends on the algorithm, the protocol, the collective and the cluster, never on
// the size, so the first row decides them and the table can be printed as it goes.
std::vector<std::size_t> costed_columns(const Predictor& ev, std::uint64_t count,
                                        const std::vector<std::optional<Prediction>>& first) {
  std::vector<std::size_t> keep;
  for (std::size_t j = 0; j < first.size(); ++j) {
    if (first[j]) keep.push_back(j);
  }
  if (keep.empty()) {
    const std::string why = ev.why_none(ev.candidates(), count);
    throw RequestError(fmt::format("--model {} can cost none of the allowed algorithms for {}{}{}",
                                   std::string(to_string(ev.model())),
                                   to_string(ev.request().collective), why.empty() ? "" : ": ",
                                   why));
  }
  return keep;
}

// Adds size `point`'s row from the grid row `evals` (indexed like ev.candidates()).
void add_row(Comparison& c, const Predictor& ev, const NcclModel* nccl, const SweepPoint& point,
             const std::vector<std::size_t>& keep,
             const std::vector<std::optional<Prediction>>& evals) {
  const std::vector<Candidate>& all = ev.candidates();
  Request r = ev.request();
  r.count = point.count;
  std::vector<std::optional<ResultRow>> row;
  std::optional<std::size_t> best;
  for (std::size_t k = 0; k < keep.size(); ++k) {
    const auto& e = evals[keep[k]];
    row.push_back(
        e ? std::optional(make_row(ev.request(all[keep[k]], r.count), all[keep[k]], e->time))
          : std::nullopt);
    if (e && (!best || e->time < evals[keep[*best]]->time)) best = k;
  }
  std::string pick;
  if (nccl != nullptr) {
    try {
      pick =
          select_nccl(*nccl, r.collective, point.bytes, ev.allowed(), {r.redop, r.dtype}).nccl_pick;
    } catch (const RequestError&) {
      pick.clear();
    }
  }
  c.points.push_back(point);
  c.rows.push_back(std::move(row));
  c.best.push_back(best.value_or(0));
  c.nccl_pick.push_back(pick);
}

std::vector<SizedWinner> winners(const Comparison& c) {
  std::vector<SizedWinner> w;
  for (std::size_t i = 0; i < c.points.size(); ++i) {
    w.push_back({c.points[i].bytes, to_string(c.candidates[c.best[i]])});
  }
  return w;
}

std::size_t name_width(const Comparison& c) {
  std::size_t width = 4;
  for (const Candidate& cand : c.candidates) width = std::max(width, to_string(cand).size());
  return width;
}

void print_table_header(const Predictor& ev, const Prepared& p, const ModelArgs& m,
                        const Comparison& c) {
  const std::string channels =
      ev.nccl_channels()
          ? fmt::format("NCCL's channels for each size (at most {})", p.request.channels)
          : fmt::format("{} channels", p.request.channels);
  fmt::print("# collsim compare: {} of {} on {}, {} ranks on {} node{}, {}\n",
             to_string(p.request.collective), to_string(p.request.dtype), p.topo.name(),
             p.request.comm.size(), p.request.comm.node_count(),
             p.request.comm.node_count() == 1 ? "" : "s", channels);
  fmt::print("# model: {}\n", model_description(ev));
  fmt::print(
      "# time (us) per algorithm and protocol; * = the fastest at that size; - = the "
      "model cannot cost it; busbw (GB/s) of the fastest; NCCL picks = NCCL's tuning "
      "model ({})\n",
      ev.nccl() ? nccl_release_text(ev.nccl()->input()) : m.nccl_version);
  // Two header lines (algorithm over protocol) keep the columns narrow: 8 characters, the
  // time in nccl-tests' 7-character form plus the best marker.
  std::string head1 = fmt::format("{:>10}", "");
  std::string head2 = fmt::format("{:>10}", "size");
  for (const Candidate& cand : c.candidates) {
    head1 += fmt::format("  {:>7}{}", cand.algorithm, &cand == &c.candidates.back() ? "" : " ");
    head2 += fmt::format("  {:>7} ", to_string(cand.protocol));
  }
  head2 += fmt::format("  {:<{}}  {:>7}  {}", "best", name_width(c), "busbw", "NCCL picks");
  fmt::print("{}\n{}\n", head1, head2);
}

void print_table_row(const Comparison& c, std::size_t i) {
  std::string line = fmt::format("{:>10}", human_bytes(c.points[i].bytes));
  for (std::size_t k = 0; k < c.candidates.size(); ++k) {
    const auto& r = c.rows[i][k];
    line += r ? fmt::format("  {}{}", nccl_tests_time(r->time_us), k == c.best[i] ? "*" : " ")
              : fmt::format("  {:>7} ", "-");
  }
  const ResultRow& b = *c.rows[i][c.best[i]];
  line += fmt::format("  {:<{}}  {:7.2f}  {}", to_string(c.candidates[c.best[i]]), name_width(c),
                      b.busbw_GBps, c.nccl_pick[i].empty() ? "-" : c.nccl_pick[i]);
  fmt::print("{}\n", line);
}

void print_table_summary(const Comparison& c) {
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

// compare's output, written as the sizes are finished (table, CSV or JSON); end() adds the
// best ranges and crossovers of the sizes done, and what an interrupt cut.
class CompareOutput {
 public:
  CompareOutput(const CompareArgs& a, const Predictor& ev, const Prepared& p, Comparison& c)
      : a_(a), ev_(ev), c_(c) {
    if (a_.format == "csv") {
      std::cout << csv_header() << "\n";
    } else if (a_.format == "json") {
      json_.emplace(std::cout, run_json(ev_));
    } else {
      print_table_header(ev_, p, a_.model, c_);
    }
  }

  // Prints size i, the last row added to the comparison.
  void row(std::size_t i) {
    if (a_.format == "csv") {
      for (const auto& r : c_.rows[i]) {
        if (r) std::cout << csv_line(*r) << "\n";
      }
    } else if (a_.format == "json") {
      for (std::size_t k = 0; k < c_.candidates.size(); ++k) {
        if (!c_.rows[i][k]) continue;
        nlohmann::ordered_json row = to_json(*c_.rows[i][k]);
        row["best"] = k == c_.best[i];
        if (!c_.nccl_pick[i].empty()) row["nccl_pick"] = c_.nccl_pick[i];
        json_->row(row);
      }
    } else {
      print_table_row(c_, i);
    }
    std::cout.flush();
  }

  void end(std::size_t total, bool interrupted) {
    const std::string cut =
        fmt::format("interrupted: {} of {} sizes done; best and crossovers are over those",
                    c_.points.size(), total);
    if (a_.format == "json") {
      const auto w = winners(c_);
      nlohmann::ordered_json tail;
      tail["ranges"] = describe_best_ranges(w);
      tail["crossovers"] = describe_crossovers(w);
      if (interrupted) tail["interrupted"] = true;
      json_->close(tail);
    } else if (a_.format == "table") {
      print_table_summary(c_);
      if (interrupted) fmt::print("{}\n", cut);
    }
    std::cout.flush();
  }

 private:
  const CompareArgs& a_;
  const Predictor& ev_;
  Comparison& c_;
  std::optional<JsonRows> json_;
};

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

void finish(const CompareArgs& a, const Predictor& ev, const Prepared& p, const Comparison& c) {
  if (!a.plot.empty()) {
    plot(a.plot, ev, p, c);
    if (a.format == "table") fmt::print("plot: {}\n", a.plot);
  }
}

// Under `mpirun -np K`: the size x candidate cells, handed out to the processes' workers as they
// free up and gathered on process 0, which prints what one process would (cli/distribute.hpp).
void compare_across_processes(const CompareArgs& a, const Prepared& p, const Predictor& ev,
                              const std::vector<SweepPoint>& points, const NcclModel* nccl,
                              const Distribution& d) {
  const std::vector<Candidate>& all = ev.candidates();
  std::vector<double> weights;
  for (const SweepPoint& pt : points) weights.insert(weights.end(), all.size(), size_weight(pt.bytes));
  Progress progress("compare", weights.size(), "cells handed out", d.prints());
  const Gathered cells = d.run(
      weights, parallel_threads(),
      [&](std::size_t u) {
        const std::optional<Prediction> e =
            ev.evaluate(all[u % all.size()], points[u / all.size()].count);
        return e ? encode(*e) : nlohmann::json();
      },
      [&](std::size_t u) { progress.step(human_bytes(points[u / all.size()].bytes)); });
  progress.done();
  if (!d.prints()) return;
  std::vector<std::vector<std::optional<Prediction>>> grid(
      points.size(), std::vector<std::optional<Prediction>>(all.size()));
  for (const auto& [cell, value] : cells) {
    if (!value.is_null()) grid[cell / all.size()][cell % all.size()] = decode_prediction(value);
  }
  const std::vector<std::size_t> keep = costed_columns(ev, points.front().count, grid.front());
  Comparison c;
  for (std::size_t j : keep) c.candidates.push_back(all[j]);
  for (std::size_t i = 0; i < points.size(); ++i) add_row(c, ev, nccl, points[i], keep, grid[i]);
  CompareOutput output(a, ev, p, c);
  for (std::size_t i = 0; i < points.size(); ++i) output.row(i);
  output.end(points.size(), false);
  finish(a, ev, p, c);
}

void run_compare(const CompareArgs& a) {
  if (!a.plot.empty()) check_plot_output(a.plot);
  const Prepared p = prepare(a.c);
  const std::vector<SweepPoint> points = sweep_points(a.sweep, p);
  const Predictor ev(predict_setup(p, a.model));
  std::optional<NcclModel> own;
  const NcclModel* nccl = nccl_for_picks(ev, a.model, own);
  const std::vector<Candidate>& all = ev.candidates();
  const Distribution processes;
  if (processes.distributed()) {
    compare_across_processes(a, p, ev, points, nccl, processes);
    return;
  }

  Progress progress("compare", points.size(), "sizes");
  const auto first = ev.evaluate_grid({points.front().count}, all).front();
  progress.step(human_bytes(points.front().bytes));
  const std::vector<std::size_t> keep = costed_columns(ev, points.front().count, first);
  Comparison c;
  for (std::size_t j : keep) c.candidates.push_back(all[j]);
  add_row(c, ev, nccl, points.front(), keep, first);
  CompareOutput output(a, ev, p, c);
  progress.above([&] { output.row(0); });

  std::vector<std::uint64_t> rest;
  for (std::size_t i = 1; i < points.size(); ++i) rest.push_back(points[i].count);
  using Row = std::vector<std::optional<Prediction>>;
  InOrder<Row> rows(rest.size(), [&](std::size_t i, const Row& evals) {
    add_row(c, ev, nccl, points[i + 1], keep, evals);
    progress.above([&] { output.row(i + 1); });
  });
  InterruptWatch watch;
  const bool finished = watch.run([&] {
    ev.evaluate_each(
        rest, all, [&](const std::string& s) { progress.step(s); }, watch.cancel(),
        [&](std::size_t i, const Row& evals) { rows.put(i, evals); });
  });
  rows.close();
  progress.done();
  output.end(points.size(), !finished);
  finish(a, ev, p, c);
  if (!finished) {
    finish_interrupted(fmt::format("{} of {} sizes done; not done: {} to {}", c.points.size(),
                                   points.size(), human_bytes(points[c.points.size()].bytes),
                                   human_bytes(points.back().bytes)));
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
