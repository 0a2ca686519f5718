#include "algorithms/ir/request.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "algorithms/generators/registry.hpp"
#include "topology/error.hpp"

namespace collsim {

std::uint64_t count_for_bytes(Collective c, Bytes size, DataType t, int ranks) {
  if (c == Collective::kBarrier) return 0;  // a barrier moves no data, whatever size it is given
  const std::uint64_t e = element_size(t);
  if (size.count() % e != 0) {
    throw RequestError(fmt::format("size {} B is not a multiple of the {} element size ({} B)",
                                   size.count(), to_string(t), e));
  }
  const std::uint64_t elements = size.count() / e;
  return is_blocked(c) ? elements / static_cast<std::uint64_t>(std::max(ranks, 1)) : elements;
}

std::uint64_t ChannelSplit::offset(int channel) const {
  if (channel <= 0) return 0;
  const std::uint64_t before_last = lo + mid * static_cast<std::uint64_t>(mids);
  if (channel > mids) return before_last;
  return lo + mid * static_cast<std::uint64_t>(channel - 1);
}

std::uint64_t ChannelSplit::length(int channel) const {
  if (channel == 0) return lo;
  if (channel <= mids) return mid;
  return channel == mids + 1 ? hi : 0;
}

ChannelSplit ChannelSplit::scaled_to(std::uint64_t to) const {
  const std::uint64_t from = total();
  if (empty() || from == 0) return {};
  auto scale = [&](std::uint64_t part) {
    return static_cast<std::uint64_t>(static_cast<long double>(part) * to / from);
  };
  ChannelSplit s{scale(lo), mids != 0 ? scale(mid) : 0, 0, mids};
  const std::uint64_t before_last = s.lo + s.mid * static_cast<std::uint64_t>(mids);
  if (before_last > to || (hi != 0 && before_last == to) || s.lo == 0 ||
      (mids != 0 && s.mid == 0)) {
    return {};
  }
  if (hi != 0) {
    s.hi = to - before_last;
  } else {
    s.lo += to - before_last;  // no last part: channel 0 takes the rounding
  }
  return s;
}

bool on_nccl_p2p_kernel(const Request& r) {
  return r.algorithm == "direct" && is_nccl_p2p(r.collective);
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

namespace {

// NCCL's Tree with LL128 shrinks its chunk until every channel has enough chunks in flight to
// fill the tree's pipeline (`src/enqueue.cc` calcCollChunking, the NCCL_ALGO_TREE /
// NCCL_PROTO_LL128 branch, unchanged from 2.12 to 2.29): with nsteps = 1 + log2(nodes) +
// 0.1 x ranks-per-node, the 576000-byte chunk halves while bytes / (channels x chunk) <
// nsteps x 64 / ppn (down to 131072 B), then while < nsteps x 16 / ppn (down to 32768 B),
// and is rounded down to LL128's grain (a warp's 32 x 8 lines of 120 data bytes: 1920 B).
// Without it a 16 MiB tree AllReduce on 4 nodes moved each channel's data as one piece, store
// and forward down a 20-hop tree, and was predicted 2.5x slower than measured.
std::uint64_t tree_ll128_chunk(const Request& r, std::uint64_t chunk) {
  const int nodes = std::max(1, r.comm.node_count());
  const double ppn = static_cast<double>(r.comm.size()) / nodes;
  int log2_nodes = 0;
  while ((2 << log2_nodes) <= nodes) ++log2_nodes;
  const double nsteps = 1 + log2_nodes + 0.1 * ppn;
  const std::uint64_t bytes = request_bytes(r).count();
  const std::uint64_t channels = static_cast<std::uint64_t>(std::max(1, r.channels));
  auto chunks = [&] { return static_cast<double>(bytes / (channels * chunk)); };
  while (chunks() < nsteps * 64 / ppn && chunk > 131072) chunk /= 2;
  while (chunks() < nsteps * 16 / ppn && chunk > 32768) chunk /= 2;
  constexpr std::uint64_t kGrain = 1920;
  return std::max(kGrain, chunk / kGrain * kGrain);
}

// NVLS and NVLSTree cut finer than Simple's 512 KiB slot (`src/enqueue.cc` calcCollChunking):
// at most comm->nvlsChunkSize (NCCL_NVLS_CHUNKSIZE, 128 KiB), NVLSTree at most
// comm->nvlsTreeMaxChunkSize (64 KiB on 4 nodes or more unless Blackwell's tuning sets it), and
// smaller while the size gives each of the channels x heads (nvls_heads) concurrent operations few
// chunks.
std::uint64_t nvls_chunk(const Request& r, std::uint64_t chunk, bool tree) {
  const std::uint64_t bytes = request_bytes(r).count();
  const int nodes = std::max(1, r.comm.node_count());
  const std::uint64_t heads =
      static_cast<std::uint64_t>(std::max(1, nvls_heads(r.comm.size() / nodes)));
  const std::uint64_t ops = static_cast<std::uint64_t>(std::max(1, r.channels)) * heads;
  auto below = [&](std::uint64_t times, std::uint64_t above, std::uint64_t to) {
    if (bytes < times * ops * chunk && chunk > above) chunk = to;
  };
  if (tree) {
    // NVLSTree starts from the NVLS chunk itself, not Simple's step.
    const std::uint64_t most = r.nvls_tree_max_chunk != 0
                                   ? r.nvls_tree_max_chunk
                                   : (nodes >= 4 ? std::uint64_t{65536} : r.nvls_chunk_bytes);
    chunk = std::min(r.nvls_chunk_bytes, most);
    below(32, 262144, 262144);
    below(16, 131072, 131072);
    below(4, 65536, 65536);
    below(1, 32768, 32768);
  } else {
    chunk = std::min(chunk, r.nvls_chunk_bytes);
    if (nodes > 1 && r.nvls_across_max_chunk != 0) chunk = std::min(chunk, r.nvls_across_max_chunk);
    below(64, 65536, 65536);
    below(8, 32768, 32768);
    below(2, 16384, 16384);
  }
  return chunk;
}

// PAT's chunk (`src/enqueue.cc` calcCollChunking, NCCL 2.23+): Simple's 512 KiB step halves, down
// to 64 KiB, while the size gives each channel fewer than 32 chunks (AllGather) or 16
// (ReduceScatter).
std::uint64_t pat_chunk(const Request& r, std::uint64_t chunk) {
  const std::uint64_t bytes = request_bytes(r).count();
  const std::uint64_t channels = static_cast<std::uint64_t>(std::max(1, r.channels));
  const std::uint64_t per = r.collective == Collective::kAllGather ? 32 : 16;
  while (chunk * channels * per > bytes && chunk > 65536) chunk /= 2;
  return chunk;
}

// CollNet's chunk (`src/enqueue.cc` calcCollChunking): Simple's step, at most 256 KiB for the
// chain, halved (to 128, 64, then 32 KiB at least) while the size gives each of the concurrent
// operations (channels, times heads for direct) fewer than 64, 8 and then 8 (direct) or 1
// (chain) chunks per pipeline stage. NCCL's depth is 2 for direct (a head receives and sends
// on) and the ranks per node for the chain (`src/graph/connect.cc`).
std::uint64_t collnet_chunk(const Request& r, std::uint64_t chunk, bool direct) {
  const std::uint64_t bytes = request_bytes(r).count();
  const int nodes = std::max(1, r.comm.node_count());
  const auto ppn = static_cast<std::uint64_t>(std::max(1, r.comm.size() / nodes));
  const std::uint64_t ops =
      static_cast<std::uint64_t>(std::max(1, r.channels)) * (direct ? ppn : 1);
  const std::uint64_t depth = direct ? (ppn > 1 ? 2 : 1) : ppn;
  if (!direct) chunk = std::min<std::uint64_t>(chunk, 262144);
  auto chunks = [&] { return bytes / (ops * chunk); };
  while (chunks() < depth * 64 && chunk > 131072) chunk /= 2;
  while (chunks() < depth * 8 && chunk > 65536) chunk /= 2;
  while (chunks() < (direct ? depth * 8 : depth) && chunk > 32768) chunk /= 2;
  return chunk;
}

}  // namespace

Chunking chunking(const Request& r) {
  Chunking k = default_chunking(r.algorithm, r.collective, r.protocol, r.dtype);
  const std::uint64_t e = element_size(r.dtype);
  const AlgorithmInfo* a = find_algorithm_or_null(r.algorithm);
  if (a != nullptr && a->family == Family::kTree && r.protocol == Protocol::kLL128) {
    k.chunk_bytes = std::max(e, tree_ll128_chunk(r, k.chunk_bytes) / e * e);
  }
  if (a != nullptr && is_nvls(a->family) && r.protocol == Protocol::kSimple) {
    const bool tree = a->family == Family::kNvlsTree;
    k.chunk_bytes = std::max(e, nvls_chunk(r, k.chunk_bytes, tree) / e * e);
  }
  if (a != nullptr && a->family == Family::kPat) {
    k.chunk_bytes = std::max(e, pat_chunk(r, k.chunk_bytes) / e * e);
  }
  if (a != nullptr && is_collnet(a->family)) {
    const bool direct = a->family == Family::kCollNetDirect;
    k.chunk_bytes = std::max(e, collnet_chunk(r, k.chunk_bytes, direct) / e * e);
  }
  if (r.chunk_bytes != 0) k.chunk_bytes = std::max(e, r.chunk_bytes / e * e);
  if (r.slices > 0) k.slices = r.slices;
  return k;
}

}  // namespace collsim
