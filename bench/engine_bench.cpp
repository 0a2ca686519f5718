// Simulator throughput (Google Benchmark; built, not run, in CI).
//
//   ./build/bench/collsim_bench --benchmark_filter=Engine       # events per second
//   ./build/bench/collsim_bench --benchmark_filter=RingAllReduce # 1 GiB on 128 / 1,024 / 8,192
//   GPUs
//
// BM_EngineEvents: an 8-GPU ring AllReduce on one NVSwitch with 64 KiB pieces, sized so that the
// run is millions of events; reports events/s on one core (target: > 10 M/s).
// BM_RingAllReduce1GiB: 1 GiB ring AllReduce with NCCL's Simple chunking (2 MiB chunks in two
// 1 MiB slices, 512 KiB FIFO pieces), 16 channels, on the h100-16node-ib fabric grown to the
// given GPU count, contention-free and max-min. Counters: events, events/s, pieces, and peak RSS
// of the process so far (getrusage; run sizes in increasing order to attribute it). The
// topology and the schedule are built outside the timed region; simulate() is timed.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include "algorithms/generators/registry.hpp"
#include "simulator/simulate.hpp"
#include "topology/builder.hpp"
#include "topology/gpu_models.hpp"
#include "topology/loader.hpp"

namespace collsim {
namespace {

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // ru_maxrss is KiB on Linux
}

Topology star(int p) {
  TopologyBuilder b("bench-star");
  const int m = b.add_gpu_model(*find_gpu_model("H100-SXM"));
  const DeviceId sw = b.add_device(DeviceKind::kNvSwitch, "node0/nvswitch", 0);
  for (int i = 0; i < p; ++i) {
    const DeviceId g = b.add_device(DeviceKind::kGpu, "node0/gpu" + std::to_string(i), 0, m);
    b.add_cable(g, sw, LinkKind::kNvSwitch, GBps(450), us(0.3));
  }
  return std::move(b).build();
}

void BM_EngineEvents(benchmark::State& state) {
  const Topology topo = star(8);
  Request q;
  q.protocol = Protocol::kLL;  // 32 KiB pieces: many events per byte
  q.count = std::uint64_t{256} << 20;
  q.channels = 8;
  q.comm = Communicator::from_topology(topo);
  const Schedule s = generate(q);
  SimOptions o;
  o.network = static_cast<SimNetwork>(state.range(0));
  std::uint64_t events = 0;
  for (auto _ : state) {
    const Result r = simulate(s, topo, o);
    events += r.events;
    benchmark::DoNotOptimize(r.total);
  }
  state.counters["events"] = benchmark::Counter(static_cast<double>(events) / state.iterations());
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EngineEvents)
    ->Arg(static_cast<int>(SimNetwork::kContentionFree))
    ->Arg(static_cast<int>(SimNetwork::kMaxMin))
    ->Unit(benchmark::kMillisecond);

void BM_RingAllReduce1GiB(benchmark::State& state) {
  const int gpus = static_cast<int>(state.range(0));
  const Topology topo = load_topology("h100-16node-ib", LoadOptions{gpus / 8});
  Request q;
  q.protocol = Protocol::kSimple;
  q.count = std::uint64_t{1} << 28;  // 1 GiB of f32
  q.channels = 16;
  q.comm = Communicator::from_topology(topo);
  const Schedule s = generate(q);
  SimOptions o;
  o.network = static_cast<SimNetwork>(state.range(1));
  Result r;
  for (auto _ : state) {
    r = simulate(s, topo, o);
    benchmark::DoNotOptimize(r.total);
  }
  state.counters["events"] = static_cast<double>(r.events);
  state.counters["pieces"] = static_cast<double>(r.pieces);
  state.counters["events_per_s"] = benchmark::Counter(
      static_cast<double>(r.events) * state.iterations(), benchmark::Counter::kIsRate);
  state.counters["sim_time_ms"] = r.total.us() * 1e-3;
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}
BENCHMARK(BM_RingAllReduce1GiB)
    ->Args({128, static_cast<int>(SimNetwork::kContentionFree)})
    ->Args({128, static_cast<int>(SimNetwork::kMaxMin)})
    ->Args({1024, static_cast<int>(SimNetwork::kContentionFree)})
    ->Args({8192, static_cast<int>(SimNetwork::kContentionFree)})
    ->Unit(benchmark::kSecond)
    ->Iterations(1);

// Summit's small-message ring (docs/scale.md): one f32 per rank on one channel, contention-free,
// at 64, 1024 and 4096 nodes (24,576 GPUs), with the rank-symmetry shortcut (simulator/
// symmetry.hpp) and, where it runs in reasonable time, without it.
// A ring AllReduce with LL of `count` f32 on `channels` channels of Summit's `topo`.
Schedule summit_ring(const Topology& topo, int channels, std::uint64_t count) {
  Request q;
  q.algorithm = "ring";
  q.protocol = Protocol::kLL;
  q.channels = channels;
  q.comm = Communicator::from_topology(topo);
  q.count = count;
  return generate(q);
}

void BM_SummitSmallRing(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const Topology topo = load_topology("summit", LoadOptions{nodes});
  const Schedule s = summit_ring(topo, 1, static_cast<std::uint64_t>(topo.rank_count()));
  SimOptions o;
  o.network = SimNetwork::kContentionFree;
  o.symmetry = state.range(1) != 0;
  Result r;
  for (auto _ : state) {
    r = simulate(s, topo, o);
    benchmark::DoNotOptimize(r.total);
  }
  state.counters["events"] = static_cast<double>(r.events);
  state.counters["simulated_ranks"] = r.simulated_ranks;
  state.counters["sim_time_ms"] = r.total.us() * 1e-3;
}
BENCHMARK(BM_SummitSmallRing)
    ->Args({64, 0})
    ->Args({64, 1})
    ->Args({1024, 0})
    ->Args({1024, 1})
    ->Args({4096, 1})
    ->Unit(benchmark::kSecond)
    ->Iterations(1);

// issue 17's headline: an 8 B ring AllReduce with LL on Summit under the default max-min model,
// two channels (NCCL's count for it), every rank simulated. With the latency lattice
// (simulator/lattice.cpp) and, where it runs in reasonable time, with the event simulation;
// sim_time_ms must agree to the picosecond (tests/simulator/lattice_test.cpp checks it on
// smaller cases).
void BM_Summit8BRing(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const Topology topo = load_topology("summit", LoadOptions{nodes});
  const Schedule s = summit_ring(topo, 2, 2);
  SimOptions o;
  o.lattice = state.range(1) != 0;
  Result r;
  for (auto _ : state) {
    r = simulate(s, topo, o);
    benchmark::DoNotOptimize(r.total);
  }
  state.counters["events"] = static_cast<double>(r.events);
  state.counters["cells"] = static_cast<double>(r.lattice_cells);
  state.counters["sim_time_ps"] = static_cast<double>(r.total.ps());
}
BENCHMARK(BM_Summit8BRing)
    ->Args({64, 0})
    ->Args({64, 1})
    ->Args({256, 0})
    ->Args({256, 1})
    ->Args({1024, 0})
    ->Args({1024, 1})
    ->Args({4096, 1})
    ->Unit(benchmark::kSecond)
    ->Iterations(1);

}  // namespace
}  // namespace collsim

BENCHMARK_MAIN();
