// `mpirun -np K collsim sweep|compare|scale ...`: the units of work (sizes, size x candidate cells,
// node counts) are dealt out over the K processes, each computes its share, and process 0 gathers
// the results and prints exactly what one process prints (the other processes print nothing).
// This is how a study that outgrows one machine runs on a cluster. Without a launcher it is one
// process doing everything, and the commands take their usual path.
//
//   Distribution d;                                        // joins the MPI job, if any
//   if (d.distributed()) {
//     for (std::size_t u : d.share(weights)) mine[u] = encode(compute(u));
//     const Gathered all = d.gather(mine);                 // process 0: every unit; others: {}
//   }
#pragma once

#include <cstddef>
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
  ~Distribution();
  Distribution(const Distribution&) = delete;
  Distribution& operator=(const Distribution&) = delete;

  bool distributed() const { return processes_->size() > 1; }
  int processes() const { return processes_->size(); }
  bool prints() const { return processes_->index() == 0; }

  // This process's units, ascending: heaviest first, each unit goes to the process with the
  // least weight so far (the lowest index on a tie), so the shares are balanced and the same on
  // every process. Weights: the expected cost of each unit (bytes, ranks squared, ...).
  std::vector<std::size_t> share(const std::vector<double>& weights) const;

  // Every process's results on process 0, an empty map on the others. Each process passes the
  // error that stopped its share, if any ("" otherwise) so that every process still takes part
  // in the gather; process 0 then throws the first of them in process order (a RequestError
  // with its text).
  Gathered gather(const Gathered& mine, const std::string& error) const;

 private:
  std::unique_ptr<ProcessGroup> processes_;
};

// The weight of a size in share(): its bytes, plus what every size costs whatever its bytes
// (its steps and their latencies, about as much work as 4 MiB of pieces), so that the small
// sizes are not all dealt to one process.
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
