// Costs the candidates of one collective under one model and resolves --algo/--proto auto with a
// selection policy: the engine behind predict, sweep, compare, scale, plan and trace. Every time
// it gives comes from predict() (predict.hpp).
//
//   PredictSetup s{topo, request, allowed, costs, Model::kMaxMin, SelectPolicy::kNccl, nccl_in};
//   Predictor pr(s);                                  // builds NCCL's model once if needed
//   Choice c = pr.choose(count);                      // the selected algorithm/protocol and time
//   auto t = pr.evaluate({"ring", Protocol::kLL}, count);   // nullopt: the model cannot cost it
//
// With several candidates to try, they run on a few threads (parallel.hpp); results do not
// depend on the thread count.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "algorithms/models/nccl_channels.hpp"
#include "algorithms/models/nccl_model.hpp"
#include "algorithms/models/nccl_p2p.hpp"
#include "algorithms/models/selection.hpp"
#include "predict/predict.hpp"

namespace collsim {

struct PredictSetup {
  const Topology& topo;
  Request request;     // the collective; algorithm, protocol and count are set per candidate
  AlgoChoice allowed;  // what --algo/--proto allow
  CostParams costs;
  Model model = Model::kMaxMin;
  SelectPolicy select = SelectPolicy::kBest;
  // NCCL's model inputs; required for Model::kNccl and SelectPolicy::kNccl.
  std::optional<NcclModelInput> nccl;
  // request.channels is NCCL's comm->nChannels (not --channels): each size then runs on the
  // channels NCCL launches for it, divided among them as `release` divides it
  // (nccl_schedule_channels, nccl_channels.hpp).
  bool nccl_channels = false;
  NcclRelease release = kNewestNccl;
};

struct Choice {
  Candidate candidate;
  Prediction eval;
  std::string how;        // "fixed", "best", "nccl"
  std::string nccl_pick;  // --select nccl: NCCL's own pick ("NVLS/Simple")
  std::string note;       // e.g. why the pick is not NCCL's
  // A faster alternative (Predictor::faster_alternative): whether NCCL can run it on this
  // cluster, with its defaults or the environment `note` names.
  bool nccl_can_run = false;
};

// Called once per size of a grid when all its candidates are done, with the size in words.
using StepCallback = std::function<void(const std::string& size)>;

class Predictor {
 public:
  explicit Predictor(PredictSetup setup);

  // The time of one candidate for `count` elements (nccl-tests' count column); nullopt with
  // `why` set when the model cannot cost it, or when a simulation is known to end after
  // `faster_than` (it stops there: PredictOptions::faster_than).
  std::optional<Prediction> evaluate(const Candidate& c, std::uint64_t count,
                                     std::string* why = nullptr,
                                     std::optional<Time> faster_than = std::nullopt) const;
  // Why none of `cs` can be costed at `count`, for an error that says so: the first one's
  // reason where they are all one algorithm's protocols (what stops one stops them all), else
  // empty.
  std::string why_none(const std::vector<Candidate>& cs, std::uint64_t count) const;
  // Every candidate at every count, in parallel: result[i][j] is candidate j at counts[i].
  std::vector<std::vector<std::optional<Prediction>>> evaluate_grid(
      const std::vector<std::uint64_t>& counts, const std::vector<Candidate>& cs,
      const StepCallback& step = {}) const;
  // The same, reporting each count's row as soon as all its candidates are done (`done`, called
  // from a worker thread under the predictor's lock) and starting no new simulation once `cancel`
  // is set: the rows it did not finish stay empty. Smallest counts first, so rows finish in
  // order and a streamed compare prints as it goes.
  using RowCallback =
      std::function<void(std::size_t index, const std::vector<std::optional<Prediction>>& row)>;
  std::vector<std::vector<std::optional<Prediction>>> evaluate_each(
      const std::vector<std::uint64_t>& counts, const std::vector<Candidate>& cs,
      const StepCallback& step, const std::atomic<bool>* cancel, const RowCallback& done) const;

  // --algo/--proto fixed: that pair (RequestError when the model cannot cost it); otherwise the
  // policy's pick (best: the fastest candidate; nccl: NCCL's arg-min, timed by the model).
  Choice choose(std::uint64_t count) const;
  // The same for each count of a sweep, computed in parallel.
  std::vector<Choice> choose_all(const std::vector<std::uint64_t>& counts,
                                 const StepCallback& step = {}) const;
  // The same, reporting each count's choice as soon as it is made (`done`, called from a worker
  // thread under the predictor's lock) and starting no new simulation once `cancel` is set: the
  // counts it did not finish are nullopt. What an interrupted sweep keeps. Smallest counts
  // first, so choices finish roughly in order and a streamed sweep prints as it goes.
  using DoneCallback = std::function<void(std::size_t index, const Choice& choice)>;
  std::vector<std::optional<Choice>> choose_each(const std::vector<std::uint64_t>& counts,
                                                 const StepCallback& step,
                                                 const std::atomic<bool>* cancel,
                                                 const DoneCallback& done) const;

  // Under --select nccl: the fastest candidate by this model when it beats `chosen` (the pick),
  // with its note saying by how much and whether NCCL can run it (with which NCCL_ALGO and
  // NCCL_PROTO) or it is collsim's own. nullopt when NCCL's pick is the fastest, or for any
  // other policy. Simulates every candidate, each only as far as the fastest time known (NCCL's
  // pick's, or an alternative's that finished faster): a run still going then cannot beat it (the
  // answer is that of full runs: tests/predict/give_up_test.cpp).
  std::optional<Choice> faster_alternative(std::uint64_t count, const Choice& chosen) const;
  // choose() and then faster_alternative(), with the same answers, but the alternatives run
  // beside NCCL's pick instead of after it, giving up at `provisional` times the pick's closed
  // form until the pick has its simulated time (then at the fastest time known). Where that
  // guess fell short of the pick, the runs it gave up run again; without a closed form, the
  // pick runs first. What `collsim predict` does by default. The 1.5 only sets how much work
  // is done, never the answer: the closed forms came out below the simulation by up to 14 % on
  // the defaults measured (NVLSTree at 128 nodes of h100-16node-ib, 1 GiB: 7.10 ms against
  // 8.22; NVLS on dgx-h100 at 1 TiB equal), so 1.5 leaves room without keeping slow runs long.
  std::pair<Choice, std::optional<Choice>> choose_checked(std::uint64_t count,
                                                          double provisional = 1.5) const;

  // Every candidate --algo/--proto allow for this collective under this model.
  const std::vector<Candidate>& candidates() const { return candidates_; }
  const NcclModel* nccl() const { return nccl_ ? &*nccl_ : nullptr; }
  const Topology& topology() const { return s_.topo; }
  const Request& request() const { return s_.request; }
  // Whether request().channels is NCCL's comm->nChannels, each size then running on fewer.
  bool nccl_channels() const { return s_.nccl_channels; }
  const AlgoChoice& allowed() const { return s_.allowed; }
  const CostParams& costs() const { return s_.costs; }
  Model model() const { return s_.model; }
  SelectPolicy select() const { return s_.select; }
  // The request of candidate `c` at `count`.
  Request request(const Candidate& c, std::uint64_t count) const;
  // nccl-tests' size column at `count` elements.
  std::uint64_t size_of(std::uint64_t count) const;

 private:
  // Whether another candidate could be faster than NCCL's pick: not with one, nor on one rank,
  // where every algorithm is the same copy (NCCL runs none).
  bool has_alternatives() const { return candidates_.size() > 1 && s_.request.comm.size() > 1; }
  // What choose() must time at `count`, and the Choice it makes from those times.
  std::vector<Candidate> to_try(std::uint64_t count, Choice* partial) const;
  Choice pick(std::uint64_t count, Choice partial, const std::vector<Candidate>& tried,
              const std::vector<std::optional<Prediction>>& evals) const;
  // `c`'s time at `count` by the closed forms (microseconds to compute), in us; infinity where
  // there is none, or when the model is the closed forms itself (nothing to guess ahead of).
  double closed_form_us(const Candidate& c, std::uint64_t count) const;
  // The candidates other than `chosen`, likeliest winners first (by the closed forms; those
  // without one last).
  std::vector<Candidate> alternatives_to(std::uint64_t count, const Candidate& chosen) const;
  // `c` at `count`, given up once it passes `bound` (picoseconds, which other runs may lower
  // meanwhile); a finished run lowers `bound` to its own time.
  std::optional<Prediction> evaluate_below(const Candidate& c, std::uint64_t count,
                                           std::atomic<std::int64_t>& bound) const;
  // Of `others`' runs, the fastest that beats `chosen`, with a note on whether NCCL can run it.
  std::optional<Choice> alternative(std::uint64_t count, const Choice& chosen,
                                    const std::vector<Candidate>& others,
                                    const std::vector<std::optional<Prediction>>& evals) const;

  PredictSetup s_;
  std::vector<Candidate> candidates_;
  std::optional<NcclModel> nccl_;
  NcclCommChannels comm_;  // the communicator's channels, where it runs on NCCL's channel count
};

}  // namespace collsim
