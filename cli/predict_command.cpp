// `collsim predict CONFIG --op OP --bytes SIZE [--algo A] [--proto P] [--channels N]
//  [--model sim|contention-free|alpha-beta|nccl] [--select best|nccl] [--nccl-version V]
//  [--nccl-graph G] [--nccl-tree-pattern T] [--nccl-cpu C] [--format table|csv|json]`:
// how long one collective takes, in nccl-tests' vocabulary (docs/cli.md).
//   sim              discrete-event simulation, max-min sharing of links (the default)
//   contention-free  the same simulation with links never shared (fast)
//   alpha-beta       the closed forms of algorithms/models/estimate.hpp (no simulation)
//   nccl             NCCL's own tuning model (ring, dbtree and NCCL's NVLS/PAT/...)
// With --algo/--proto auto the choice is made by --select (evaluator.hpp) and printed.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "algorithms/models/nccl_release.hpp"
#include "cli/collective_args.hpp"
#include "cli/commands.hpp"
#include "cli/output_rows.hpp"
#include "cli/progress.hpp"
#include "cli/sweep_output.hpp"

namespace collsim {

namespace {

// NCCL's division of `r` among its channels (Request::split) as (channels, bytes of each) runs,
// equal neighbours merged; bytes of the vector, or of each rank's block for AllGather-like
// collectives.
std::vector<std::pair<int, std::uint64_t>> split_parts(const Request& r) {
  std::vector<std::pair<int, std::uint64_t>> out;
  const std::uint64_t e = element_size(r.dtype);
  auto add = [&](int n, std::uint64_t elems) {
    if (n == 0 || elems == 0) return;
    if (!out.empty() && out.back().second == elems * e) {
      out.back().first += n;
    } else {
      out.emplace_back(n, elems * e);
    }
  };
  add(1, r.split.lo);
  add(r.split.mids, r.split.mid);
  add(1, r.split.hi);
  return out;
}

// "1 node", "16 nodes".
std::string counted(std::int64_t n, std::string_view noun) {
  return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

// " of 4 KiB", or " (23 x 42.67 MiB, 1 x 42.53 MiB)" where the parts differ; "" without a split.
std::string split_text(const Request& r) {
  if (r.split.empty()) return "";
  const auto parts = split_parts(r);
  const std::string per = is_blocked(r.collective) ? " of each rank's block" : "";
  if (parts.size() == 1) return fmt::format(" of {}{}", human_bytes(parts[0].second), per);
  std::vector<std::string> words;
  for (const auto& [n, bytes] : parts)
    words.push_back(fmt::format("{} x {}", n, human_bytes(bytes)));
  return fmt::format(" ({}{})", fmt::join(words, ", "), per);
}

struct PredictArgs {
  CollectiveArgs c;
  ModelArgs model;
  std::string format = "table";
};

// The largest communicator for which predict also times every other candidate.
constexpr int kAlternativeRanks = 1024;

void run_predict(const PredictArgs& a) {
  const Prepared p = prepare(a.c);
  const Predictor ev(predict_setup(p, a.model));
  // NCCL's pick is the answer; collsim's fastest is worth a line when it beats it. Finding it
  // simulates every candidate (beside the pick, each only as far as the fastest time known),
  // which at thousands of ranks costs minutes: above kAlternativeRanks the output says it did
  // not look.
  const bool search = p.request.comm.size() <= kAlternativeRanks;
  Progress progress("predict", simulated_events_status());
  const auto [ch, alt] = search ? ev.choose_checked(p.request.count)
                                : std::pair(ev.choose(p.request.count), std::optional<Choice>());
  progress.done();
  const Request r = ev.request(ch.candidate, p.request.count);  // as simulated: its channels
  const ResultRow row = make_row(r, ch.candidate, ch.eval.time);
  // --channels past NCCL's MAXCHANNELS: simulated as asked, and said to be a what-if.
  std::string note = ch.note;
  const NcclRelease release = nccl_release(a.model);
  const int most = nccl_max_channels(release);
  if (!p.nccl_channels && p.request.channels > most) {
    if (!note.empty()) note += "; ";
    note += fmt::format(
        "--channels {}: NCCL {} runs at most {} (its MAXCHANNELS), so this is a what-if NCCL "
        "cannot run",
        p.request.channels, to_string(release), most);
  }
  if (a.format == "csv") {
    std::cout << csv_header() << "\n" << csv_line(row) << "\n";
    return;
  }
  if (a.format == "json") {
    nlohmann::ordered_json j = to_json(row);
    add_choice_keys(j, ch);
    if (!note.empty()) j["note"] = note;
    if (!r.split.empty()) {
      nlohmann::ordered_json parts = nlohmann::ordered_json::array();
      for (const auto& [n, bytes] : split_parts(r))
        parts.push_back({{"channels", n}, {"bytes", bytes}});
      j["channel_parts"] = parts;
    }
    if (alt) {
      j["faster_alternative"] = {{"algorithm", alt->candidate.algorithm},
                                 {"protocol", std::string(to_string(alt->candidate.protocol))},
                                 {"time_us", alt->eval.time.us()},
                                 {"nccl_can_run", alt->nccl_can_run},
                                 {"note", alt->note}};
    }
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::string chosen;
  if (ch.how == "best") {
    chosen = fmt::format(" (auto: the fastest by --model {})", a.model.model);
  } else if (ch.how == "nccl") {
    chosen = ch.nccl_pick.empty() ? " (auto: what NCCL picks)"
                                  : fmt::format(" (auto: NCCL picks {})", ch.nccl_pick);
  }
  fmt::print("cluster     {} ({} on {})\n", p.topo.name(), counted(p.topo.rank_count(), "GPU"),
             counted(p.topo.node_count(), "node"));
  if (r.collective == Collective::kBarrier) {
    fmt::print("collective  barrier (no data), {}\n", counted(r.comm.size(), "rank"));
  } else {
    fmt::print("collective  {} of {} ({} x {}), {}\n", to_string(r.collective),
               human_bytes(row.bytes), r.count, to_string(r.dtype), counted(r.comm.size(), "rank"));
  }
  fmt::print("algorithm   {}, protocol {}{}, {}{}\n", ch.candidate.algorithm,
             to_string(ch.candidate.protocol), chosen, counted(r.channels, "channel"),
             split_text(r));
  if (!note.empty()) fmt::print("note        {}\n", note);
  fmt::print("model       {}\n", model_description(ev));
  fmt::print("time        {:.3f} us\n", row.time_us);
  fmt::print("algbw       {:.2f} GB/s\n", row.algbw_GBps);
  fmt::print("busbw       {:.2f} GB/s\n", row.busbw_GBps);
  if (parse_model(a.model.model) != Model::kNccl) fmt::print("detail      {}\n", ch.eval.detail);
  if (alt) fmt::print("faster      {}\n", alt->note);
  if (!search && ch.how == "nccl") {
    fmt::print("faster      not searched above {} ranks (--select best times every candidate)\n",
               kAlternativeRanks);
  }
}

}  // namespace

void register_predict(CLI::App& app) {
  auto args = std::make_shared<PredictArgs>();
  CLI::App* cmd = app.add_subcommand(
      "predict", "Predict the time, algbw and busbw of one collective on a cluster");
  add_collective_options(cmd, args->c);
  add_model_options(cmd, args->model, all_models());
  cmd->add_option("--format", args->format, "table, csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  cmd->callback([args] { run_predict(*args); });
}

}  // namespace collsim
