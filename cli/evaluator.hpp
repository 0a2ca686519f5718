// Costs one collective request under the chosen model and resolves --algo/--proto auto with the
// chosen policy: the engine behind predict, sweep, compare and trace.
//
//   Prepared p = prepare(args);                      // collective_args.hpp
//   Evaluator ev(p, model_args);                     // builds NCCL's model once if needed
//   Choice c = ev.choose(count);                     // the selected algorithm/protocol and time
//   auto t = ev.evaluate({"ring", Protocol::kLL}, count);   // nullopt: the model cannot cost it
//
// Models: sim (max-min simulation), contention-free (the same, links never shared), alpha-beta
// (closed forms, algorithms/estimate.hpp), nccl (NCCL's tuning model; ring, dbtree and NCCL's
// own NVLS/PAT/... only). With several candidates to try, evaluate runs them on a few threads;
// results do not depend on the thread count.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/nccl_model.hpp"
#include "algorithms/selection.hpp"
#include "cli/collective_args.hpp"
#include "cli/model_options.hpp"
#include "cli/progress.hpp"

namespace collsim {

struct Evaluation {
  Time time;
  std::string detail;  // the bottleneck link, the closed form, or "NCCL 2.30.7 tuning model"
};

struct Choice {
  Candidate candidate;
  Evaluation eval;
  std::string how;        // "fixed", "best", "nccl"
  std::string nccl_pick;  // --select nccl: NCCL's own pick ("NVLS/Simple")
  std::string note;       // e.g. why the pick is not NCCL's
};

class Evaluator {
 public:
  Evaluator(const Prepared& p, const ModelArgs& m);

  // The time of one candidate for `count` elements (nccl-tests' count column); nullopt with
  // `why` set when the model cannot cost it (--model nccl and an algorithm NCCL lacks, or one
  // NCCL disables here).
  std::optional<Evaluation> evaluate(const Candidate& c, std::uint64_t count,
                                     std::string* why = nullptr) const;
  // Every candidate at every count, in parallel: result[i][j] is candidate j at counts[i].
  // `progress` (may be null) steps once per count.
  std::vector<std::vector<std::optional<Evaluation>>> evaluate_grid(
      const std::vector<std::uint64_t>& counts, const std::vector<Candidate>& cs,
      Progress* progress) const;

  // --algo/--proto fixed: that pair (RequestError when the model cannot cost it); otherwise the
  // policy's pick (best: the fastest candidate; nccl: NCCL's arg-min, timed by --model).
  Choice choose(std::uint64_t count) const;
  // The same for each count of a sweep, computed in parallel.
  std::vector<Choice> choose_all(const std::vector<std::uint64_t>& counts,
                                 Progress* progress) const;

  // Every candidate --algo/--proto allow for this collective under this model.
  const std::vector<Candidate>& candidates() const { return candidates_; }
  const NcclModel* nccl() const { return nccl_ ? &*nccl_ : nullptr; }
  const Prepared& prepared() const { return p_; }
  const ModelArgs& model() const { return m_; }

 private:
  Request request(const Candidate& c, std::uint64_t count) const;
  // What choose() must time at `count`, and the Choice it makes from those times.
  std::vector<Candidate> to_try(std::uint64_t count, Choice* partial) const;
  Choice pick(std::uint64_t count, Choice partial, const std::vector<Candidate>& tried,
              const std::vector<std::optional<Evaluation>>& evals) const;

  const Prepared& p_;
  ModelArgs m_;
  std::vector<Candidate> candidates_;
  std::optional<NcclModel> nccl_;
};

// nccl-tests' size column of a request of `count` elements of this prepared collective.
std::uint64_t size_of(const Prepared& p, std::uint64_t count);

}  // namespace collsim
