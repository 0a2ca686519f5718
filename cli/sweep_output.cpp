#include "cli/sweep_output.hpp"

#include <fmt/format.h>

#include <set>

namespace collsim {

namespace {

// Beyond this many ranks the "Using devices" list shows the first ones only (the labels carry
// the rank count, so the reader does not need the full list).
constexpr int kListedRanks = 64;
constexpr int kListedWhenMany = 8;

std::string graph_text(const char* name, const std::optional<NcclGraph>& g) {
  if (!g) return "";
  if (g->bw_intra == g->bw_inter)
    return fmt::format(", {} {}x{:g}", name, g->channels, g->bw_intra);
  return fmt::format(", {} {}x{:g}/{:g}", name, g->channels, g->bw_intra, g->bw_inter);
}

}  // namespace

std::string model_description(const Evaluator& ev) {
  const std::string& m = ev.model().model;
  if (m == "sim") return "sim (discrete-event simulation, max-min link sharing)";
  if (m == "contention-free") return "contention-free (simulation, links never shared)";
  if (m == "alpha-beta") return "alpha-beta (closed forms)";
  const NcclModelInput& in = ev.nccl()->input();
  const std::string graphs =
      graph_text("ring", in.ring) + graph_text("tree", in.tree) + graph_text("nvls", in.nvls);
  return fmt::format("nccl (NCCL {} tuning model; graphs {}{}, {} CPU)", to_string(in.version),
                     graphs.empty() ? "none" : graphs.substr(2),
                     in.tree_pattern_is_tree ? ", tree pattern TREE" : "", ev.model().nccl_cpu);
}

nlohmann::ordered_json run_json(const Evaluator& ev) {
  const Prepared& p = ev.prepared();
  nlohmann::ordered_json j;
  j["cluster"] = p.topo.name();
  j["nodes"] = p.request.comm.node_count();
  j["ranks"] = p.request.comm.size();
  j["collective"] = std::string(to_string(p.request.collective));
  j["dtype"] = std::string(to_string(p.request.dtype));
  j["model"] = ev.model().model;
  if (!p.choice.fixed()) j["select"] = ev.model().select;
  if (ev.nccl()) j["nccl_version"] = std::string(to_string(ev.nccl()->input().version));
  return j;
}

void add_choice_keys(nlohmann::ordered_json& row, const Choice& c) {
  if (c.how == "fixed") return;
  row["selected_by"] = c.how;
  if (!c.nccl_pick.empty()) row["nccl_pick"] = c.nccl_pick;
  if (!c.note.empty()) row["note"] = c.note;
}

NcclTestsTable table_frame(const Evaluator& ev, const std::string& command, std::uint64_t min_bytes,
                           std::uint64_t max_bytes, std::uint64_t factor) {
  const Prepared& p = ev.prepared();
  const Request& r = p.request;
  NcclTestsTable t;
  t.collective = r.collective;
  t.redop = r.redop;
  t.root = r.root;
  t.ranks = r.comm.size();
  t.min_bytes = min_bytes;
  t.max_bytes = max_bytes;
  t.factor = factor;
  const int listed = t.ranks > kListedRanks ? kListedWhenMany : t.ranks;
  for (int rank = 0; rank < listed; ++rank) {
    const Rank gpu{r.comm.gpu(rank)};
    t.devices.push_back({fmt::format("{}", rank), fmt::format("node{}", p.topo.node_of(gpu)),
                         p.topo.local_rank(gpu), "[sim] " + p.topo.gpu_model().name});
  }
  t.comments.push_back(fmt::format("collsim {}: {}, {} ranks on {} node{}; predicted, not measured",
                                   command, p.topo.name(), t.ranks, r.comm.node_count(),
                                   r.comm.node_count() == 1 ? "" : "s"));
  t.comments.push_back("model: " + model_description(ev));
  t.comments.push_back(
      "in-place columns repeat the out-of-place prediction; #wrong is N/A (nothing is checked)");
  if (!p.choice.fixed()) {
    t.comments.push_back(fmt::format(
        "--algo/--proto chosen per size by --select {}: each ### line names the algorithm and "
        "protocol of the rows below it",
        ev.model().select));
  }
  return t;
}

std::string choice_label(const Evaluator& ev, const Choice& c) {
  std::string s =
      fmt::format("ALGO={} PROTO={} GPUS={} CHANNELS={} MODEL={}", c.candidate.algorithm,
                  to_string(c.candidate.protocol), ev.prepared().request.comm.size(),
                  ev.prepared().request.channels, ev.model().model);
  if (c.how != "fixed") s += " SELECT=" + c.how;
  if (!c.nccl_pick.empty()) s += " NCCL=" + c.nccl_pick;
  return s;
}

}  // namespace collsim
