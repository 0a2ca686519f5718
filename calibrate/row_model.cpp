#include "calibrate/row_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "algorithms/generators/registry.hpp"
#include "algorithms/ir/communicator.hpp"
#include "algorithms/models/nccl_channels.hpp"
#include "algorithms/models/nccl_model.hpp"
#include "algorithms/models/nccl_p2p.hpp"
#include "algorithms/models/selection.hpp"
#include "calibrate/nccl_env.hpp"
#include "topology/error.hpp"

namespace collsim {

namespace {

// The ranks a row runs on: all GPUs, the first of node 0, or the first whole nodes.
Communicator communicator_for(const Topology& topo, int ranks, const std::string& where) {
  const int total = topo.rank_count();
  const int per_node = static_cast<int>(topo.gpus_of_node(0).size());
  if (ranks <= 0 || ranks == total) return Communicator::from_topology(topo);
  std::vector<Rank> subset;
  if (ranks < per_node || (per_node > 0 && ranks % per_node == 0 && ranks < total)) {
    for (int r = 0; r < ranks; ++r) subset.push_back(Rank{r});
    return Communicator::from_topology(topo, subset);
  }
  throw MeasurementError(fmt::format(
      "{}: {} ranks do not fit the cluster {} ({} GPUs, {} per node): expected all of its GPUs, "
      "at most {} on one node, or whole nodes",
      where, ranks, topo.name(), total, per_node, per_node));
}

std::vector<std::string> forced(const MeasurementRow& row) {
  std::vector<std::string> out;
  if (row.algo_override) out.push_back("ALGO=" + *row.algo_override);
  if (row.proto_override) out.push_back("PROTO=" + *row.proto_override);
  return out;
}

}  // namespace

NcclRelease nccl_release_of(const MeasurementFile& f) {
  if (f.nccl_version.empty()) return kNewestNccl;
  try {
    return parse_nccl_release(f.nccl_version);
  } catch (const RequestError&) {
    return kNewestNccl;
  }
}

std::optional<double> inplace_apart_pct(const RowCase& c) {
  if (!c.inplace_us || *c.inplace_us <= 0 || c.measured_us <= 0) return std::nullopt;
  const double lo = std::min(c.measured_us, *c.inplace_us);
  return std::abs(c.measured_us - *c.inplace_us) / lo * 100;
}

FilePlan plan_measurements(const Topology& topo, const MeasurementFile& f) {
  FilePlan plan;
  plan.path = f.path;
  const NcclRelease release = nccl_release_of(f);
  // What the run's NCCL variables set (calibrate/nccl_env.hpp): the channel bounds, NVLS and
  // CollNet turned off (NVLS across nodes goes with CollNet, nccl_model.cpp), NVLS's channels and
  // chunks. NCCL holds the channel bounds to its MAXCHANNELS (`src/graph/connect.cc`).
  const NcclEnvSettings env = nccl_env_settings(f.env);
  const int most = nccl_max_channels(release);
  // NCCL's model per communicator size, built on first use, as the variables set it.
  std::vector<std::pair<int, NcclModel>> models;
  auto model_for = [&](const Communicator& comm) -> const NcclModel& {
    for (const auto& [n, m] : models) {
      if (n == comm.size()) return m;
    }
    NcclModelInput in = nccl_model_input(topo, comm, release);
    env.apply(in, most);
    models.emplace_back(comm.size(), NcclModel(std::move(in)));
    return models.back().second;
  };
  // An NCCL_DEBUG=INFO log's own NVLS channel count, where it prints one, is what NCCL ran with.
  const auto nvls_channels = [&](const NcclModel& m) {
    return f.nvls_channels.value_or(m.input().nvls_channels);
  };
  for (std::size_t i = 0; i < f.rows.size(); ++i) {
    const MeasurementRow& row = f.rows[i];
    const std::string where = fmt::format("{}:{}", f.path, row.line);
    if (!row.data_type) {
      plan.skipped.push_back(
          fmt::format("{}: data type \"{}\" is not one collsim has", where, row.dtype));
      continue;
    }
    RowCase c;
    c.row = i;
    c.line = row.line;
    c.measured_us = row.time_us;
    c.inplace_us = row.inplace_time_us;
    Request& r = c.request;
    r.collective = f.collective;
    r.dtype = *row.data_type;
    r.redop = row.reduce_op.value_or(ReduceOp::kSum);
    r.root = std::max(0, row.root);
    try {
      r.comm = communicator_for(topo, row.ranks > 0 ? row.ranks : f.ranks, where);
      r.count = count_for_bytes(r.collective, Bytes(row.bytes), r.dtype, r.comm.size());
      if (r.count == 0 && r.collective != Collective::kBarrier) {
        plan.skipped.push_back(
            fmt::format("{}: {} B is no whole element per rank", where, row.bytes));
        continue;
      }
      // `collsim bench` tables say what ran in their label; collsim's CSV in its columns.
      const auto backend = row.labels.find("BACKEND");
      const bool collsim_run =
          f.format == MeasurementFormat::kCollsimCsv || backend != row.labels.end();
      // nccl-tests' header: how many GPUs one thread drove, and whether a CUDA graph ran them.
      // `collsim bench` times its backends its own way, one launch per rank.
      if (!collsim_run) {
        r.host.gpus_per_thread = std::max(1, f.run.gpus_per_thread.value_or(1));
        r.host.graph = f.run.graph.value_or(0) > 0;
      }
      std::optional<int> channels = row.channels;
      // "nccl": NCCL's own count; "auto" says the same in collsim bench's nccl-native tables
      // written before 2026-11-26 (docs/gpu.md holds one).
      if (const auto ch = row.labels.find("CHANNELS");
          !channels && ch != row.labels.end() && ch->second != "nccl" && ch->second != "auto") {
        int n = 0;
        const auto [end, ec] =
            std::from_chars(ch->second.data(), ch->second.data() + ch->second.size(), n);
        if (ec != std::errc() || n < 1) {
          throw RequestError(
              fmt::format("label CHANNELS={}: expected a positive integer or nccl", ch->second));
        }
        channels = n;
      }
      const int nccl_channels = nccl_model_input(topo, r.comm, release).runtime_channels;
      const int comm_channels = f.coll_channels.value_or(env.comm_channels(nccl_channels, most));
      r.channels = channels.value_or(comm_channels);
      // "0 nvls channels" in an INFO log's init summary, on a cluster that has NVLS: it was not
      // set up (a fabric manager or IMEX missing, NCCL_NVLS_ENABLE=0 not shown), so neither
      // NVLS nor NVLSTree ran.
      const bool nvls_not_set_up =
          f.nvls_channels == 0 && model_for(r.comm).input().nvls.has_value();
      const std::string algo = nvls_not_set_up ? nccl_algo_without_nvls(row.algo_override)
                                               : row.algo_override.value_or("auto");
      const std::string proto = row.proto_override.value_or("auto");
      if (collsim_run && row.algo_override && row.proto_override) {
        r.algorithm = algo;
        r.protocol = parse_protocol(proto);
        c.selection = fmt::format("ran {}/{}", algo, proto);
      } else {
        const AlgoChoice allowed = parse_algo_choice(algo, proto);
        const NcclModel& m = model_for(r.comm);
        const Selection s = select_nccl(m, r.collective, row.bytes, allowed, {r.redop, r.dtype});
        r.algorithm = s.chosen.algorithm;
        r.protocol = s.chosen.protocol;
        if (!channels) {
          // NCCL_MIN_NCHANNELS and NCCL_MIN_CTAS raise the communicator's channels, not what a
          // small collective launches (nccl_channels.hpp).
          NcclCommChannels comm;
          comm.channels = r.channels;
          comm.nvls_channels = nvls_channels(m);
          comm.nvls_chunks = {m.input().nvls_chunk, m.input().nvls_tree_max_chunk,
                              m.input().nvls_across_max_chunk};
          comm.p2p = nccl_p2p_shape(topo, r.comm, r.channels, release);
          comm.release = release;
          if (const auto& ring = m.input().ring) {
            comm.ring_simple_threads = nccl_ring_simple_threads(ring->bw_intra, ring->channels);
          }
          nccl_schedule_channels(r, comm);
        }
        c.nccl_pick = s.nccl_pick;
        if (s.time_us > 0) c.nccl_us = s.time_us;
        c.selection = row.algo_override || row.proto_override
                          ? fmt::format("forced {}", fmt::join(forced(row), " "))
                          : std::string("NCCL's choice");
        if (nvls_not_set_up) c.selection += " (0 nvls channels)";
      }
    } catch (const RequestError& e) {
      plan.skipped.push_back(fmt::format("{}: {}", where, e.what()));
      continue;
    }
    plan.cases.push_back(std::move(c));
  }
  return plan;
}

std::optional<Time> predict_case(const Topology& topo, const RowCase& c, const CostParams& costs,
                                 Model model, const Schedule* schedule) {
  if (model == Model::kNccl) {
    if (!c.nccl_us) return std::nullopt;
    return us(*c.nccl_us);
  }
  PredictOptions o;
  o.schedule = schedule;
  const auto p = predict(c.request, topo, costs, model, o);
  if (!p) return std::nullopt;
  return p->time;
}

}  // namespace collsim
