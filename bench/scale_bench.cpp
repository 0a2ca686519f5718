// Issue 17's must-show cases at sizes that run in seconds on the 2-core development machine
// (Google Benchmark; built, not run, in CI). docs/scale.md ("Cost at scale") gives the full-size
// commands and the numbers measured with them.
//
//   ./build/bench/collsim_scale_bench --benchmark_filter=FlatSwitch  # events/s by channel count
//   ./build/bench/collsim_scale_bench --benchmark_filter=Summit      # 8 B ring/LL, max-min
//   ./build/bench/collsim_scale_bench --benchmark_filter=LargeMessage
//   ./build/bench/collsim_scale_bench --benchmark_filter=DefaultPredict
//
// BM_FlatSwitchRing: 1 GiB ring AllReduce (Simple) under max-min on bench/flat-switch.yaml (one
// non-blocking switch, 400 GB/s per GPU) at 64, 128, 1,024 and 8,192 GPUs, with NCCL's 2
// channels and with 16: one rank stands for all, the GPU downlinks the two ring directions share
// folded (simulated_ranks; simulator/symmetry.hpp). BM_FlatSwitchRingFull: the same at 1,024
// GPUs with every rank simulated, for the engine's own event rate: a channel's flows between
// two GPUs are one max-min class and channels that are copies are simulated once
// (simulated_channels), so 8, 16 and 64 channels run the same events as 2. At 2 and 8 channels
// no link is full (each flow runs at its channel's cap, which max-min then need not compute); at
// 16 and 64 the GPUs' links are, and the pieces that start or end at an instant re-rate the
// classes on their links once it is over, so an event costs more there (compare events_per_s;
// docs/scale.md).
// BM_SummitSmallRingMaxMin: 8 B ring AllReduce with LL on Summit under max-min (the default
// model), with the rank-symmetry shortcut allowed (it does not apply to unequal segments, so
// simulated_ranks shows whether it did).
// BM_LargeMessage: ring AllReduce on dgx-h100 at 1 and 8 GiB, simulate() alone: the cost grows
// with the message size (one event per NCCL piece).
// BM_DefaultPredict: what `collsim predict CONFIG --op allreduce --bytes B` runs with nothing
// else given (NCCL's channels, --select nccl: NCCL's pick simulated, and beside it every other
// candidate as far as the fastest time known): dgx-h100 at 1 GiB and 1 TiB (predict() extends long
// messages from a steady state, predict/steady_state.hpp), h100-16node-ib at 16 and at 128 nodes
// and 1 GiB (issue 17's 10 s target: NVLSTree, simulated in full, 13.4 M events); and at 1 GiB
// an AllGather on 128 nodes (NCCL's Ring/LL128, then every rank-to-rank `direct` alternative)
// and an AllToAll on 64 (`direct`, 512 ranks, 261,632 pairs of them).
// The topology and the schedule are built outside the timed region; simulate() is timed
// (BM_DefaultPredict: choose_checked(), NCCL's pick and the alternatives beside it, the schedules
// built inside).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>

#include "algorithms/generators/registry.hpp"
#include "algorithms/models/nccl_model.hpp"
#include "predict/predictor.hpp"
#include "simulator/simulate.hpp"
#include "topology/loader.hpp"

namespace collsim {
namespace {

Result run(const Topology& topo, Request q, bool symmetry, benchmark::State& state) {
  q.comm = Communicator::from_topology(topo);
  const Schedule s = generate(q);
  SimOptions o;
  o.network = SimNetwork::kMaxMin;
  o.symmetry = symmetry;
  Result r;
  for (auto _ : state) {
    r = simulate(s, topo, o);
    benchmark::DoNotOptimize(r.total);
  }
  state.counters["events"] = static_cast<double>(r.events);
  state.counters["events_per_s"] = benchmark::Counter(
      static_cast<double>(r.events) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
  state.counters["simulated_ranks"] = r.simulated_ranks;
  state.counters["simulated_channels"] = r.simulated_channels;
  state.counters["sim_time_us"] = r.total.us();
  return r;
}

// Args: GPUs, channels.
void flat_switch_ring(benchmark::State& state, bool symmetry) {
  const Topology topo = load_topology(std::string(COLLSIM_SOURCE_DIR) + "/bench/flat-switch.yaml",
                                      LoadOptions{static_cast<int>(state.range(0))});
  Request q;
  q.algorithm = "ring";
  q.protocol = Protocol::kSimple;
  q.count = std::uint64_t{1} << 28;  // 1 GiB of f32
  q.channels = static_cast<int>(state.range(1));
  run(topo, q, symmetry, state);
}

void BM_FlatSwitchRing(benchmark::State& state) { flat_switch_ring(state, true); }
BENCHMARK(BM_FlatSwitchRing)
    ->Args({64, 2})
    ->Args({64, 16})
    ->Args({128, 2})
    ->Args({128, 16})
    ->Args({1024, 2})
    ->Args({1024, 16})
    ->Args({8192, 2})
    ->Args({8192, 16})
    ->Unit(benchmark::kSecond)
    ->Iterations(1);

void BM_FlatSwitchRingFull(benchmark::State& state) { flat_switch_ring(state, false); }
BENCHMARK(BM_FlatSwitchRingFull)
    ->Args({1024, 2})
    ->Args({1024, 8})
    ->Args({1024, 16})
    ->Args({1024, 64})
    ->Unit(benchmark::kSecond)
    ->Iterations(1);

void BM_SummitSmallRingMaxMin(benchmark::State& state) {
  const Topology topo = load_topology("summit", LoadOptions{static_cast<int>(state.range(0))});
  Request q;
  q.algorithm = "ring";
  q.protocol = Protocol::kLL;
  q.count = 2;  // 8 B of f32
  q.channels = 4;
  run(topo, q, true, state);
}
BENCHMARK(BM_SummitSmallRingMaxMin)->Arg(16)->Arg(64)->Unit(benchmark::kSecond)->Iterations(1);

void BM_LargeMessage(benchmark::State& state) {
  const Topology topo = load_topology("dgx-h100");
  Request q;
  q.algorithm = "ring";
  q.protocol = Protocol::kSimple;
  q.count = static_cast<std::uint64_t>(state.range(0)) << 28;  // GiB of f32
  q.channels = 24;
  run(topo, q, true, state);
}
BENCHMARK(BM_LargeMessage)->Arg(1)->Arg(8)->Unit(benchmark::kSecond)->Iterations(1);

// Args: 0 dgx-h100, 1 h100-16node-ib; nodes; log2 of the size in bytes; 0 AllReduce,
// 1 AllGather, 2 AllToAll.
void BM_DefaultPredict(benchmark::State& state) {
  const char* config = state.range(0) == 0 ? "dgx-h100" : "h100-16node-ib";
  const Topology topo = load_topology(config, LoadOptions{static_cast<int>(state.range(1))});
  constexpr Collective kCollectives[] = {Collective::kAllReduce, Collective::kAllGather,
                                         Collective::kAllToAll};
  Request q;
  q.collective = kCollectives[state.range(3)];
  q.comm = Communicator::from_topology(topo);
  q.count = count_for_bytes(q.collective, Bytes(std::uint64_t{1} << state.range(2)), DataType::kF32,
                            q.comm.size());
  const NcclModelInput in = nccl_model_input(topo, q.comm, NcclVersion::k2_30);
  q.channels = std::clamp(in.runtime_channels, 1, 64);
  PredictSetup s{topo, q, parse_algo_choice("auto", "auto"), cost_params(topo), Model::kMaxMin,
                 SelectPolicy::kNccl, in};
  s.nccl_channels = true;
  const Predictor p(s);
  Choice c;
  for (auto _ : state) {
    auto [pick, alt] = p.choose_checked(q.count);
    c = pick;
    benchmark::DoNotOptimize(alt);
  }
  state.counters["sim_time_us"] = c.eval.time.us();
  state.counters["events"] = static_cast<double>(c.eval.events);
  state.SetLabel(c.candidate.algorithm + "/" + std::string(to_string(c.candidate.protocol)));
}
BENCHMARK(BM_DefaultPredict)
    ->Args({0, 1, 30, 0})
    ->Args({0, 1, 40, 0})
    ->Args({1, 16, 30, 0})
    ->Args({1, 128, 30, 0})
    ->Args({1, 128, 30, 1})
    ->Args({1, 64, 30, 2})
    ->Unit(benchmark::kSecond)
    ->Iterations(1);

}  // namespace
}  // namespace collsim

BENCHMARK_MAIN();
