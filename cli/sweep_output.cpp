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

std::string model_description(const Predictor& ev) {
  switch (ev.model()) {
    case Model::kMaxMin:
      return "sim (discrete-event simulation, max-min link sharing)";
    case Model::kContentionFree:
      return "contention-free (simulation, each link split evenly among the channels)";
    case Model::kClosedForm:
      return "alpha-beta (closed forms)";
    case Model::kNccl:
      break;
  }
  const NcclModelInput& in = ev.nccl()->input();
  const std::string graphs =
      graph_text("ring", in.ring) + graph_text("tree", in.tree) + graph_text("nvls", in.nvls);
  return fmt::format("nccl (NCCL {} tuning model; graphs {}{}, {} CPU)", nccl_release_text(in),
                     graphs.empty() ? "none" : graphs.substr(2),
                     in.tree_pattern_is_tree ? ", tree pattern TREE" : "", to_string(in.cpu));
}

nlohmann::ordered_json run_json(const Predictor& ev) {
  const Request& r = ev.request();
  nlohmann::ordered_json j;
  j["cluster"] = ev.topology().name();
  j["nodes"] = r.comm.node_count();
  j["ranks"] = r.comm.size();
  j["collective"] = std::string(to_string(r.collective));
  j["dtype"] = std::string(to_string(r.dtype));
  j["model"] = std::string(to_string(ev.model()));
  if (!ev.allowed().fixed()) j["select"] = std::string(to_string(ev.select()));
  if (ev.nccl()) j["nccl_version"] = nccl_release_text(ev.nccl()->input());
  return j;
}

void add_choice_keys(nlohmann::ordered_json& row, const Choice& c) {
  if (c.how == "fixed") return;
  row["selected_by"] = c.how;
  if (!c.nccl_pick.empty()) row["nccl_pick"] = c.nccl_pick;
  if (!c.note.empty()) row["note"] = c.note;
}

NcclTestsTable table_frame(const Predictor& ev, const std::string& command, std::uint64_t min_bytes,
                           std::uint64_t max_bytes, std::uint64_t factor) {
  const Topology& topo = ev.topology();
  const Request& r = ev.request();
  NcclTestsTable t;
  t.collective = r.collective;
  t.redop = r.redop;
  t.root = r.root;
  t.ranks = r.comm.size();
  t.min_bytes = min_bytes;
  t.max_bytes = max_bytes;
  t.factor = factor;
  // The host loop predicted (--gpus-per-thread, --cuda-graph), so that validate reads it back.
  t.gpus = r.host.gpus_per_thread;
  t.graph = r.host.graph;
  const int listed = t.ranks > kListedRanks ? kListedWhenMany : t.ranks;
  for (int rank = 0; rank < listed; ++rank) {
    const Rank gpu{r.comm.gpu(rank)};
    t.devices.push_back({fmt::format("{}", rank), fmt::format("node{}", topo.node_of(gpu)),
                         topo.local_rank(gpu), "[sim] " + topo.gpu_model().name});
  }
  t.comments.push_back(fmt::format("collsim {}: {}, {} ranks on {} node{}; predicted, not measured",
                                   command, topo.name(), t.ranks, r.comm.node_count(),
                                   r.comm.node_count() == 1 ? "" : "s"));
  t.comments.push_back("model: " + model_description(ev));
  t.comments.push_back(
      "in-place columns repeat the out-of-place prediction; #wrong is N/A (nothing is checked)");
  if (!ev.allowed().fixed()) {
    t.comments.push_back(fmt::format(
        "--algo/--proto chosen per size by --select {}: each ### line names the algorithm and "
        "protocol of the rows below it",
        std::string(to_string(ev.select()))));
  }
  return t;
}

std::string choice_label(const Predictor& ev, const Choice& c) {
  // CHANNELS=nccl: each size ran on the channels NCCL launches for it (nccl_schedule_channels),
  // which calibrate and validate derive again when they read the table back.
  const std::string channels =
      ev.nccl_channels() ? std::string("nccl") : fmt::format("{}", ev.request().channels);
  std::string s =
      fmt::format("ALGO={} PROTO={} GPUS={} CHANNELS={} MODEL={}", c.candidate.algorithm,
                  to_string(c.candidate.protocol), ev.request().comm.size(), channels,
                  std::string(to_string(ev.model())));
  if (c.how != "fixed") s += " SELECT=" + c.how;
  if (!c.nccl_pick.empty()) s += " NCCL=" + c.nccl_pick;
  return s;
}

}  // namespace collsim
