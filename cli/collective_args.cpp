#include "cli/collective_args.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "algorithms/models/nccl_model.hpp"
#include "calibrate/nccl_env.hpp"
#include "topology/error.hpp"
#include "topology/loader.hpp"

namespace collsim {

void add_collective_options(CLI::App* cmd, CollectiveArgs& a, bool with_bytes) {
  a.req.algo = "auto";
  a.req.proto = "auto";
  add_request_options(*cmd, a.req, with_bytes);
  cmd->get_option("--algo")->description(
      "auto, an algorithm from `collsim list`, or an NCCL_ALGO-style list (ring,tree  ^tree); "
      "NCCL's names are aliases: tree is NCCL's Tree (dbtree)");
  cmd->get_option("--proto")->description(
      "auto, ll, ll128, simple, or an NCCL_PROTO-style list (ll,ll128  ^ll128)");
  a.channels = cmd->get_option("--channels");
}

Prepared prepare(const CollectiveArgs& a) {
  RequestOptions o = a.req;
  const Collective c = parse_collective(o.op);
  AlgoChoice choice = parse_algo_choice(o.algo, o.proto);
  o.algo = choice.algorithms.front();
  o.proto = std::string(to_string(choice.protocols.front()));
  const bool with_bytes = !o.bytes.empty();
  if (!with_bytes) o.bytes = "0";
  Prepared p{o.load(), CostParams{}, Request{}, std::move(choice)};
  p.costs = cost_params(p.topo);
  p.request = o.request(p.topo);
  if (with_bytes && p.request.count == 0 && c != Collective::kBarrier) {
    const std::size_t elem = element_size(p.request.dtype);
    const std::uint64_t least = is_blocked(c) ? elem * p.request.comm.size() : elem;
    throw RequestError(fmt::format(
        "--bytes {}: no element to move; {} of {} needs at least {} B{}", o.bytes, to_string(c),
        to_string(p.request.dtype), least,
        is_blocked(c) ? fmt::format(" (one element per rank, {} ranks)", p.request.comm.size())
                      : ""));
  }
  if (a.channels == nullptr || a.channels->count() == 0) {
    const NcclModelInput in = nccl_model_input(p.topo, p.request.comm, NcclVersion::k2_30);
    p.request.channels = std::clamp(in.runtime_channels, 1, nccl_max_channels(kNewestNccl));
    p.nccl_channels = true;
  }
  return p;
}

PredictSetup predict_setup(const Prepared& p, const ModelArgs& m) {
  const NcclRelease release = nccl_release(m);
  PredictSetup s{p.topo, p.request, p.choice, p.costs, parse_model(m.model), m.policy(), {}};
  s.costs.line_forwarding = m.line_forwarding;
  s.nccl_channels = p.nccl_channels;
  s.release = release;
  // NCCL's channel count is the release's (its rules changed: nccl_model_input), not the newest's
  // that prepare() gave the request before --nccl-version was read.
  // NCCL_MIN/MAX_NCHANNELS and NCCL_MIN/MAX_CTAS (--env) bound it as NCCL does.
  const std::map<std::string, std::string> env = nccl_env(m);
  if (p.nccl_channels) {
    s.request.channels = nccl_env_settings(env).comm_channels(
        nccl_model_input(p.topo, p.request.comm, release).runtime_channels,
        nccl_max_channels(release));
  }
  // Where NCCL has nothing to choose from (a Barrier; --algo naming only collsim's own
  // algorithms), the default policy falls back to collsim's fastest, and the output says so
  // ("auto: the fastest by --model"); --select nccl given explicitly stays an error.
  const bool nccl_can_choose =
      p.request.collective != Collective::kBarrier &&
      std::any_of(p.choice.algorithms.begin(), p.choice.algorithms.end(),
                  [](const std::string& a) { return nccl_algo_of(a).has_value(); });
  if (s.select == SelectPolicy::kNccl && !nccl_can_choose && !m.select_given()) {
    s.select = SelectPolicy::kBest;
  }
  // NCCL's model input also carries what --env sets of NVLS (its channels and chunks), which the
  // schedules read whichever policy picks them.
  if (s.model == Model::kNccl || s.select == SelectPolicy::kNccl || !env.empty()) {
    s.nccl = nccl_input(m, p.topo, p.request.comm);
  }
  return s;
}

}  // namespace collsim
