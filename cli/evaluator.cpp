#include "cli/evaluator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>

#include "algorithms/estimate.hpp"
#include "cli/parallel.hpp"
#include "simulator/alpha_beta_cost.hpp"
#include "topology/error.hpp"

namespace collsim {

std::uint64_t size_of(const Prepared& p, std::uint64_t count) {
  Request r = p.request;
  r.count = count;
  return request_bytes(r).count();
}

Evaluator::Evaluator(const Prepared& p, const ModelArgs& m) : p_(p), m_(m) {
  // Checked whether or not this run needs NCCL's model: a mistyped option is never ignored.
  try {
    (void)parse_nccl_version(m_.nccl_version);
  } catch (const RequestError& e) {
    throw RequestError(fmt::format("--nccl-version: {}", e.what()));
  }
  const SelectPolicy policy = m_.policy();
  if (m_.model == "nccl" || policy == SelectPolicy::kNccl) {
    nccl_.emplace(nccl_input(m_, p_.topo, p_.request.comm));
  }
  candidates_ = collsim::candidates(p_.request.collective, p_.choice, m_.model == "nccl");
}

Request Evaluator::request(const Candidate& c, std::uint64_t count) const {
  Request r = p_.request;
  r.algorithm = c.algorithm;
  r.protocol = c.protocol;
  r.count = count;
  return r;
}

std::optional<Evaluation> Evaluator::evaluate(const Candidate& c, std::uint64_t count,
                                              std::string* why) const {
  const Request r = request(c, count);
  Evaluation out;
  if (m_.model == "nccl") {
    const auto algo = nccl_algo_of(c.algorithm);
    if (!algo) {
      if (why) {
        *why = fmt::format(
            "--model nccl: NCCL has no algorithm \"{}\"; NCCL's are ring, "
            "dbtree (Tree), nvls, nvls_tree, pat, collnet_direct, collnet_chain",
            c.algorithm);
      }
      return std::nullopt;
    }
    const auto t = nccl_->time_us(r.collective, *algo, c.protocol, request_bytes(r).count());
    if (!t) {
      if (why) {
        *why = fmt::format("--model nccl: NCCL's model disables {}/{} for {} on this cluster",
                           to_string(*algo), to_string(c.protocol), to_string(r.collective));
      }
      return std::nullopt;
    }
    out.time = us(*t);
    out.detail = fmt::format("NCCL {} tuning model", to_string(nccl_->input().version));
    return out;
  }
  if (!simulable(c.algorithm)) {
    if (why) {
      *why = fmt::format(
          "algorithm \"{}\" is NCCL's; collsim does not simulate it yet (use "
          "--model nccl)",
          c.algorithm);
    }
    return std::nullopt;
  }
  if (m_.model == "alpha-beta") {
    const Schedule s = generate(r);
    const bool hier = r.algorithm == "ring2d" || r.algorithm == "dbtree";
    const AlphaBetaCost cost = alpha_beta_cost(p_.topo, r.comm, default_cost_params(p_.topo),
                                               c.protocol, r.channels, hier);
    const Estimate e = estimate(estimate_request(s.info(), r.comm.node_count(), cost));
    out.time = e.time;
    out.detail = e.formula;
    return out;
  }
  const Schedule s = plan(r);
  const SimNetwork net = m_.model == "sim" ? SimNetwork::kMaxMin : SimNetwork::kContentionFree;
  const Result res = simulate(s, p_.topo, sim_options(p_, net));
  out.time = res.total;
  if (res.bottleneck >= 0) {
    const LinkUsage& u = res.links[res.bottleneck];
    const Link& l = p_.topo.link(u.link);
    out.detail = fmt::format("bottleneck {} -> {} ({}), {:.1f}% busy; {} events",
                             p_.topo.device(l.src).name, p_.topo.device(l.dst).name,
                             to_string(l.kind), 100 * u.busy_fraction, res.events);
  } else {
    out.detail = fmt::format("{} events", res.events);
  }
  if (res.simulated_ranks < s.rank_count()) {
    out.detail += fmt::format(" (rank symmetry: {} of {} ranks simulated)", res.simulated_ranks,
                              s.rank_count());
  }
  return out;
}

std::vector<std::vector<std::optional<Evaluation>>> Evaluator::evaluate_grid(
    const std::vector<std::uint64_t>& counts, const std::vector<Candidate>& cs,
    Progress* progress) const {
  std::vector<std::vector<std::optional<Evaluation>>> out(
      counts.size(), std::vector<std::optional<Evaluation>>(cs.size()));
  std::vector<std::size_t> remaining(counts.size(), cs.size());
  std::mutex mutex;
  // Largest sizes first: they take longest, so the threads finish together.
  const std::size_t n = counts.size() * cs.size();
  parallel_for(n, [&](std::size_t k) {
    const std::size_t i = counts.size() - 1 - k / cs.size();
    const std::size_t j = k % cs.size();
    out[i][j] = evaluate(cs[j], counts[i]);
    const std::lock_guard<std::mutex> lock(mutex);
    if (--remaining[i] == 0 && progress) progress->step(human_bytes(size_of(p_, counts[i])));
  });
  return out;
}

std::vector<Candidate> Evaluator::to_try(std::uint64_t count, Choice* partial) const {
  if (p_.choice.fixed()) {
    partial->how = "fixed";
    return {candidates_.front()};
  }
  if (m_.policy() == SelectPolicy::kNccl) {
    const Selection s = select_nccl(*nccl_, p_.request.collective, size_of(p_, count), p_.choice,
                                    m_.model != "nccl");
    partial->how = "nccl";
    partial->nccl_pick = s.nccl_pick;
    partial->note = s.note;
    partial->candidate = s.chosen;
    return {s.chosen};
  }
  partial->how = "best";
  return candidates_;
}

Choice Evaluator::pick(std::uint64_t count, Choice ch, const std::vector<Candidate>& tried,
                       const std::vector<std::optional<Evaluation>>& evals) const {
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
    const bool one_algorithm = std::all_of(tried.begin(), tried.end(), [&](const Candidate& c) {
      return c.algorithm == tried.front().algorithm;
    });
    std::string why;
    evaluate(tried.front(), count, &why);
    if (one_algorithm && !why.empty()) throw RequestError(why);
    throw RequestError(fmt::format("--model {} can cost none of the allowed algorithms for {}",
                                   m_.model, to_string(p_.request.collective)));
  }
  const auto i =
      static_cast<std::size_t>(std::find(tried.begin(), tried.end(), best->chosen) - tried.begin());
  ch.candidate = best->chosen;
  ch.eval = *evals[i];
  return ch;
}

Choice Evaluator::choose(std::uint64_t count) const { return choose_all({count}, nullptr).front(); }

std::vector<Choice> Evaluator::choose_all(const std::vector<std::uint64_t>& counts,
                                          Progress* progress) const {
  std::vector<Choice> partial(counts.size());
  std::vector<std::vector<Candidate>> tries(counts.size());
  std::vector<std::pair<std::size_t, std::size_t>> tasks;  // (count index, candidate index)
  for (std::size_t i = 0; i < counts.size(); ++i) {
    tries[i] = to_try(counts[i], &partial[i]);
    for (std::size_t j = 0; j < tries[i].size(); ++j) tasks.emplace_back(i, j);
  }
  std::vector<std::vector<std::optional<Evaluation>>> evals(counts.size());
  std::vector<std::size_t> remaining(counts.size());
  for (std::size_t i = 0; i < counts.size(); ++i) {
    evals[i].resize(tries[i].size());
    remaining[i] = tries[i].size();
  }
  std::mutex mutex;
  parallel_for(tasks.size(), [&](std::size_t k) {
    const auto [i, j] = tasks[tasks.size() - 1 - k];  // largest sizes first
    evals[i][j] = evaluate(tries[i][j], counts[i]);
    const std::lock_guard<std::mutex> lock(mutex);
    if (--remaining[i] == 0 && progress) progress->step(human_bytes(size_of(p_, counts[i])));
  });
  std::vector<Choice> out;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    out.push_back(pick(counts[i], partial[i], tries[i], evals[i]));
  }
  return out;
}

}  // namespace collsim
