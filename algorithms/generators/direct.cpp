// `direct`: every pair talks directly (docs/theory.md §1.2: pairwise exchange, (p-1)α + (p-1)/p·nβ
// for AllToAll; linear Gather/Scatter, (p-1)α + (p-1)/p·nβ with the root's link the bottleneck;
// NCCL runs AllToAll, Gather and Scatter the same way, as p2p send/recv pairs,
// `src/enqueue.cc`, docs/nccl-model.md §1.1 item 4).
//  AllToAll, AllGather: in round s = 1..p-1 rank r sends to r+s and receives from r-s
//    (MPICH's (rank ± i) pairing), the two advancing piece by piece, so no pair ever waits on
//    full FIFOs in both directions; the own block is a local copy.
//  Gather / Scatter: the root receives from / sends to every other rank in turn (rank root+1
//    first).
//  SendRecv: rank r sends its input to r+1 and receives r-1's into its output (a ring shift,
//    as nccl-tests' sendrecv test does), the send and the receive on two lanes of each NCCL
//    channel: NCCL's p2p kernel gives a channel's send and its receive their own warps, which
//    run at once (src/device/sendrecv.h: the CTA's warps split between the send and the recv
//    of its work), so a send waits only for its FIFO credits, never for the receive beside it.
//    A send and the receive that matches it share a lane (IR channel), and a rank's two lanes
//    differ: rank r sends on lane r mod 2, and with an odd number of ranks the last sends on a
//    third lane, so that rank 0 receives on a lane other than its own send's.
#include "algorithms/generators/group_source.hpp"

namespace collsim::detail {

namespace {

// IR channels (lanes) a NCCL channel of make_direct(r) takes: SendRecv's send and receive lanes,
// 2 (3 for an odd number of ranks, above); 1 otherwise.
int direct_lanes(const Request& r) {
  if (r.collective != Collective::kSendRecv) return 1;
  const int n = r.comm.size();
  return n == 1 ? 1 : n % 2 == 0 ? 2 : 3;
}

class DirectSource final : public GroupSource {
 public:
  using GroupSource::GroupSource;

  // Channels differ only in their span's offset: the same ops, peers and pieces wherever the
  // spans are as long. Answered without building the groups, which an all-to-all of N ranks has
  // N of per channel (the channel fold asks for every rank and channel).
  bool same_shape(int r, int a, int b, std::vector<std::int32_t>& peers) const override {
    if (lane(a) != lane(b)) return false;
    const std::uint64_t length = channel_span(request_channel(a)).length;
    if (length != channel_span(request_channel(b)).length) return false;
    if (length > 0 && (width() == 1 || lane(a) == send_lane(r))) append_send_peers(r, peers);
    return true;
  }

  // What the groups below hold, counted without building them (schedule validation counts every
  // stream's ops).
  std::uint64_t op_count(int r, int ir) const override {
    const std::uint64_t length = channel_span(request_channel(ir)).length;
    if (length == 0) return 0;
    const std::uint64_t pieces = pieces_of(bytes(length));
    const auto others = static_cast<std::uint64_t>(n_ - 1);
    switch (req_.collective) {
      case Collective::kAllToAll:
      case Collective::kAllGather:
        return 1 + others * 2 * pieces;
      case Collective::kGather:
        return r != req_.root ? pieces : 1 + others * pieces;
      case Collective::kScatter:
        return r != req_.root ? pieces : others * pieces + 1;
      default:  // SendRecv: the send's or the receive's lane, or one rank's copy
        if (n_ == 1) return lane(ir) == 0 ? 1 : 0;
        return lane(ir) == send_lane(r) || lane(ir) == recv_lane(r) ? pieces : 0;
    }
  }

  void groups(int r, int ir, std::vector<Group>& out) const override {
    const Span span = channel_span(request_channel(ir));
    if (span.length == 0) return;
    const std::uint64_t len = bytes(span.length);
    auto at = [&](int block) { return bytes(block * req_.count + span.offset); };
    const std::uint64_t own = bytes(span.offset);
    const std::uint64_t piece = piece_bytes();
    switch (req_.collective) {
      case Collective::kAllToAll:
      case Collective::kAllGather: {
        const bool a2a = req_.collective == Collective::kAllToAll;
        out.push_back(whole({ops::copy(ops::in(a2a ? at(r) : own), ops::out(at(r)), len)}));
        for (int s = 1; s < n_; ++s) {
          const int to = (r + s) % n_;
          const int from = (r - s + n_) % n_;
          out.push_back(pipeline({ops::send(to, ops::in(a2a ? at(to) : own), len),
                                  ops::recv(from, ops::out(at(from)), len)},
                                 piece));
        }
        break;
      }
      case Collective::kGather:
        if (r != req_.root) {
          out.push_back(pipeline({ops::send(req_.root, ops::in(own), len)}, piece));
          break;
        }
        out.push_back(whole({ops::copy(ops::in(own), ops::out(at(r)), len)}));
        for (int s = 1; s < n_; ++s) {
          const int from = (r + s) % n_;
          out.push_back(pipeline({ops::recv(from, ops::out(at(from)), len)}, piece));
        }
        break;
      case Collective::kScatter:
        if (r != req_.root) {
          out.push_back(pipeline({ops::recv(req_.root, ops::out(own), len)}, piece));
          break;
        }
        for (int s = 1; s < n_; ++s) {
          const int to = (r + s) % n_;
          out.push_back(pipeline({ops::send(to, ops::in(at(to)), len)}, piece));
        }
        out.push_back(whole({ops::copy(ops::in(at(r)), ops::out(own), len)}));
        break;
      default:  // SendRecv
        if (n_ == 1) {
          if (lane(ir) == 0) out.push_back(whole({ops::copy(ops::in(own), ops::out(own), len)}));
          break;
        }
        if (lane(ir) == send_lane(r)) {
          out.push_back(pipeline({ops::send((r + 1) % n_, ops::in(own), len)}, piece));
        } else if (lane(ir) == recv_lane(r)) {
          out.push_back(pipeline({ops::recv((r - 1 + n_) % n_, ops::out(own), len)}, piece));
        }
        break;
    }
  }

 private:
  // IR channels per NCCL channel: SendRecv's lanes (direct_lanes), one otherwise.
  int width() const { return direct_lanes(req_); }
  int request_channel(int ir) const { return ir / width(); }
  int lane(int ir) const { return ir % width(); }
  // The lane rank r's SendRecv send takes (and r + 1's receive): r mod 2, the last of an odd
  // number of ranks a third.
  int send_lane(int r) const { return n_ % 2 == 1 && r == n_ - 1 && n_ > 1 ? 2 : r % 2; }
  // The lane rank r's SendRecv receive takes: its sender's, r - 1's.
  int recv_lane(int r) const { return send_lane((r - 1 + n_) % n_); }

  // The ranks `r` sends to on a channel with data, in the order its groups send (groups()).
  void append_send_peers(int r, std::vector<std::int32_t>& peers) const {
    switch (req_.collective) {
      case Collective::kAllToAll:
      case Collective::kAllGather:
        for (int s = 1; s < n_; ++s) add_peer((r + s) % n_, peers);
        break;
      case Collective::kGather:
        if (r != req_.root) add_peer(req_.root, peers);
        break;
      case Collective::kScatter:
        if (r != req_.root) break;
        for (int s = 1; s < n_; ++s) add_peer((r + s) % n_, peers);
        break;
      default:  // SendRecv
        if (n_ > 1) add_peer((r + 1) % n_, peers);
        break;
    }
  }
};

}  // namespace

std::uint64_t direct_pairs(const Request& r) {
  if (r.collective != Collective::kAllToAll && r.collective != Collective::kAllGather) return 0;
  const auto n = static_cast<std::uint64_t>(r.comm.size());
  return n * (n - 1);
}

Schedule make_direct(const Request& r) {
  return Schedule(make_info(r, direct_lanes(r) * r.channels), std::make_shared<DirectSource>(r));
}

}  // namespace collsim::detail
