// One request in, one time out: the single place collsim turns a collective into a predicted
// time, whichever model gives it. The CLI, calibration and validation all call predict().
//
//   const Topology topo = load_topology("dgx-h100");
//   const CostParams costs = cost_params(topo);              // resolved once
//   Request r = ...;  r.algorithm = "ring";  r.protocol = Protocol::kSimple;
//   std::string why;
//   if (auto p = predict(r, topo, costs, Model::kMaxMin, {}, &why)) p->time.us();
//
// The models, from the most to the least detailed:
//   kMaxMin          the discrete-event simulation, links shared max-min fairly between the
//                    flows crossing them (simulator/simulate.hpp); the default.
//   kContentionFree  the same simulation with every link split evenly among the request's
//                    channels and never shared otherwise: fast, and exactly what the closed
//                    forms compute where they claim to be exact.
//   kClosedForm      the α-β closed forms (algorithms/models/estimate.hpp): nothing is
//                    simulated.
//   kNccl            NCCL's own tuning model (algorithms/models/nccl_model.hpp), which knows
//                    NCCL's algorithms only and uses NCCL's constants, never collsim's costs.
// The first three also bound the time from below by the host's share of an iteration,
// (costs.host_launch + r.channels x costs.host_channel) x r.host.gpus_per_thread (none with a
// CUDA graph): nccl-tests runs the GPUs on one iteration while the host issues the next, so an
// iteration takes the longer of the two (Prediction::host_bound says which). NCCL's model has no
// such term.
// The first three read every cost from `costs` (the GPU's defaults under the config's `costs:`
// block and its overlays, resolved once per command); tests/predict/model_contract_test.cpp
// holds them to that and to agreeing with each other where they should.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/ir/request.hpp"
#include "algorithms/ir/schedule.hpp"
#include "algorithms/models/nccl_model.hpp"
#include "simulator/cost_params.hpp"
#include "simulator/simulate.hpp"
#include "simulator/trace.hpp"
#include "topology/topology.hpp"

namespace collsim {

enum class Model { kMaxMin, kContentionFree, kClosedForm, kNccl };

// The command-line names, in that order: sim, contention-free, alpha-beta, nccl.
const std::vector<Model>& all_models();
std::string_view to_string(Model m);
// RequestError listing the accepted names otherwise.
Model parse_model(std::string_view name);
// Whether the model executes a schedule (and so can trace it).
bool simulates(Model m);

struct Prediction {
  Time time;
  std::string detail;        // the bottleneck link, the closed form used, or NCCL's model version
  std::uint64_t events = 0;  // simulation events (simulating models)
  int simulated_ranks = 0;   // < ranks when a rank symmetry let one period stand for all
  // kClosedForm: the form is exact, i.e. equals the contention-free simulation (estimate.hpp).
  bool exact = false;
  // The host's share of the iteration (Request::host) was longer than the GPUs' run, and is the
  // time; `detail` says so.
  bool host_bound = false;
};

// The host's time to issue one iteration of `r` (Request::host): host_launch and host_channel
// per channel, for each GPU its thread drives; nothing when the iterations run from a CUDA graph.
Time host_period(const Request& r, const CostParams& costs);

struct PredictOptions {
  const NcclModel* nccl = nullptr;     // NCCL's model for this communicator; kNccl needs it
  const Schedule* schedule = nullptr;  // plan(request), when the caller already built it
  TraceRecorder* trace = nullptr;      // simulating models: record the run (trace.hpp)
  Result* result = nullptr;            // simulating models: the whole result (links, ranks)
  // Simulating models: allow the rank-symmetry shortcut (simulator/symmetry.hpp), which leaves
  // the links of the ranks it does not simulate out of Result::links.
  bool symmetry = true;
  // Simulating models: a message of many loops is simulated at a few shorter sizes and its time
  // extended along their line, within kSteadyBound of the full run (steady_state.hpp). Off, or
  // with `result` set, the whole message is simulated.
  bool steady_state = true;
  // Simulating models: only a time below this one is wanted. A run that is known to end later
  // stops there (SimOptions::give_up_after) and predict() returns nullopt, `why` saying so.
  std::optional<Time> faster_than;
  // The same with a bound other threads may lower while the run goes (SimOptions::give_up_live).
  const std::atomic<std::int64_t>* faster_than_live = nullptr;
};

// The predicted time of `r` (algorithm, protocol, channels and communicator resolved) on `topo`
// with `costs` under `model`. nullopt, with `why` set when given, when the model cannot cost the
// request: an algorithm NCCL does not have (kNccl), one NCCL's model disables here, or one
// collsim does not simulate, or (PredictOptions::faster_than) a simulated run that is slower.
// Throws RequestError / ScheduleError as plan() and simulate() do.
std::optional<Prediction> predict(const Request& r, const Topology& topo, const CostParams& costs,
                                  Model model, const PredictOptions& options = {},
                                  std::string* why = nullptr);

}  // namespace collsim
