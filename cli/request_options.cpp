#include "cli/request_options.hpp"

#include <fmt/format.h>

#include "algorithms/ir/communicator.hpp"
#include "cli/option_checks.hpp"
#include "simulator/cost_params.hpp"
#include "topology/error.hpp"
#include "topology/loader.hpp"

namespace collsim {

Topology load_cluster(const std::string& config, std::optional<int> nodes,
                      const std::vector<std::string>& cost_files, bool default_costs,
                      const std::string& routing) {
  std::optional<Routing> route;
  if (!routing.empty()) {
    route = routing == "ecmp"       ? Routing::kEcmp
            : routing == "adaptive" ? Routing::kAdaptive
                                    : Routing::kDmodK;
  }
  // Every costs: mapping, the config's own included, is read and checked at load.
  return load_topology(config, LoadOptions{nodes, cost_files, default_costs, route});
}

void add_nodes_option(CLI::App& cmd, std::optional<int>& nodes) {
  cmd.add_option("--nodes", nodes,
                 "override the node count of a templated config (at most 1048576 nodes and "
                 "1048576 GPUs)")
      ->check(CLI::Range(1, static_cast<int>(LoadOptions::kMaxGpus)));
}

void add_costs_option(CLI::App& cmd, std::vector<std::string>& cost_files) {
  cmd.add_option("--costs", cost_files,
                 "calibration overlay(s) from `collsim calibrate`, layered over CONFIG's costs");
}

Topology RequestOptions::load() const {
  Topology topo = load_cluster(config, nodes, cost_files, false, routing);
  faults.apply(topo);
  return topo;
}

Request RequestOptions::request(const Topology& topo) const {
  Request r;
  r.collective = parse_collective(op);
  r.algorithm = algo;
  r.protocol = parse_protocol(proto);
  r.dtype = parse_data_type(dtype);
  r.redop = parse_reduce_op(redop);
  r.channels = channels;
  r.root = root;
  r.comm = Communicator::from_topology(topo);
  Bytes size;
  try {
    size = parse_bytes(bytes);
  } catch (const UnitError& e) {
    throw RequestError(fmt::format("--bytes: {}", e.what()));
  }
  r.count = count_for_bytes(r.collective, size, r.dtype, r.comm.size());
  r.host = host;
  return r;
}

void add_request_options(CLI::App& cmd, RequestOptions& opts, bool with_bytes) {
  cmd.add_option("CONFIG", opts.config, "YAML file or preset name (see configs/)")->required();
  cmd.add_option("--op", opts.op,
                 "collective: allreduce allgather reducescatter broadcast reduce gather scatter "
                 "alltoall barrier sendrecv")
      ->required();
  if (with_bytes) {
    cmd.add_option("--bytes", opts.bytes,
                   "size as nccl-tests' size column: 1048576, 64M (x1024), 64MiB, 64MB (x1000)")
        ->required();
  }
  cmd.add_option("--algo", opts.algo, "algorithm (see `collsim list`)")->capture_default_str();
  cmd.add_option("--proto", opts.proto, "protocol: ll, ll128 or simple")->capture_default_str();
  cmd.add_option("--channels", opts.channels,
                 "channels (NCCL's nChannels); default: the count NCCL would run on this cluster "
                 "(24 on dgx-h100)")
      ->check(CLI::Range(1, 1024));
  cmd.add_option("--dtype", opts.dtype,
                 "data type: f16 bf16 f32 f64 f8e4m3 f8e5m2 i8 u8 i32 u32 i64 u64")
      ->capture_default_str();
  cmd.add_option("--redop", opts.redop, "reduction: sum prod min max avg")->capture_default_str();
  cmd.add_option("--root", opts.root, "root rank (broadcast, reduce, gather, scatter)")
      ->check(non_negative_int())
      ->capture_default_str();
  cmd.add_option("--gpus-per-thread", opts.host.gpus_per_thread,
                 "GPUs one host thread drives, as nccl-tests -g: each iteration takes at least "
                 "this many collective launches (default 1: one process per GPU)")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  cmd.add_flag("--cuda-graph", opts.host.graph,
               "the iterations run from a CUDA graph, as nccl-tests -G: no host launch per "
               "iteration");
  add_nodes_option(cmd, opts.nodes);
  cmd.add_option("--routing", opts.routing,
                 "override the fabric's routing: dmodk, ecmp or adaptive (fat_tree and "
                 "rail_optimized networks)")
      ->check(CLI::IsMember({"dmodk", "ecmp", "adaptive"}));
  add_costs_option(cmd, opts.cost_files);
  add_fault_options(cmd, opts.faults);
}

}  // namespace collsim
