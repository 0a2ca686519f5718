// Restated from NCCL's `src/enqueue.cc` (topoGetAlgoInfo; addCBDCollToPlan and
// computeCollAlignCount at v2.20.3; scheduleCollTasksToPlan at v2.22.3, v2.23.4, v2.26.2 and
// v2.29.2) and `src/graph/tuning.cc` (maxThreads, threadThresholds).
#include "algorithms/models/nccl_channels.hpp"

#include <algorithm>
#include <optional>

#include "algorithms/models/nccl_model.hpp"
#include "algorithms/models/selection.hpp"

namespace collsim {

namespace {

using u64 = std::uint64_t;

u64 div_up(u64 a, u64 b) { return (a + b - 1) / b; }
u64 round_up(u64 a, u64 b) { return div_up(a, b) * b; }

constexpr int kWarp = 32;
constexpr int kMaxThreads = 640;  // NCCL_MAX_NTHREADS

// The split that gives `channels` parts of `per` elements and the rest of `count` to the last.
ChannelSplit equal_parts(u64 count, u64 per) {
  const u64 channels = div_up(count, per);
  if (channels <= 1) return {count, 0, 0, 0};
  return {per, channels > 2 ? per : 0, count - per * (channels - 1),
          static_cast<int>(channels - 2)};
}

// 2.20 and 2.21: the vector's 1/usable per channel, 16-byte aligned, rounded up to the
// protocol's alignment in elements (computeCollAlignCount: NCCL_SIMPLE_ALIGNMENT 4096 B,
// NCCL_LL128_ALIGNMENT_PER_WARP 480 B, NCCL_LL_ALIGNMENT_PER_THREAD 8 B).
ChannelSplit aligned_parts(const Request& r, const NcclLaunch& l, int comm_channels) {
  const u64 elem = element_size(r.dtype);
  const u64 usable = static_cast<u64>(std::max(1, std::min(comm_channels, l.channels)));
  const u64 per_channel = round_up(div_up(r.count * elem, usable), 16);
  const u64 threads = static_cast<u64>(std::max(kWarp, l.threads));
  u64 align = 1;
  if (r.protocol == Protocol::kSimple) align = 4096 / elem;
  if (r.protocol == Protocol::kLL128) align = 480 / elem * (threads / kWarp);
  if (r.protocol == Protocol::kLL) align = std::max<u64>(1, 8 / elem) * threads;
  const u64 per = std::min(round_up(div_up(per_channel, elem), std::max<u64>(1, align)), r.count);
  return equal_parts(r.count, per);
}

// From 2.22: by traffic, in cells (scheduleCollTasksToPlan, the branch for a task that is not
// CollNet, with channelId 0 and no traffic before it: a collective issued alone).
ChannelSplit traffic_parts(NcclRelease v, const Request& r, const NcclLaunch& l,
                           int comm_channels) {
  const u64 elem = element_size(r.dtype);
  const int ranks = std::max(1, r.comm.size());
  // ncclFuncTrafficPerByte.
  u64 per_byte = 1;
  if (r.collective == Collective::kAllReduce) per_byte = 2;
  if (r.collective == Collective::kAllGather || r.collective == Collective::kReduceScatter) {
    per_byte = static_cast<u64>(ranks);
  }
  // From 2.26 LL's traffic counts four times (its lines carry half data, half flags), both the
  // collective's (ncclPrepareTasks) and a cell's below.
  const bool ll4 = r.protocol == Protocol::kLL && v.at_least(26);
  const u64 traffic = r.count * elem * per_byte * (ll4 ? 4 : 1);
  const u64 max_channels = static_cast<u64>(std::max(1, comm_channels));
  const u64 nc = std::min<u64>(static_cast<u64>(std::max(1, l.channels)), max_channels);
  u64 per_channel = 0;  // trafficPerChannel
  u64 cell = 16;        // cellSize
  u64 cell_per_byte = per_byte;
  if (!v.at_least(23)) {
    constexpr u64 kMinTraffic = 512;
    per_channel = std::max(kMinTraffic, traffic / nc);
  } else {
    const u64 min_traffic = v.at_least(29) ? u64{32} << 10 : u64{16} << 10;
    const u64 total = std::max(min_traffic, traffic);
    per_channel = v.at_least(29) ? round_up(total / nc, 16) : std::max(min_traffic, total / nc);
    if (ll4) cell_per_byte *= 4;
    cell = round_up(div_up(min_traffic, cell_per_byte), 16);
  }
  const u64 per_cell = cell / elem;  // elementsPerCell
  const u64 cells = div_up(r.count * elem, cell);
  const u64 cell_traffic = cell * cell_per_byte;
  u64 cells_per_channel = std::min(cells, div_up(per_channel, cell_traffic));
  u64 lo = cells;
  if (max_channels > 1) {
    lo = std::min(cells,
                  v.at_least(23) ? div_up(per_channel, cell_traffic) : per_channel / cell_traffic);
  }
  u64 mids = (cells - lo) / std::max<u64>(1, cells_per_channel);
  u64 hi = (cells - lo) % std::max<u64>(1, cells_per_channel);
  if ((lo > 0 ? 1 : 0) + mids + (hi > 0 ? 1 : 0) > max_channels) {
    // More than the communicator has: the middle channels grow and the last takes the rest.
    // (A collective issued alone, on n <= comm->nChannels, rarely gets here: its parts are a
    // whole number of cells of at least the 1/n share, so they fill at most n channels. It is
    // for the collectives that follow others in one plan.)
    mids = max_channels - 2;
    cells_per_channel = (cells - lo) / (mids + 1);
    hi = cells_per_channel + (cells - lo) % (mids + 1);
  }
  if (hi == 0 && mids != 0) {
    hi = cells_per_channel;
    --mids;
  }
  if (lo == 0) {
    // NCCL skips channel 0 and starts at channel 1; collsim numbers the channels with work from
    // 0 (only AllGather or ReduceScatter on more than 32 ranks in 2.22 get here).
    if (mids == 0) {
      lo = hi;
      hi = 0;
    } else {
      lo = cells_per_channel;
      --mids;
    }
  }
  ChannelSplit s;
  s.lo = lo * per_cell;
  s.mid = mids != 0 ? cells_per_channel * per_cell : 0;
  s.mids = static_cast<int>(mids);
  s.hi = hi * per_cell;
  // The last cell is not full: it is the last channel's (or the only one's).
  (s.hi != 0 ? s.hi : s.lo) -= cells * per_cell - r.count;
  return s;
}

}  // namespace

int nccl_ring_simple_threads(double ring_bw_intra, int ring_graph_channels) {
  constexpr double kPciBw = 12.0;  // PCI_BW, src/graph/topo.h: "PCI Gen3 x16"
  return ring_bw_intra * ring_graph_channels <= kPciBw ? 256 : kNcclSimpleThreads;
}

NcclLaunch nccl_launch(std::string_view algorithm, Protocol p, int ranks, std::uint64_t bytes,
                       int comm_channels, NcclRelease v, int ring_simple_threads) {
  const std::optional<NcclAlgo> a = nccl_algo_of(algorithm);
  NcclLaunch l{std::max(1, comm_channels), kMaxThreads};
  // NVLS and NVLSTree run on comm->nvlsChannels whatever the size (its NCCL_NVLS_NCHANNELS, 16
  // by default, `src/transport/nvls.cc`); CollNet has its own rule, which collsim does not
  // restate.
  if (!a || (*a != NcclAlgo::kRing && *a != NcclAlgo::kTree && *a != NcclAlgo::kPat)) return l;
  // PAT has no maxThreads entry (tuning.cc sets none, the communicator's table starts zeroed),
  // so NCCL's loops below never shrink it (`nBytes < nc * 0 * threshold`): every channel of the
  // communicator, all NCCL_MAX_NTHREADS threads (src/enqueue.cc topoGetAlgoInfo, 2.23 to 2.30).
  // The division among them (nccl_channels) still gives a small one few channels.
  if (*a == NcclAlgo::kPat) return l;
  // maxThreads and threadThresholds (`src/graph/tuning.cc`): LL 512 threads of 8 B each (the
  // ranks times that for Ring), LL128 640 of 8 B, Simple 512 of 64 B (Ring's 256 on a ring PCIe
  // bounds, never below getNthreads' minimum of 2 warps).
  u64 threads = p == Protocol::kSimple && *a == NcclAlgo::kRing
                    ? static_cast<u64>(std::max(2 * kWarp, ring_simple_threads))
                    : kNcclSimpleThreads;
  u64 per_thread = 64;
  if (p == Protocol::kLL) {
    per_thread = 8 * static_cast<u64>(*a == NcclAlgo::kRing ? std::max(1, ranks) : 1);
  } else if (p == Protocol::kLL128) {
    threads = 640;
    per_thread = 8;
  }
  u64 nc = static_cast<u64>(l.channels);
  while (nc > 1 && bytes < nc * threads * per_thread) --nc;
  while (bytes < nc * threads * per_thread && threads % 128 == 0) threads /= 2;
  if (p == Protocol::kSimple) threads += *a == NcclAlgo::kRing ? kWarp : 4 * kWarp;
  threads = std::max<u64>(threads, 3 * kWarp);
  // From 2.22 Tree runs all of NCCL_MAX_NTHREADS whatever the size.
  if (*a == NcclAlgo::kTree && v.at_least(22)) threads = kMaxThreads;
  l.channels = static_cast<int>(nc);
  l.threads = static_cast<int>(threads);
  return l;
}

int nccl_launched_channels(std::string_view algorithm, Protocol p, int ranks, std::uint64_t bytes,
                           int comm_channels, NcclRelease v, int ring_simple_threads) {
  return nccl_launch(algorithm, p, ranks, bytes, comm_channels, v, ring_simple_threads).channels;
}

NcclChannels nccl_channels(NcclRelease v, const Request& r, const NcclLaunch& l,
                           int comm_channels) {
  NcclChannels out{l.channels, {}};
  const std::optional<NcclAlgo> a = nccl_algo_of(r.algorithm);
  // NVLS across nodes is scheduled as CollNet (enqueue.cc: isCollnet for NVLS when nNodes > 1),
  // its channels taking equal parts, as CollNet's do.
  const bool nvls_across = a == NcclAlgo::kNvls && r.comm.node_count() > 1;
  const bool divided = a && !nvls_across &&
                       (*a == NcclAlgo::kRing || *a == NcclAlgo::kTree || *a == NcclAlgo::kPat ||
                        is_nvls_family(*a));
  if (!divided || r.count == 0 || !v.at_least(20)) return out;
  out.split =
      v.at_least(22) ? traffic_parts(v, r, l, comm_channels) : aligned_parts(r, l, comm_channels);
  out.channels = out.split.channels();
  return out;
}

int nccl_nvls_channels(NcclRelease v, const NvlsShape& s) {
  if (s.sm < 100 || !v.at_least(25)) return kNcclNvlsChannels;
  if (!v.at_least(27)) return 32;
  if (s.domains <= 1) return 24;
  if (!v.at_least(30)) return 32;
  if (s.domains == 2 && s.net_GBps >= 48) return 32;
  if (s.net_GBps >= 96) return s.ppn <= 8 ? 24 : 32;
  if (s.net_GBps >= 48) return 24;
  return 32;
}

NvlsChunks nccl_nvls_chunks(NcclRelease v, const NvlsShape& s) {
  constexpr std::uint64_t k64 = 65536, k128 = 131072, k256 = 262144;
  NvlsChunks c;
  if (s.sm < 100 || s.domains <= 1 || !v.at_least(30)) return c;
  if (s.domains == 2 && s.net_GBps >= 48) {
    c.tree_max = k128;
    if (s.ppn <= 4) {
      c.chunk = c.tree_max = k256;
    } else if (s.ppn >= 16 || (s.ppn <= 8 && s.nic_near && s.net_GBps < 96)) {
      c.tree_max = k64;
    }
  } else if (s.net_GBps >= 96) {
    if (s.ppn <= 8) {
      c.chunk = c.tree_max = k256;
    } else {
      c.tree_max = s.ppn < 32 ? k128 : k64;
    }
  } else if (s.net_GBps >= 48) {
    c.tree_max = s.nic_near ? k64 : k128;
  }
  return c;
}

void nccl_schedule_channels(Request& r, const NcclCommChannels& comm) {
  r.split = {};
  r.nvls_chunk_bytes = comm.nvls_chunks.chunk;
  r.nvls_tree_max_chunk = comm.nvls_chunks.tree_max;
  r.nvls_across_max_chunk = comm.nvls_chunks.across_max;
  // One rank runs no algorithm and no channel: NCCL copies the buffer (enqueue.cc, nRanks == 1:
  // ncclLaunchOneRank, a cudaMemcpyAsync, or for avg a kernel of at most 32 blocks), one copy
  // through the GPU's memory (docs/gpu.md: 1.50 TB/s on an H100).
  if (r.comm.size() == 1) {
    r.channels = 1;
    return;
  }
  const std::uint64_t bytes = request_bytes(r).count();
  if (on_nccl_p2p_kernel(r)) {
    r.channels = nccl_p2p_launched_channels(r.collective, comm.p2p, r.comm, bytes);
    return;
  }
  const std::optional<NcclAlgo> a = nccl_algo_of(r.algorithm);
  int channels = a && is_nvls_family(*a) ? comm.nvls_channels : comm.channels;
  // NVLS across nodes (with CollNet) runs on no more than the communicator's channels from 2.28
  // (src/enqueue.cc topoGetAlgoInfo).
  if (a == NcclAlgo::kNvls && r.comm.node_count() > 1 && comm.release.at_least(28)) {
    channels = std::min(channels, comm.channels);
  }
  const NcclLaunch l = nccl_launch(r.algorithm, r.protocol, r.comm.size(), bytes, channels,
                                   comm.release, comm.ring_simple_threads);
  const NcclChannels c = nccl_channels(comm.release, r, l, channels);
  r.channels = c.channels;
  r.split = c.split;
}

}  // namespace collsim
