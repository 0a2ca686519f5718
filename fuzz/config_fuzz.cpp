// The cluster YAML loader on arbitrary text: it must load or throw collsim::Error, nothing else
// (no crash, no other exception, no hang), and a loaded config's costs must apply or throw the
// same way. Clusters are capped at 2,048 GPUs (LoadOptions::max_gpus) so that each input runs in
// bounded time under the sanitizers; the cap's own error path is part of what is fuzzed.
#include <cstddef>
#include <cstdint>
#include <string>

#include "simulator/cost_params.hpp"
#include "topology/error.hpp"
#include "topology/loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    collsim::LoadOptions options;
    options.max_gpus = 2048;
    const collsim::Topology topo = collsim::parse_topology(text, "fuzz.yaml", options);
    (void)collsim::cost_params(topo);
    if (topo.rank_count() > 1 && topo.rank_count() <= 64) {
      (void)topo.route(topo.gpu_of(collsim::Rank{0}), topo.gpu_of(collsim::Rank{1}));
    }
  } catch (const collsim::Error&) {
  }
  return 0;
}
