// How many channels NCCL gives its point-to-point collectives (nccl-tests' sendrecv, alltoall,
// gather and scatter: groups of ncclSend/ncclRecv on NCCL's p2p kernel), from NCCL 2.22 on
// (src/graph/paths.cc ncclTopoComputeP2pChannels, src/enqueue.cc scheduleP2pTasksToPlan and
// calcP2pChannelCount; docs/nccl-model.md §2.4):
//  - the communicator has p2pnChannels = pow2Up(min(nChannels, MAXCHANNELS)) p2p channels;
//  - a peer may use p2pnChannelsPerPeer = pow2Up(min over peer pairs of 2 x the NVLinks between
//    them, 2 for a PCIe peer, the release's count for a network peer: 2 until 2.20, the GPU's
//    local NICs or 2 halved with the ranks from 2.21, one per 14 GB/s of its NICs from 2.29),
//    at most p2pnChannels, and from 2.29 across nodes halved until every peer fits one round;
//  - one send of b bytes starts on nChannelsMin = per-peer halved while nChannelsMin x ranks >
//    p2pnChannels, and doubles (up to the per-peer count) while its parts exceed 32 p2p chunks
//    (16 MiB on one node, NCCL_P2P_NVL_CHUNKSIZE 512 KiB); parts are at least 64 KiB, so a small
//    send fills fewer channels.
// On 8 H100 that is 4 channels up to 64 MiB, then 8, 16 and 32 at 128, 256 and 512 MiB: what
// h100x8_1node_sendrecv_xxrjun-cluster01.txt shows (81.8 GB/s at 64 MiB, 162.5 at 128 MiB).
//
//   const NcclP2p p2p = nccl_p2p_shape(topo, comm, 24);   // {32, 32} on dgx-h100
//   int ch = nccl_p2p_launched_channels(Collective::kSendRecv, p2p, comm, 64 << 20);   // 4
#pragma once

#include <algorithm>
#include <cstdint>

#include "algorithms/ir/communicator.hpp"
#include "algorithms/ir/request.hpp"
#include "algorithms/ir/types.hpp"
#include "algorithms/models/nccl_release.hpp"

namespace collsim {

class Topology;

struct NcclP2p {
  int channels = 1;  // p2pnChannels
  int per_peer = 1;  // p2pnChannelsPerPeer
};

// The communicator's p2p channels, `comm_channels` being its comm->nChannels, as `release`
// sets them (what a network peer gets changed in 2.21 and 2.29).
NcclP2p nccl_p2p_shape(const Topology& topo, const Communicator& comm, int comm_channels,
                       NcclRelease release = kNewestNccl);

// What one rank sends one peer in a p2p collective of `bytes` (nccl-tests' size): all of it for
// SendRecv, a 1/ranks block otherwise.
inline std::uint64_t nccl_p2p_peer_bytes(Collective c, std::uint64_t bytes, int ranks) {
  return c == Collective::kSendRecv ? bytes
                                    : bytes / static_cast<std::uint64_t>(std::max(1, ranks));
}

// The channels one p2p collective of `bytes` (nccl-tests' size) keeps busy: each peer's send gets
// NCCL's split of its share, and the peers a rank talks to at once (one for SendRecv, every rank
// for AllToAll and for a Gather / Scatter root) share the p2p channels.
int nccl_p2p_launched_channels(Collective c, const NcclP2p& p2p, const Communicator& comm,
                               std::uint64_t bytes);

}  // namespace collsim
