// The channels NCCL runs one collective on, and how much of the vector each one moves, release
// by release (docs/nccl-model.md §2.3; `src/enqueue.cc` at each tag named below).
//
//   NcclLaunch l = nccl_launch("dbtree", Protocol::kLL, 16, 65536, 32, parse_nccl_release("2.26"));
//   // l.channels == 16: topoGetAlgoInfo's count, l.threads == 640
//   NcclChannels c = nccl_channels(release, request, l, 32);
//   // 2.26: c.channels == 16, c.split == {4 KiB of f32 on each}; 2.24: 8 channels of 8 KiB
//
// Two steps, as NCCL takes them:
//  1. topoGetAlgoInfo (every release): starting from comm->nChannels, one channel fewer while
//     the size gives each thread of each channel less than its threshold (bytes per thread: LL 8,
//     times the ranks for Ring; LL128 8; Simple 64), then half the threads (in whole 128s) while
//     one channel still gives too little; NVLS and NVLSTree take comm->nvlsChannels whatever the
//     size. NCCL_MIN_CTAS and NCCL_MIN_NCHANNELS raise comm->nChannels only: a small collective
//     still runs on fewer (`src/graph/connect.cc`, the loop has no floor).
//  2. How the vector is divided among channels, which NCCL rewrote four times:
//     - up to 2.19: every one of those channels takes a near-equal part (the kernel strides
//       over them);
//     - 2.20, 2.21 (addCBDCollToPlan): parts of the vector's 1/n, rounded up to the protocol's
//       alignment (Simple 4096 B, LL 8 B a thread, LL128 480 B a warp); the last channel takes
//       what is left, so fewer channels may get work;
//     - from 2.22 (scheduleCollTasksToPlan): by traffic (twice the bytes for AllReduce, the
//       ranks times the block for AllGather and ReduceScatter, the bytes otherwise) in whole
//       cells, at least MinTrafficPerChannel of traffic to a channel: 512 B in 2.22, 16 KiB from
//       2.23, 32 KiB from 2.29, where the traffic per channel is the total's 1/n rounded to 16 B
//       rather than raised to the minimum; from 2.26 LL's traffic counts four times, the
//       collective's and a cell's, so its cells are a quarter as large and its minimum part a
//       quarter as many bytes. Channel 0 takes the first part, the next ones equal middle parts,
//       the last what remains (where that would need more than comm->nChannels, the middle
//       parts grow to fit). The minimum leaves fewer channels with work than step 1's n at
//       small sizes.
//     CollNet, and NVLS across nodes (which NCCL schedules as CollNet), keep step 1's channels
//     with equal parts; point-to-point collectives have their own rule (nccl_p2p.hpp).
#pragma once

#include <cstdint>
#include <string_view>

#include "algorithms/ir/request.hpp"
#include "algorithms/ir/types.hpp"
#include "algorithms/models/nccl_p2p.hpp"
#include "algorithms/models/nccl_release.hpp"

namespace collsim {

struct NcclLaunch {
  int channels = 1;  // topoGetAlgoInfo's nMaxChannels for the collective
  int threads = 0;   // its threads per channel (nWarps x 32), as the division in 2.20-2.21 uses
};

// comm->maxThreads[Ring][Simple] by default: 512 (NCCL_SIMPLE_MAX_NTHREADS), or 256 where the
// ring graph's bwIntra x nChannels is at most PCI_BW, 12 GB/s (src/graph/tuning.cc
// simpleDefaultThreads, every release from 2.7 to 2.30): a ring PCIe bounds.
inline constexpr int kNcclSimpleThreads = 512;
int nccl_ring_simple_threads(double ring_bw_intra, int ring_graph_channels);

// Step 1 for a Ring, Tree, PAT, NVLS or NVLSTree collective of `bytes` (nccl-tests' size) on
// `ranks` ranks of a communicator with `comm_channels` channels (comm->nvlsChannels for NVLS and
// NVLSTree), whose Ring/Simple runs `ring_simple_threads` (nccl_ring_simple_threads). Any other
// algorithm keeps `comm_channels`.
NcclLaunch nccl_launch(std::string_view algorithm, Protocol p, int ranks, std::uint64_t bytes,
                       int comm_channels, NcclRelease v = kNewestNccl,
                       int ring_simple_threads = kNcclSimpleThreads);

// Step 1's channel count alone.
int nccl_launched_channels(std::string_view algorithm, Protocol p, int ranks, std::uint64_t bytes,
                           int comm_channels, NcclRelease v = kNewestNccl,
                           int ring_simple_threads = kNcclSimpleThreads);

struct NcclChannels {
  int channels = 1;    // channels with work
  ChannelSplit split;  // their parts; empty where they are near-equal
};

// Step 2 for request `r` (collective, protocol, dtype, count, ranks), launched as `l`, on a
// communicator of `comm_channels` (comm->nvlsChannels for NVLS and NVLSTree).
NcclChannels nccl_channels(NcclRelease v, const Request& r, const NcclLaunch& l, int comm_channels);

// NCCL_NVLS_NCHANNELS's default on Hopper (`src/transport/nvls.cc`: 16 up to 2.24, then
// NVLS_NCHANNELS_SM90); Blackwell's follow nccl_nvls_channels.
inline constexpr int kNcclNvlsChannels = 16;

// What NCCL's NVLS channel count depends on, besides the release.
struct NvlsShape {
  int sm = 90;           // the GPUs' compute capability x10 (the lowest)
  int domains = 1;       // NVLink domains the communicator spans (nodes, or NVL72 racks)
  int ppn = 1;           // ranks per domain (the fewest)
  double net_GBps = 0;   // one head's network rate as NCCL rates it (400 Gb/s: 50)
  bool nic_near = true;  // a GPU reaches its NIC through PCIe switches only (PATH_PXB or closer)
};

// comm->nvlsChannels before NCCL_MIN/MAX_CTAS (`src/transport/nvls.cc` at each tag):
//  - Hopper, every release: 16;
//  - Blackwell: 16 up to 2.24 (one default for all); 32 in 2.25 and 2.26 (NVLS_NCHANNELS_SM100);
//    from 2.27 24 within one NVLink domain (NVLS_NCHANNELS_SM100_NVL: one node, or an MNNVL
//    clique holding every rank) and 32 across domains;
//  - from 2.30, Blackwell across domains (ncclNvlsTreeSm100Tuning): 32 on two domains with at
//    least 48 GB/s of network a head; else with 96 GB/s or more, 24 up to 8 ranks a domain and
//    32 above; else with 48 GB/s or more, 24; below that 32.
int nccl_nvls_channels(NcclRelease v, const NvlsShape& s);

// comm->nvlsChunkSize and comm->nvlsTreeMaxChunkSize (0: NCCL's fallback, 64 KiB on 4 nodes or
// more, else the chunk). NCCL_NVLS_CHUNKSIZE's 128 KiB and the fallback, except Blackwell across
// NVLink domains from 2.30 (ncclNvlsTreeSm100Tuning, `src/transport/nvls.cc` v2.30.4):
//  - two domains, 48 GB/s or more a head: 128 KiB and a tree cap of 128 KiB; 256 KiB and 256 KiB
//    with 4 ranks a domain or fewer; the cap 64 KiB with 16 or more, or with 8 or fewer whose
//    NIC is near (PATH_PXB) below 96 GB/s;
//  - else 96 GB/s or more: 256 KiB and 256 KiB up to 8 ranks a domain, else 128 KiB and a cap of
//    128 KiB (64 KiB from 32 ranks a domain);
//  - else 48 GB/s or more: 128 KiB, the cap 128 KiB (64 KiB with the NIC near);
//  - else 128 KiB and the fallback.
struct NvlsChunks {
  std::uint64_t chunk = 131072;
  std::uint64_t tree_max = 0;
  // NVLS across nodes (with CollNet) takes at most this (0: the chunk): 32 KiB where NCCL's model
  // gives its AllReduce less than 150 GB/s (src/enqueue.cc calcCollChunking, 2.19 to 2.30;
  // NcclModelInput::nvls_across_max_chunk).
  std::uint64_t across_max = 0;
};
NvlsChunks nccl_nvls_chunks(NcclRelease v, const NvlsShape& s);

// The communicator a collective runs on, as far as its channels go.
struct NcclCommChannels {
  int channels = 1;  // comm->nChannels (NCCL_MIN/MAX_NCHANNELS and _CTAS applied)
  // comm->nvlsChannels: NCCL_NVLS_NCHANNELS within NCCL_MIN/MAX_CTAS.
  int nvls_channels = kNcclNvlsChannels;
  NvlsChunks nvls_chunks;  // comm->nvlsChunkSize and nvlsTreeMaxChunkSize
  NcclP2p p2p;  // its point-to-point channels (nccl_p2p.hpp)
  NcclRelease release = kNewestNccl;
  int ring_simple_threads = kNcclSimpleThreads;  // nccl_ring_simple_threads
};

// Sets r.channels and r.split to what NCCL runs `r` on at its size: one rank runs no channel
// (NCCL copies the buffer), a `direct` AllToAll, Gather, Scatter or SendRecv the p2p rule
// (nccl_p2p_launched_channels), every other collective the two steps above.
void nccl_schedule_channels(Request& r, const NcclCommChannels& comm);

}  // namespace collsim
