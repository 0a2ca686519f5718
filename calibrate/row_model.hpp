// What collsim runs to predict one measured row: the ranks, algorithm, protocol and channels the
// measurement ran with, as far as the file says, and NCCL's own choice where it does not.
//
//   MeasurementFile f = read_measurements("h100x8_allreduce.txt");
//   FilePlan plan = plan_measurements(topo, f);
//   for (const RowCase& c : plan.cases)
//     Time t = predict_case(topo, c, costs);   // compare with c.measured_us
//
// How the choice is made (issue "selection matters"):
//  - collsim's own CSV and `collsim bench` tables (a BACKEND= label) name the algorithm, protocol
//    and channels in collsim's terms: those run;
//  - a "### ALGO=... PROTO=..." label or NCCL_ALGO / NCCL_PROTO in the file's environment narrows
//    NCCL's choice, which is then made among what is left, as NCCL makes it;
//  - otherwise NCCL's automatic choice (algorithms/models/selection.hpp, NCCL's tuning model for
//    the file's NCCL version: the constant set collsim carries nearest to it, 2.22 below 2.27,
//    else 2.30). Every algorithm NCCL runs is simulated, so the case runs NCCL's own pick.
// Channels: NCCL's runtime channel count on this cluster, bounded by NCCL_MIN/MAX_NCHANNELS and
// NCCL_MIN/MAX_CTAS where the file sets them; collsim's CSV gives its own.
// The host: nccl-tests' "nGpus" (GPUs one thread drives) and "graph:" from the header, 1 and no
// graph where it has none or the table is collsim's own (Request::host).
// Ranks: the row's rank count, run on all of the cluster's GPUs, the first GPUs of one node, or
// the first whole nodes; any other count is a MeasurementError naming the file.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "algorithms/ir/request.hpp"
#include "algorithms/ir/schedule.hpp"
#include "algorithms/models/nccl_release.hpp"
#include "calibrate/measurement.hpp"
#include "predict/predict.hpp"
#include "simulator/cost_params.hpp"
#include "topology/topology.hpp"

namespace collsim {

struct RowCase {
  std::size_t row = 0;    // index into MeasurementFile::rows
  int line = 0;           // the row's line in the file
  Request request;        // algorithm, protocol, channels and communicator resolved
  std::string selection;  // how the algorithm was chosen: "NCCL_ALGO=Ring", "NCCL's choice", ...
  std::string nccl_pick;  // NCCL's own pick ("NVLS/Simple"), where NCCL chose
  std::optional<double> nccl_us;  // NCCL's tuning model's time for its own pick, where it has one
  double measured_us = 0;         // the row's out-of-place time
  std::optional<double> inplace_us;  // its in-place time, where the file has one
};

// How far a row's two times of the same collective (out-of-place and in-place) lie apart, in %
// of the smaller: the run's own spread at that size, which no model can be closer than. nullopt
// without an in-place time.
std::optional<double> inplace_apart_pct(const RowCase& c);
// Rows whose two times lie further apart than this are said (validate): their error is as much
// the run's as the model's. Over the 1,180 rows of tests/data/nccl-tests the two times lie a
// median 0.7 % apart; 10 % is some fifteen times that, and singles out 52 of them.
inline constexpr double kInplaceApartPct = 10.0;

struct FilePlan {
  std::string path;
  std::vector<RowCase> cases;
  std::vector<std::string> skipped;  // "path:line: why the row cannot be predicted"
};

// The file's NCCL release (its banner, library line or stated version, measurement.hpp); the
// newest collsim models when it says none or one collsim does not know. The release sets the
// constants of NCCL's model (2.22.3's before 2.27) and how a collective is divided among
// channels (nccl_channels.hpp).
NcclRelease nccl_release_of(const MeasurementFile& f);

FilePlan plan_measurements(const Topology& topo, const MeasurementFile& f);

// The time of a case under `costs` by predict() with `model` (the max-min simulation unless
// said); `schedule`, if given, is the case's schedule already built (plan(c.request)), reused
// across calls by the fit. Model::kNccl gives NCCL's model's time for its own pick
// (`c.nccl_us`), nullopt where it has none.
std::optional<Time> predict_case(const Topology& topo, const RowCase& c, const CostParams& costs,
                                 Model model = Model::kMaxMin, const Schedule* schedule = nullptr);

}  // namespace collsim
