// `mpirun -np K collsim sweep|compare|scale ...`: the units of work (sizes, size x candidate cells,
// node counts) are handed out over the K processes as their workers free up, and process 0
// gathers the results and prints exactly what one process prints (the other processes print
// nothing). This is how a study that outgrows one machine runs on a cluster. Without a launcher
// it is one process doing everything, and the commands take their usual path.
//
//   Distribution d;                                        // joins the MPI job, if any
//   if (d.distributed()) {
//     const Gathered all = d.run(weights, threads, [&](std::size_t u) { return encode(f(u)); });
//   }                                                      // process 0: every unit; others: {}
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "algorithms/ir/result_row.hpp"
#include "backends/backend.hpp"
#include "predict/predictor.hpp"

namespace collsim {

// Unit index -> its result, encoded by the command.
using Gathered = std::map<std::size_t, nlohmann::json>;

class Distribution {
 public:
  Distribution();  // BackendError when launched as several processes by a build without MPI
  explicit Distribution(std::unique_ptr<ProcessGroup> processes);  // tests: a group of their own
  ~Distribution();
  Distribution(const Distribution&) = delete;
  Distribution& operator=(const Distribution&) = delete;

  bool distributed() const { return processes_->size() > 1; }
  int processes() const { return processes_->size(); }
  bool prints() const { return processes_->index() == 0; }

  // Runs compute(u) once for every unit u < weights.size(), each on whichever worker of
  // whichever process is free first, and returns every unit's result on process 0 ({} on the
  // others). Process 0 hands the units out one at a time, heaviest first by `weights` (the
  // expected cost: bytes, ranks squared, ...; the lowest index on a tie), so a unit that costs
  // far more than its weight said holds up only the worker that has it. Each process runs
  // `threads` workers; `started` runs on process 0 as it hands each unit out. A unit whose
  // compute throws is gathered as its error, and process 0 throws the error of the lowest such
  // unit (a RequestError with its text): which unit fails does not depend on who ran what.
  Gathered run(const std::vector<double>& weights, std::size_t threads,
               const std::function<nlohmann::json(std::size_t)>& compute,
               const std::function<void(std::size_t)>& started = {}) const;

 private:
  std::unique_ptr<ProcessGroup> processes_;
};

// The weight of a size in run(): its bytes, plus what every size costs whatever its bytes (its
// steps and their latencies, about as much work as 4 MiB of pieces). It only orders the units:
// the shortcuts make a simulation's cost far from its bytes (on h100-16node-ib 4 GiB costs over
// ten times what 16 GiB does), which is why units are handed out as workers free up.
double size_weight(std::uint64_t bytes);

// What crosses between processes, exactly: times in picoseconds, doubles as JSON writes them
// (which reads back to the same bits).
nlohmann::json encode(const Prediction& p);
Prediction decode_prediction(const nlohmann::json& j);
nlohmann::json encode(const Choice& c);
Choice decode_choice(const nlohmann::json& j);
nlohmann::json encode(const ResultRow& r);
ResultRow decode_row(const nlohmann::json& j);

}  // namespace collsim
