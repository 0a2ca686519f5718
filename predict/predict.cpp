#include "predict/predict.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "algorithms/generators/registry.hpp"
#include "algorithms/models/estimate.hpp"
#include "algorithms/models/selection.hpp"
#include "predict/steady_state.hpp"
#include "simulator/alpha_beta_cost.hpp"
#include "simulator/simulate.hpp"
#include "topology/error.hpp"
#include "topology/topology.hpp"

namespace collsim {

namespace {

constexpr std::array<std::string_view, 4> kModelNames{"sim", "contention-free", "alpha-beta",
                                                      "nccl"};

std::optional<Prediction> by_nccl(const Request& r, const PredictOptions& o, std::string* why) {
  const std::optional<NcclAlgo> algo = nccl_algo_of(r.algorithm);
  if (!algo) {
    if (why) {
      *why = fmt::format(
          "--model nccl: NCCL has no algorithm \"{}\"; NCCL's are ring, dbtree (Tree), nvls, "
          "nvls_tree, pat, collnet_direct, collnet_chain",
          r.algorithm);
    }
    return std::nullopt;
  }
  if (o.nccl == nullptr) throw RequestError("--model nccl: NCCL's model was not set up");
  const auto t = o.nccl->time_us(r.collective, *algo, r.protocol, request_bytes(r).count());
  if (!t) {
    if (why) {
      *why = fmt::format("--model nccl: NCCL's model disables {}/{} for {} on this cluster",
                         to_string(*algo), to_string(r.protocol), to_string(r.collective));
    }
    return std::nullopt;
  }
  Prediction p;
  p.time = us(*t);
  p.detail = fmt::format("NCCL {} tuning model", to_string(o.nccl->input().version));
  return p;
}

Prediction by_closed_form(const Request& r, const Topology& topo, const CostParams& costs,
                          const PredictOptions& o) {
  std::optional<Schedule> own;
  const Schedule* s = o.schedule;
  if (s == nullptr) s = &own.emplace(generate(r));  // only its header is read
  const AlgorithmInfo& a = find_algorithm(r.algorithm);
  const AlphaBetaCost cost =
      alpha_beta_cost(topo, r.comm, costs, r.protocol, r.channels, a.hierarchical,
                      channel_kernel(s->info()));
  const Estimate e = estimate(estimate_request(s->info(), r.comm.node_count(), cost));
  Prediction p;
  p.time = e.time;
  p.exact = e.exact;
  p.detail = fmt::format("{} ({})", e.formula, e.exact ? "exact" : "approximate");
  return p;
}

std::optional<Prediction> by_simulation(const Request& r, const Topology& topo,
                                        const CostParams& costs, SimNetwork network,
                                        const PredictOptions& o, std::string* why) {
  if (const std::uint64_t pairs = connected_pairs(r); pairs > kMaxConnectedPairs) {
    if (why) {
      *why = fmt::format(
          "simulating {} by {} on {} ranks connects every rank with every other, {} pairs, and the "
          "simulator holds at most {} ({} ranks, docs/scale.md); --model alpha-beta gives its "
          "closed form",
          to_string(r.collective), r.algorithm, r.comm.size(), pairs, kMaxConnectedPairs,
          kMaxAllPairsRanks);
    }
    return std::nullopt;
  }
  SimOptions so;
  so.network = network;
  so.costs = costs;
  so.trace = o.trace;
  so.symmetry = o.symmetry;
  so.give_up_after = o.faster_than;
  so.give_up_live = o.faster_than_live;
  for (int k = 0; k < r.comm.size(); ++k) so.placement.push_back(r.comm.gpu(k));
  Result local;
  Result& res = o.result != nullptr ? *o.result : local;
  // A long message runs at a few sizes and is extended along their line (steady_state.hpp).
  SteadyState steady;
  std::optional<Result> extended;
  // The extension was built and bounded for store-and-forward pieces: line forwarding simulates
  // the whole message.
  if (o.steady_state && o.result == nullptr && !costs.line_forwarding) {
    extended = simulate_steady(r, topo, so, &steady);
  }
  if (extended) {
    res = std::move(*extended);
  } else {
    std::optional<Schedule> own;
    const Schedule* s = o.schedule;
    // A request whose shorter runs were validated repeats their loops (steady_state.cpp): a
    // 1 TiB tree that only has to be given up is then never validated op by op.
    if (s == nullptr) s = &own.emplace(steady.validated ? generate(r) : plan(r));
    res = simulate(*s, topo, so);
  }
  if (res.gave_up) {
    if (why) {
      *why = fmt::format("it ends after {:.3f} us", give_up_bound(so).value_or(res.total).us());
    }
    return std::nullopt;
  }
  Prediction p;
  p.time = res.total;
  p.events = res.events;
  p.simulated_ranks = res.simulated_ranks;
  // The latency lattice evaluates cells, not events (simulator/lattice.cpp).
  const std::string work = res.lattice_cells > 0
                               ? fmt::format("latency lattice, {} cells", res.lattice_cells)
                               : fmt::format("{} events", res.events);
  if (res.bottleneck >= 0) {
    const LinkUsage& u = res.links[static_cast<std::size_t>(res.bottleneck)];
    const Link& l = topo.link(u.link);
    p.detail = fmt::format("bottleneck {} -> {} ({}), {:.1f}% busy; {}", topo.device(l.src).name,
                           topo.device(l.dst).name, to_string(l.kind), 100 * u.busy_fraction, work);
  } else {
    p.detail = work;
  }
  if (res.simulated_ranks < r.comm.size()) {
    p.detail += fmt::format(" (rank symmetry: {} of {} ranks simulated{})", res.simulated_ranks,
                            r.comm.size(), res.folded_links ? ", shared links folded" : "");
  }
  if (res.simulated_channels < res.nccl_channels) {
    p.detail += fmt::format(" (channel symmetry: {} of {} channels simulated)",
                            res.simulated_channels, res.nccl_channels);
  }
  if (extended) {
    Request one = r;
    one.count = steady.quantum;
    const std::uint64_t last = steady.first + (steady.runs - 1) * steady.step;
    p.detail += fmt::format(
        " (steady state: {} to {} of {} steps of {} simulated, every {}; the rest extended)",
        steady.first, last, steady.quanta, to_string(request_bytes(one)), steady.step);
  }
  return p;
}

}  // namespace

const std::vector<Model>& all_models() {
  static const std::vector<Model> all{Model::kMaxMin, Model::kContentionFree, Model::kClosedForm,
                                      Model::kNccl};
  return all;
}

std::string_view to_string(Model m) { return kModelNames[static_cast<std::size_t>(m)]; }

Model parse_model(std::string_view name) {
  for (Model m : all_models()) {
    if (to_string(m) == name) return m;
  }
  throw RequestError(fmt::format(
      "unknown model \"{}\"; expected one of sim, contention-free, alpha-beta, nccl", name));
}

bool simulates(Model m) { return m == Model::kMaxMin || m == Model::kContentionFree; }

namespace {

bool reaches_nvswitch(const Request& r, const Topology& topo) {
  for (LinkId l : topo.out_links(topo.gpu_of(Rank{r.comm.gpu(0)}))) {
    if (topo.device(topo.link(l).dst).kind == DeviceKind::kNvSwitch) return true;
  }
  return false;
}

// Why the cluster cannot run CollNet: it needs several nodes, switches that reduce with NCCL's
// CollNet enabled (network.sharp), and for CollNetDirect NVSwitch nodes (NCCL disables it
// without one, `src/graph/tuning.cc`).
std::string cannot_run_collnet(const AlgorithmInfo& a, const Request& r, const Topology& topo) {
  if (r.comm.node_count() < 2) {
    return fmt::format(
        "algorithm \"{}\" reduces across nodes in the network's switches, and this communicator "
        "is one node",
        a.name);
  }
  if (!topo.sharp()) {
    return fmt::format(
        "algorithm \"{}\" needs switches that reduce (InfiniBand SHARP) with NCCL's CollNet "
        "enabled; {} says network.sharp: false",
        a.name, topo.name());
  }
  if (a.family == Family::kCollNetDirect && !reaches_nvswitch(r, topo)) {
    return fmt::format(
        "algorithm \"{}\" needs NVSwitch nodes (NCCL disables it without one); {} "
        "has none",
        a.name, topo.name());
  }
  return "";
}

// Why the cluster cannot run `r`'s algorithm or protocol ("" when it can): LL and LL128 need
// NICs that deliver in order (Topology::in_order); the NVLS family (is_nvls) needs NVSwitches
// that reduce (sm90+ GPUs on NVSwitch); NVLS across nodes needs switches that reduce between
// them (network.sharp, as NCCL needs CollNet); NVLSTree needs several nodes (NCCL turns it off
// on one; its schedule still runs there, as the backends' contract tests check).
std::string cannot_run(const Request& r, const Topology& topo) {
  if (r.protocol != Protocol::kSimple && !topo.in_order()) {
    return fmt::format(
        "protocol {} needs NICs that deliver each 128-byte block in order, and {}'s do not "
        "(node.nics.in_order: false): its network plugin runs NCCL with Simple only",
        to_string(r.protocol), topo.name());
  }
  const AlgorithmInfo& a = find_algorithm(r.algorithm);
  if (a.equal_nodes && !r.comm.uniform()) {
    return fmt::format(
        "algorithm \"{}\" needs the same number of ranks on every node; this communicator's "
        "nodes hold {} to {}",
        a.name, r.comm.min_ranks_per_node(), r.comm.max_ranks_per_node());
  }
  if (is_collnet(a.family)) return cannot_run_collnet(a, r, topo);
  if (!is_nvls(a.family)) return "";
  const int nodes = r.comm.node_count();
  if (a.family == Family::kNvlsTree && nodes == 1) {
    return fmt::format(
        "algorithm \"{}\" joins the nodes' NVLS domains with a tree, and this communicator is one "
        "node (NCCL runs nvls there)",
        a.name);
  }
  if (a.family == Family::kNvls && nodes > 1 && !topo.sharp()) {
    return fmt::format(
        "algorithm \"{}\" spans nodes only where their switches reduce between them (InfiniBand "
        "SHARP, with NCCL's CollNet enabled); {} says network.sharp: false (NCCL runs nvls_tree "
        "there)",
        a.name, topo.name());
  }
  if (!reaches_nvswitch(r, topo) || topo.gpu_model().sm < 90) {
    return fmt::format(
        "algorithm \"{}\" needs an NVSwitch that reduces (third generation or later, sm90+ "
        "GPUs); {} has none",
        a.name, topo.name());
  }
  return "";
}

std::optional<Prediction> by_collsim(const Request& r, const Topology& topo,
                                     const CostParams& costs, Model model,
                                     const PredictOptions& options, std::string* why) {
  switch (model) {
    case Model::kClosedForm:
      return by_closed_form(r, topo, costs, options);
    case Model::kContentionFree:
      return by_simulation(r, topo, costs, SimNetwork::kContentionFree, options, why);
    default:
      return by_simulation(r, topo, costs, SimNetwork::kMaxMin, options, why);
  }
}

}  // namespace

Time host_period(const Request& r, const CostParams& costs) {
  if (r.host.graph) return Time{};
  const Time one_gpu = costs.host_launch + costs.host_channel * std::max(1, r.channels);
  return one_gpu * std::max(1, r.host.gpus_per_thread);
}

std::optional<Prediction> predict(const Request& r, const Topology& topo, const CostParams& costs,
                                  Model model, const PredictOptions& options, std::string* why) {
  if (model == Model::kNccl) return by_nccl(r, options, why);
  if (const std::string no = cannot_run(r, topo); !no.empty()) {
    if (why) *why = no;
    return std::nullopt;
  }
  std::optional<Prediction> p = by_collsim(r, topo, costs, model, options, why);
  // A give-up (faster_than) stays one: the bound only lengthens the time.
  const Time host = host_period(r, costs);
  if (p && host > p->time) {
    p->detail = fmt::format(
        "host-bound: {} GPUs per thread x {:.2f} us to issue each on {} channels, over {:.2f} "
        "us on the GPUs; {}",
        r.host.gpus_per_thread, host.us() / std::max(1, r.host.gpus_per_thread),
        std::max(1, r.channels), p->time.us(), p->detail);
    p->time = host;
    p->host_bound = true;
  }
  return p;
}

}  // namespace collsim
