#include "predict/predictor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <mutex>
#include <numeric>

#include "predict/parallel.hpp"
#include "topology/error.hpp"

namespace collsim {

Predictor::Predictor(PredictSetup setup) : s_(std::move(setup)) {
  if (s_.model == Model::kNccl || s_.select == SelectPolicy::kNccl) {
    if (!s_.nccl) throw RequestError("NCCL's model needs its inputs (PredictSetup::nccl)");
    nccl_.emplace(*s_.nccl);
  }
  candidates_ = collsim::candidates(s_.request.collective, s_.allowed);
  const NcclModelInput in =
      s_.nccl ? *s_.nccl : nccl_model_input(s_.topo, s_.request.comm, s_.release);
  // NVLS's chunks are the communicator's, whatever channels the request runs on.
  comm_.nvls_chunks = {in.nvls_chunk, in.nvls_tree_max_chunk, in.nvls_across_max_chunk};
  if (s_.nccl_channels) {
    comm_.channels = s_.request.channels;
    comm_.release = s_.release;
    comm_.nvls_channels = in.nvls_channels;
    if (in.ring) {
      comm_.ring_simple_threads = nccl_ring_simple_threads(in.ring->bw_intra, in.ring->channels);
    }
    if (is_nccl_p2p(s_.request.collective)) {
      comm_.p2p = nccl_p2p_shape(s_.topo, s_.request.comm, s_.request.channels, s_.release);
    }
  }
}

Request Predictor::request(const Candidate& c, std::uint64_t count) const {
  Request r = s_.request;
  r.algorithm = c.algorithm;
  r.protocol = c.protocol;
  r.count = count;
  r.nvls_chunk_bytes = comm_.nvls_chunks.chunk;
  r.nvls_tree_max_chunk = comm_.nvls_chunks.tree_max;
  r.nvls_across_max_chunk = comm_.nvls_chunks.across_max;
  if (s_.nccl_channels) nccl_schedule_channels(r, comm_);
  return r;
}

std::uint64_t Predictor::size_of(std::uint64_t count) const {
  Request r = s_.request;
  r.count = count;
  return request_bytes(r).count();
}

std::string Predictor::why_none(const std::vector<Candidate>& cs, std::uint64_t count) const {
  if (cs.empty() || !std::all_of(cs.begin(), cs.end(), [&](const Candidate& c) {
        return c.algorithm == cs.front().algorithm;
      })) {
    return "";
  }
  std::string why;
  evaluate(cs.front(), count, &why);
  return why;
}

std::optional<Prediction> Predictor::evaluate(const Candidate& c, std::uint64_t count,
                                              std::string* why,
                                              std::optional<Time> faster_than) const {
  PredictOptions o;
  o.nccl = nccl();
  o.faster_than = faster_than;
  return predict(request(c, count), s_.topo, s_.costs, s_.model, o, why);
}

std::vector<std::vector<std::optional<Prediction>>> Predictor::evaluate_grid(
    const std::vector<std::uint64_t>& counts, const std::vector<Candidate>& cs,
    const StepCallback& step) const {
  return evaluate_each(counts, cs, step, nullptr, {});
}

std::vector<std::vector<std::optional<Prediction>>> Predictor::evaluate_each(
    const std::vector<std::uint64_t>& counts, const std::vector<Candidate>& cs,
    const StepCallback& step, const std::atomic<bool>* cancel, const RowCallback& done) const {
  std::vector<std::vector<std::optional<Prediction>>> out(
      counts.size(), std::vector<std::optional<Prediction>>(cs.size()));
  std::vector<std::size_t> remaining(counts.size(), cs.size());
  std::mutex mutex;
  // Smallest sizes first: rows finish in order. The largest, which take longest, still run side
  // by side at the end, so the threads finish nearly together.
  parallel_for(counts.size() * cs.size(), [&](std::size_t k) {
    if (cancel != nullptr && cancel->load()) return;  // no new simulation once cancelled
    const std::size_t i = k / cs.size();
    const std::size_t j = k % cs.size();
    out[i][j] = evaluate(cs[j], counts[i]);
    const std::lock_guard<std::mutex> lock(mutex);
    if (--remaining[i] != 0) return;
    if (step) step(human_bytes(size_of(counts[i])));
    if (done) done(i, out[i]);
  });
  return out;
}

std::vector<Candidate> Predictor::to_try(std::uint64_t count, Choice* partial) const {
  if (s_.allowed.fixed()) {
    partial->how = "fixed";
    return {candidates_.front()};
  }
  if (s_.select == SelectPolicy::kNccl) {
    const Selection s = select_nccl(*nccl_, s_.request.collective, size_of(count), s_.allowed,
                                    {s_.request.redop, s_.request.dtype});
    partial->how = "nccl";
    partial->nccl_pick = s.nccl_pick;
    partial->note = s_.request.comm.size() == 1
                        ? "one rank: NCCL runs no algorithm, it copies the buffer"
                        : s.note;
    partial->candidate = s.chosen;
    return {s.chosen};
  }
  partial->how = "best";
  return candidates_;
}

Choice Predictor::pick(std::uint64_t count, Choice ch, const std::vector<Candidate>& tried,
                       const std::vector<std::optional<Prediction>>& evals) const {
  if (ch.how != "best") {
    ch.candidate = tried.front();
    if (!evals.front()) {
      std::string why;
      evaluate(ch.candidate, count, &why);
      if (ch.how == "nccl") why = fmt::format("--select nccl picked {}, but {}", ch.nccl_pick, why);
      throw RequestError(why);
    }
    ch.eval = *evals.front();
    return ch;
  }
  const auto best = select_best(tried, [&](const Candidate& c) -> std::optional<double> {
    const auto& e = evals[static_cast<std::size_t>(&c - tried.data())];
    if (!e) return std::nullopt;
    return e->time.us();
  });
  if (!best) {
    if (const std::string why = why_none(tried, count); !why.empty()) throw RequestError(why);
    throw RequestError(fmt::format("--model {} can cost none of the allowed algorithms for {}",
                                   to_string(s_.model), to_string(s_.request.collective)));
  }
  const auto i =
      static_cast<std::size_t>(std::find(tried.begin(), tried.end(), best->chosen) - tried.begin());
  ch.candidate = best->chosen;
  ch.eval = *evals[i];
  return ch;
}

Choice Predictor::choose(std::uint64_t count) const { return choose_all({count}).front(); }

namespace {

// Lowers `bound` to `t` (picoseconds) if `t` is lower: the fastest time known so far.
void lower(std::atomic<std::int64_t>& bound, Time t) {
  std::int64_t now = bound.load();
  while (t.ps() < now && !bound.compare_exchange_weak(now, t.ps())) {
  }
}

// Whether NCCL can run its point-to-point kernel (collsim's `direct` on AllToAll, Gather, Scatter
// and SendRecv) with protocol `alt` where it picked `picked`, and how (src/enqueue.cc: a send of
// `per_peer` bytes runs LL while they are at most its channels x NCCL_P2P_LL_THRESHOLD, 16 KiB
// by default, else Simple; never LL128; a peer across the network has LL buffers only with
// NCCL_ALLOC_P2P_NET_LL_BUFFERS=1).
std::string p2p_protocol_verdict(Protocol alt, Protocol picked, std::uint64_t per_peer,
                                 bool across_nodes, bool* can_run) {
  *can_run = alt != Protocol::kLL128;
  if (alt == Protocol::kLL128) return "NCCL's point-to-point sends run LL or Simple, never LL128";
  if (alt == Protocol::kSimple && picked == Protocol::kLL) {
    return "NCCL can run it with NCCL_P2P_LL_THRESHOLD=0 (every point-to-point send on Simple)";
  }
  return fmt::format(
      "NCCL can run it with NCCL_P2P_LL_THRESHOLD={} (a send's bytes; 16384 by "
      "default){}",
      per_peer, across_nodes ? " and NCCL_ALLOC_P2P_NET_LL_BUFFERS=1" : "");
}

}  // namespace

double Predictor::closed_form_us(const Candidate& c, std::uint64_t count) const {
  if (s_.model == Model::kClosedForm) return std::numeric_limits<double>::infinity();
  PredictOptions o;
  o.nccl = nccl();
  try {
    if (const auto p = predict(request(c, count), s_.topo, s_.costs, Model::kClosedForm, o)) {
      return p->time.us();
    }
  } catch (const std::exception&) {  // no closed form for it
  }
  return std::numeric_limits<double>::infinity();
}

std::vector<Candidate> Predictor::alternatives_to(std::uint64_t count,
                                                  const Candidate& chosen) const {
  std::vector<Candidate> others;
  for (const Candidate& c : candidates_) {
    if (!(c == chosen)) others.push_back(c);
  }
  // Likeliest winners first, by the closed forms (microseconds each; they only order the work
  // and prune nothing): each simulation gives up once it passes the fastest time known, so an
  // early winner shortens the rest.
  std::vector<double> guess(others.size());
  for (std::size_t j = 0; j < others.size(); ++j) guess[j] = closed_form_us(others[j], count);
  std::vector<std::size_t> order(others.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return guess[a] < guess[b]; });
  std::vector<Candidate> sorted;
  for (std::size_t j : order) sorted.push_back(others[j]);
  return sorted;
}

std::optional<Prediction> Predictor::evaluate_below(const Candidate& c, std::uint64_t count,
                                                    std::atomic<std::int64_t>& bound) const {
  PredictOptions o;
  o.nccl = nccl();
  o.faster_than_live = &bound;
  std::optional<Prediction> e = predict(request(c, count), s_.topo, s_.costs, s_.model, o);
  if (e) lower(bound, e->time);
  return e;
}

std::optional<Choice> Predictor::faster_alternative(std::uint64_t count,
                                                    const Choice& chosen) const {
  if (chosen.how != "nccl" || !has_alternatives()) return std::nullopt;
  // NCCL's pick is timed already: only the others are simulated, each giving up once it passes
  // the fastest time known, NCCL's pick's or an alternative's already finished. The winner
  // itself never passes it, so the answer does not depend on the order or on the threads.
  const std::vector<Candidate> others = alternatives_to(count, chosen.candidate);
  std::vector<std::optional<Prediction>> evals(others.size());
  std::atomic<std::int64_t> bound{chosen.eval.time.ps()};
  parallel_for(others.size(),
               [&](std::size_t j) { evals[j] = evaluate_below(others[j], count, bound); });
  return alternative(count, chosen, others, evals);
}

std::pair<Choice, std::optional<Choice>> Predictor::choose_checked(std::uint64_t count,
                                                                   double provisional) const {
  Choice partial;
  const std::vector<Candidate> tried = to_try(count, &partial);
  if (partial.how != "nccl" || !has_alternatives()) return {choose(count), std::nullopt};
  // The pick's closed form, times `provisional`: what the alternatives give up at until the pick
  // has its simulated time. Without one, the pick runs first, as choose() does.
  std::optional<Time> guess;
  if (const double g = closed_form_us(tried.front(), count) * provisional; std::isfinite(g)) {
    try {
      guess = us(g);
    } catch (const TimeRangeError&) {  // longer than a Time holds: as good as none
    }
  }
  if (!guess) {
    Choice ch = choose(count);
    std::optional<Choice> alt = faster_alternative(count, ch);
    return {std::move(ch), std::move(alt)};
  }
  const std::vector<Candidate> others = alternatives_to(count, tried.front());
  std::vector<std::optional<Prediction>> picked(1);
  std::vector<std::optional<Prediction>> evals(others.size());
  std::atomic<std::int64_t> bound{guess->ps()};
  parallel_for(1 + others.size(), [&](std::size_t k) {
    if (k == 0) {
      picked[0] = evaluate(tried.front(), count);
      if (picked[0]) lower(bound, picked[0]->time);
      return;
    }
    evals[k - 1] = evaluate_below(others[k - 1], count, bound);
  });
  Choice ch = pick(count, partial, tried, picked);
  // A run given up at the provisional time may still beat the pick when the guess was short of
  // it: those run again, against the fastest time now known.
  if (ch.eval.time > *guess) {
    std::atomic<std::int64_t> known{ch.eval.time.ps()};
    for (const std::optional<Prediction>& e : evals) {
      if (e) lower(known, e->time);
    }
    std::vector<std::size_t> again;
    for (std::size_t j = 0; j < evals.size(); ++j) {
      if (!evals[j]) again.push_back(j);
    }
    parallel_for(again.size(), [&](std::size_t k) {
      evals[again[k]] = evaluate_below(others[again[k]], count, known);
    });
  }
  std::optional<Choice> alt = alternative(count, ch, others, evals);
  return {std::move(ch), std::move(alt)};
}

std::optional<Choice> Predictor::alternative(
    std::uint64_t count, const Choice& chosen, const std::vector<Candidate>& others,
    const std::vector<std::optional<Prediction>>& evals) const {
  // The fastest, and of equal times the first in candidate order (`others` runs in the order
  // of its guesses); a run that gave up at a bound another alternative set is slower than that
  // one.
  const auto rank = [&](std::size_t j) {
    return std::find(candidates_.begin(), candidates_.end(), others[j]) - candidates_.begin();
  };
  std::optional<std::size_t> best;
  for (std::size_t j = 0; j < evals.size(); ++j) {
    if (!evals[j]) continue;
    if (!best || evals[j]->time < evals[*best]->time ||
        (evals[j]->time == evals[*best]->time && rank(j) < rank(*best))) {
      best = j;
    }
  }
  if (!best || !(evals[*best]->time < chosen.eval.time)) return std::nullopt;
  Choice alt;
  alt.candidate = others[*best];
  alt.eval = *evals[*best];
  alt.how = "best";
  const double gain = 100 * (1 - alt.eval.time.us() / chosen.eval.time.us());
  const std::optional<NcclAlgo> nccl = nccl_algo_of(alt.candidate.algorithm);
  // NCCL's algorithm, but one its enable rules rule out here (PAT with several GPUs a node).
  const bool enabled = nccl && nccl_ &&
                       nccl_->time_us(s_.request.collective, *nccl, alt.candidate.protocol,
                                      size_of(count));
  std::string how;
  alt.nccl_can_run = enabled;
  if (enabled) {
    how = fmt::format("NCCL can run it with NCCL_ALGO={} NCCL_PROTO={}", to_string(*nccl),
                      nccl_protocol_name(alt.candidate.protocol));
  } else if (alt.candidate.algorithm == "direct" && is_nccl_p2p(s_.request.collective)) {
    // `direct` is NCCL's own point-to-point kernel here; what NCCL decides is the protocol.
    const Request& r = s_.request;
    const std::uint64_t per_peer = nccl_p2p_peer_bytes(r.collective, size_of(count), r.comm.size());
    how = p2p_protocol_verdict(alt.candidate.protocol, chosen.candidate.protocol, per_peer,
                               r.comm.node_count() > 1, &alt.nccl_can_run);
  } else if (nccl) {
    how = fmt::format("NCCL does not run {}/{} on this cluster", to_string(*nccl),
                      nccl_protocol_name(alt.candidate.protocol));
  } else {
    how = fmt::format("NCCL cannot run it ({} is collsim's own algorithm)",
                      alt.candidate.algorithm);
  }
  alt.note = fmt::format("{} is {:.1f}% faster by --model {} ({:.3f} us); {}",
                         to_string(alt.candidate), gain, to_string(s_.model), alt.eval.time.us(),
                         how);
  return alt;
}

std::vector<Choice> Predictor::choose_all(const std::vector<std::uint64_t>& counts,
                                          const StepCallback& step) const {
  std::vector<Choice> out;
  for (std::optional<Choice>& c : choose_each(counts, step, nullptr, {})) out.push_back(*c);
  return out;
}

std::vector<std::optional<Choice>> Predictor::choose_each(const std::vector<std::uint64_t>& counts,
                                                          const StepCallback& step,
                                                          const std::atomic<bool>* cancel,
                                                          const DoneCallback& done) const {
  std::vector<Choice> partial(counts.size());
  std::vector<std::vector<Candidate>> tries(counts.size());
  std::vector<std::pair<std::size_t, std::size_t>> tasks;  // (count index, candidate index)
  for (std::size_t i = 0; i < counts.size(); ++i) {
    tries[i] = to_try(counts[i], &partial[i]);
    for (std::size_t j = 0; j < tries[i].size(); ++j) tasks.emplace_back(i, j);
  }
  std::vector<std::vector<std::optional<Prediction>>> evals(counts.size());
  std::vector<std::size_t> remaining(counts.size());
  for (std::size_t i = 0; i < counts.size(); ++i) {
    evals[i].resize(tries[i].size());
    remaining[i] = tries[i].size();
  }
  std::vector<std::optional<Choice>> out(counts.size());
  std::vector<std::exception_ptr> errors(counts.size());
  std::mutex mutex;
  parallel_for(tasks.size(), [&](std::size_t k) {
    if (cancel != nullptr && cancel->load()) return;  // no new simulation once cancelled
    const auto [i, j] = tasks[k];  // smallest sizes first: choices finish in order
    evals[i][j] = evaluate(tries[i][j], counts[i]);
    const std::lock_guard<std::mutex> lock(mutex);
    if (--remaining[i] != 0) return;
    if (step) step(human_bytes(size_of(counts[i])));
    try {
      out[i] = pick(counts[i], partial[i], tries[i], evals[i]);
    } catch (...) {
      errors[i] = std::current_exception();  // thrown below in size order: deterministic
      return;
    }
    if (done) done(i, *out[i]);
  });
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  return out;
}

}  // namespace collsim
