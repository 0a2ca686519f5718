#include "cli/collective_args.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "algorithms/nccl_model.hpp"
#include "topology/error.hpp"
#include "topology/loader.hpp"

namespace collsim {

void add_collective_options(CLI::App* cmd, CollectiveArgs& a) {
  a.req.algo = "auto";
  a.req.proto = "auto";
  add_request_options(*cmd, a.req);
  a.channels = cmd->get_option("--channels");
}

Prepared prepare(const CollectiveArgs& a) {
  RequestOptions o = a.req;
  const bool proto_auto = o.proto == "auto";
  if (proto_auto) o.proto = "simple";
  std::string note;
  if (o.algo == "auto") {
    const Collective c = parse_collective(o.op);
    o.algo = c == Collective::kAllToAll || c == Collective::kGather || c == Collective::kScatter ||
                     c == Collective::kSendRecv
                 ? "direct"
             : c == Collective::kBarrier ? "binomial"
                                         : "ring";
    note = fmt::format("auto: {} until algorithm selection arrives (issue 5)", o.algo);
  }
  Prepared p{o.load(), Request{}, note, proto_auto};
  p.request = o.request(p.topo);
  if (a.channels == nullptr || a.channels->count() == 0) {
    const NcclModelInput in = nccl_model_input(p.topo, p.request.comm, NcclVersion::k2_30);
    p.request.channels = std::clamp(in.runtime_channels, 1, 64);
  }
  return p;
}

SimOptions sim_options(const Prepared& p, SimNetwork network) {
  SimOptions o;
  o.network = network;
  for (int r = 0; r < p.request.comm.size(); ++r) o.placement.push_back(p.request.comm.gpu(r));
  return o;
}

}  // namespace collsim
