#include "algorithms/ir/request.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "algorithms/generators/registry.hpp"
#include "topology/error.hpp"

namespace collsim {

std::uint64_t count_for_bytes(Collective c, Bytes size, DataType t, int ranks) {
  const std::uint64_t e = element_size(t);
  if (size.count() % e != 0) {
    throw RequestError(fmt::format("size {} B is not a multiple of the {} element size ({} B)",
                                   size.count(), to_string(t), e));
  }
  const std::uint64_t elements = size.count() / e;
  return is_blocked(c) ? elements / static_cast<std::uint64_t>(std::max(ranks, 1)) : elements;
}

Bytes request_bytes(const Request& r) {
  std::uint64_t b = r.count * element_size(r.dtype);
  if (is_blocked(r.collective)) b *= static_cast<std::uint64_t>(r.comm.size());
  if (r.collective == Collective::kBarrier) b = 0;
  return Bytes(b);
}

Chunking default_chunking(std::string_view algorithm, Collective c, Protocol p, DataType t) {
  const ProtocolGeometry& g = geometry(p);
  Chunking k{g.slot_payload, 1};
  const AlgorithmInfo* a = find_algorithm_or_null(algorithm);
  const bool ring_steps = a != nullptr && a->family == Family::kRing && p == Protocol::kSimple &&
                          (c == Collective::kAllReduce || c == Collective::kAllGather ||
                           c == Collective::kReduceScatter);
  if (ring_steps) {
    k.chunk_bytes = g.slot_payload * 4;  // chunkSteps = NCCL_STEPS / 2
    k.slices = 2;                        // chunkSteps / sliceSteps = 4 / 2
  }
  const std::uint64_t e = element_size(t);
  k.chunk_bytes = std::max(e, k.chunk_bytes / e * e);
  return k;
}

Chunking chunking(const Request& r) {
  Chunking k = default_chunking(r.algorithm, r.collective, r.protocol, r.dtype);
  const std::uint64_t e = element_size(r.dtype);
  if (r.chunk_bytes != 0) k.chunk_bytes = std::max(e, r.chunk_bytes / e * e);
  if (r.slices > 0) k.slices = r.slices;
  return k;
}

}  // namespace collsim
