// `collsim predict CONFIG --op OP --bytes SIZE [--algo A] [--proto P] [--channels N]
//  [--model sim|contention-free|alpha-beta|nccl] [--format table|csv|json]`: how long one
// collective takes, in nccl-tests' vocabulary (CLI.md).
//   sim              discrete-event simulation, max-min sharing of links (the default)
//   contention-free  the same simulation with links never shared (fast)
//   alpha-beta       the closed forms of algorithms/estimate.hpp (no simulation)
//   nccl             NCCL's own tuning model (ring and tree only)
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "algorithms/estimate.hpp"
#include "algorithms/nccl_model.hpp"
#include "cli/collective_args.hpp"
#include "cli/commands.hpp"
#include "simulator/alpha_beta_cost.hpp"
#include "topology/error.hpp"

namespace collsim {

namespace {

struct PredictArgs {
  CollectiveArgs c;
  std::string model = "sim";
  std::string format = "table";
  std::string nccl_version = "2.30";
};

struct Prediction {
  Protocol protocol = Protocol::kSimple;
  Time time;
  std::string detail;  // bottleneck, events, or the formula
};

Prediction predict_one(const Prepared& p, const PredictArgs& a, Protocol proto) {
  Request r = p.request;
  r.protocol = proto;
  Prediction out;
  out.protocol = proto;
  if (a.model == "sim" || a.model == "contention-free") {
    const Schedule s = plan(r);
    const SimNetwork net = a.model == "sim" ? SimNetwork::kMaxMin : SimNetwork::kContentionFree;
    const Result res = simulate(s, p.topo, sim_options(p, net));
    out.time = res.total;
    if (res.bottleneck >= 0) {
      const LinkUsage& u = res.links[res.bottleneck];
      const Link& l = p.topo.link(u.link);
      out.detail = fmt::format("bottleneck {} -> {} ({}), {:.1f}% busy; {} events",
                               p.topo.device(l.src).name, p.topo.device(l.dst).name,
                               to_string(l.kind), 100 * u.busy_fraction, res.events);
    } else {
      out.detail = fmt::format("{} events", res.events);
    }
  } else if (a.model == "alpha-beta") {
    const Schedule s = generate(r);
    const bool hier = r.algorithm == "ring2d" || r.algorithm == "dbtree";
    const AlphaBetaCost cost =
        alpha_beta_cost(p.topo, r.comm, default_cost_params(p.topo), proto, r.channels, hier);
    const Estimate e = estimate(estimate_request(s.info(), r.comm.node_count(), cost));
    out.time = e.time;
    out.detail = e.formula;
  } else {
    NcclAlgo algo;
    if (r.algorithm == "ring") {
      algo = NcclAlgo::kRing;
    } else if (r.algorithm == "tree" || r.algorithm == "dbtree") {
      algo = NcclAlgo::kTree;
    } else {
      throw RequestError(
          fmt::format("--model nccl: NCCL's tuning model knows ring and dbtree (tree), not \"{}\"",
                      r.algorithm));
    }
    const NcclModel m(nccl_model_input(p.topo, r.comm, parse_nccl_version(a.nccl_version)));
    const auto t = m.time_us(r.collective, algo, proto, request_bytes(r).count());
    if (!t) {
      throw RequestError(fmt::format("--model nccl: NCCL disables {} {} with protocol {} here",
                                     to_string(algo), to_string(r.collective), to_string(proto)));
    }
    out.time = us(*t);
    out.detail = fmt::format("NCCL {} tuning model", a.nccl_version);
  }
  return out;
}

void run_predict(const PredictArgs& a) {
  const Prepared p = prepare(a.c);
  Prediction best;
  if (p.proto_auto) {
    bool first = true;
    for (Protocol proto : all_protocols()) {
      Prediction x;
      try {
        x = predict_one(p, a, proto);
      } catch (const RequestError&) {
        if (a.model != "nccl") throw;
        continue;  // a protocol NCCL disables here
      }
      if (first || x.time < best.time) best = x;
      first = false;
    }
    if (first) throw RequestError("--model nccl: no protocol is enabled for this collective");
  } else {
    best = predict_one(p, a, p.request.protocol);
  }
  const Request& r = p.request;
  const Bytes size = request_bytes(r);
  const double seconds = best.time.seconds();
  const double algbw = seconds > 0 ? static_cast<double>(size.count()) / seconds * 1e-9 : 0.0;
  const double busbw = algbw * busbw_factor(r.collective, r.comm.size());
  if (a.format == "json" || a.format == "csv") {
    nlohmann::ordered_json j;
    j["collective"] = std::string(to_string(r.collective));
    j["algorithm"] = r.algorithm;
    j["protocol"] = std::string(to_string(best.protocol));
    j["channels"] = r.channels;
    j["ranks"] = r.comm.size();
    j["bytes"] = size.count();
    j["count"] = r.count;
    j["dtype"] = std::string(to_string(r.dtype));
    j["time_us"] = best.time.us();
    j["algbw_GBps"] = algbw;
    j["busbw_GBps"] = busbw;
    if (a.format == "json") {
      std::cout << j.dump(2) << "\n";
    } else {
      std::string head, row;
      for (const auto& [k, v] : j.items()) {
        head += (head.empty() ? "" : ",") + k;
        row += (row.empty() ? "" : ",") + (v.is_string() ? v.get<std::string>() : v.dump());
      }
      std::cout << head << "\n" << row << "\n";
    }
    return;
  }
  fmt::print("cluster     {} ({} GPUs on {} nodes)\n", p.topo.name(), p.topo.rank_count(),
             p.topo.node_count());
  fmt::print("collective  {} of {} ({} x {}), {} ranks\n", to_string(r.collective), to_string(size),
             r.count, to_string(r.dtype), r.comm.size());
  fmt::print("algorithm   {}{}, protocol {}{}, {} channels\n", r.algorithm,
             p.algo_note.empty() ? "" : " (" + p.algo_note + ")", to_string(best.protocol),
             p.proto_auto ? " (auto: fastest)" : "", r.channels);
  fmt::print("model       {}\n", a.model);
  fmt::print("time        {:.3f} us\n", best.time.us());
  fmt::print("algbw       {:.2f} GB/s\n", algbw);
  fmt::print("busbw       {:.2f} GB/s\n", busbw);
  if (!best.detail.empty()) fmt::print("detail      {}\n", best.detail);
}

}  // namespace

void register_predict(CLI::App& app) {
  auto args = std::make_shared<PredictArgs>();
  CLI::App* cmd = app.add_subcommand(
      "predict", "Predict the time, algbw and busbw of one collective on a cluster");
  add_collective_options(cmd, args->c);
  cmd->add_option("--model", args->model,
                  "sim (max-min simulation), contention-free, alpha-beta (closed form), nccl")
      ->check(CLI::IsMember({"sim", "contention-free", "alpha-beta", "nccl"}));
  cmd->add_option("--nccl-version", args->nccl_version, "constants of --model nccl: 2.22, 2.30");
  cmd->add_option("--format", args->format, "table, csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}));
  cmd->callback([args] { run_predict(*args); });
}

}  // namespace collsim
