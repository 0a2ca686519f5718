// `collnet_direct` and `collnet_chain`: NCCL's CollNet AllReduce, where the InfiniBand switches
// reduce across nodes (CollNetDirect's AllGather and ReduceScatter, and NVLS's across nodes, are
// collnet_blocked.cpp's; SHARP; `src/device/all_reduce.h` CollNetDirect / CollNetChain,
// `src/graph/connect.cc` connectCollNet; docs/theory.md §1.9). The network's reduction is an
// actor of the schedule (schedule.hpp, "Switch actors", SwitchSite::kNetwork): actor ranks + j
// is the aggregation that every node's NIC j feeds, on the switch node 0's NIC j plugs into
// (a rail leaf on a rail-optimized fabric). It receives one partial sum per node, reduces them at
// its ports' rate and sends the total back to every node. A SHARP aggregation tree reduces at
// every switch level on the way up; collsim's one actor reduces at the top, so on a fabric of
// several leaves each node's partial sum crosses the spines to it (where SHARP would send one
// per leaf).
//
// collnet_direct (NVSwitch nodes; NCCL disables it elsewhere): every GPU of a node is a head
// with its own NIC. Each NCCL channel's part of the vector is cut into g blocks (g ranks per
// node); block b belongs to local rank b. Per NCCL channel, W = 2g - 1 + nodes IR channels:
//   b            up to head b:   every other GPU of the node sends its block b to head b (NCCL's
//                                scatter), which reduces them into its own and sends the node's
//                                sum to switch b; switch b reduces the nodes' sums
//   g + k        down to node k: switch b sends the total to node k's head b, into its output
//   g + nodes + d - 1, d = 1..g-1  broadcast: every head b sends its total to local rank
//                                b + d (mod g) and receives head b - d's (NCCL's
//                                directRecvCopyDirectSend to all its peers at once, then every
//                                GPU's gather)
// A lane per head, per node and per broadcast distance because a stream has one flow in flight:
// one lane for every head would let a GPU feed one head at a time, one for every node would have
// the switch send to one node at a time, one for the broadcast would have a head write to one
// peer at a time. A head broadcasts piece k once it has received it from its switch (a
// cross-channel dependency); the switch sends piece k down once it has reduced it. A broadcast
// lane runs as many pieces as the channel's largest block, so that both ends of each of its
// connections agree (a smaller block's last pieces carry nothing).
//
// collnet_chain: one head per NCCL channel, local rank c mod g (NCCL gives each channel its
// own NIC); the node's GPUs form a chain from it, head first. Per NCCL channel, W = 1 + nodes:
//   0      up:   the chain's last GPU sends its input to the one before, which adds its own
//               and passes it on, up to the head, which sends the node's sum to switch c mod g;
//               the switch reduces the nodes' sums
//   1 + k  down to node k: the switch sends the total to node k's head, which passes it down
//               the chain
// Pieces are the protocol's slice (CollNet runs Simple only). The reduction's post-op (avg) runs
// once, at the switch's last reduction (on one node, the head's).
#include <fmt/format.h>

#include <algorithm>

#include "algorithms/generators/collnet_source.hpp"
#include "topology/error.hpp"

namespace collsim::detail {

namespace {

class CollNetDirectSource final : public CollNetSource {
 public:
  using CollNetSource::CollNetSource;

  void groups(int r, int ir_channel, std::vector<Group>& out) const override {
    const int c = ir_channel / width();
    const int lane = ir_channel % width();
    const std::uint64_t piece = piece_bytes();
    const bool is_switch = r >= n_;
    if (lane < g_) {  // up to head b
      const int b = lane;
      const Span blk = block(c, b);
      if (blk.length == 0) return;
      const std::uint64_t off = bytes(blk.offset), len = bytes(blk.length);
      if (is_switch) {
        if (r - n_ == b) out.push_back(pipeline(switch_up(b, off, len), piece));
        return;
      }
      const int node = req_.comm.node_of(r);
      const int head = member(node, b);
      if (r != head) {
        out.push_back(pipeline({ops::send(head, ops::in(off), len)}, piece));
        return;
      }
      out.push_back(pipeline(head_up(node, b, off, len), piece));
      return;
    }
    if (lane < g_ + nodes_) {  // down to node k
      const int k = lane - g_;
      for (int b = 0; b < g_; ++b) {
        const Span blk = block(c, b);
        if (blk.length == 0) continue;
        const std::uint64_t off = bytes(blk.offset), len = bytes(blk.length);
        if (r == n_ + b) {
          out.push_back(pipeline({ops::send(member(k, b), ops::scratch(off), len)}, piece));
        } else if (r == member(k, b)) {
          out.push_back(pipeline({ops::recv(n_ + b, ops::out(off), len)}, piece));
        }
      }
      return;
    }
    // Broadcast at distance d: send this head's total to local rank l + d, receive l - d's.
    if (is_switch || block(c, 0).length == 0) return;
    const int d = lane - g_ - nodes_ + 1;
    const int node = req_.comm.node_of(r);
    const int l = req_.comm.local_rank(r);
    const Span mine = block(c, l);
    const int from = (l - d + g_) % g_;
    const Span theirs = block(c, from);
    Group grp = pipeline(
        {ops::send(member(node, (l + d) % g_), ops::out(bytes(mine.offset)), bytes(mine.length)),
         ops::recv(member(node, from), ops::out(bytes(theirs.offset)), bytes(theirs.length))},
        piece);
    grp.pieces = broadcast_pieces(c);
    out.push_back(std::move(grp));
  }

  std::vector<Dependency> dependencies(int rank) const override {
    std::vector<Dependency> deps;
    if (rank >= n_) {
      // Switch b sends piece k to every node once it has reduced it (nodes ops per piece).
      const int b = rank - n_;
      const auto per_piece = static_cast<std::uint64_t>(nodes_);
      for (int c = 0; c < channels_; ++c) {
        const Span blk = block(c, b);
        if (blk.length == 0) continue;
        for (int k = 0; k < nodes_; ++k) {
          for (std::uint64_t i = 0; i < pieces_of(bytes(blk.length)); ++i) {
            deps.push_back({c * width() + g_ + k, i, c * width() + b, (i + 1) * per_piece - 1});
          }
        }
      }
      return deps;
    }
    // A head broadcasts piece k once its switch has returned it: on every broadcast lane, op 2k
    // (the send of piece k) waits for op k of its node's down lane.
    const int b = req_.comm.local_rank(rank);
    const int node = req_.comm.node_of(rank);
    for (int c = 0; c < channels_; ++c) {
      const Span blk = block(c, b);
      if (blk.length == 0) continue;
      for (int d = 1; d < g_; ++d) {
        for (std::uint64_t i = 0; i < pieces_of(bytes(blk.length)); ++i) {
          deps.push_back({c * width() + g_ + nodes_ + d - 1, 2 * i, c * width() + g_ + node, i});
        }
      }
    }
    return deps;
  }

 private:
  int width() const { return 2 * g_ - 1 + nodes_; }
  // Pieces of channel c's broadcast lanes: its largest block's (block 0, split()'s first).
  std::uint64_t broadcast_pieces(int c) const { return pieces_of(bytes(block(c, 0).length)); }
  // Block b of channel c's part of the vector, in elements.
  Span block(int c, int b) const {
    const Span part = channel_span(c);
    const Span s = split(part.length, static_cast<std::uint64_t>(g_), b);
    return {part.offset + s.offset, s.length};
  }
  // Head b adds the node's other GPUs' blocks to its own and sends the node's sum to switch b.
  std::vector<Op> head_up(int node, int b, std::uint64_t off, std::uint64_t len) const {
    const int sw = n_ + b;
    if (g_ == 1) return {ops::send(sw, ops::in(off), len)};
    const BufferRef acc = ops::scratch(off);
    std::vector<Op> v;
    const int last = b == g_ - 1 ? g_ - 2 : g_ - 1;
    for (int m = 0; m < g_; ++m) {
      if (m == b) continue;
      const bool postop = nodes_ == 1 && m == last;  // one node: the node's sum is the total
      v.push_back(v.empty() ? ops::recv_reduce_copy(member(node, m), ops::in(off), acc, len, postop)
                            : ops::recv_reduce(member(node, m), acc, len, postop));
    }
    v.push_back(ops::send(sw, acc, len));
    return v;
  }
};

class CollNetChainSource final : public CollNetSource {
 public:
  using CollNetSource::CollNetSource;

  void groups(int r, int ir_channel, std::vector<Group>& out) const override {
    const int c = ir_channel / width();
    const int lane = ir_channel % width();
    const Span part = channel_span(c);
    if (part.length == 0) return;
    const std::uint64_t off = bytes(part.offset), len = bytes(part.length);
    const std::uint64_t piece = piece_bytes();
    const int h = c % g_;
    const int sw = n_ + c % switches();
    if (r >= n_) {
      if (r != sw) return;
      if (lane == 0) {
        out.push_back(pipeline(switch_up(h, off, len), piece));
      } else {
        out.push_back(pipeline({ops::send(member(lane - 1, h), ops::scratch(off), len)}, piece));
      }
      return;
    }
    const int node = req_.comm.node_of(r);
    const int pos = (req_.comm.local_rank(r) - h + g_) % g_;  // 0: the head
    const int parent = pos == 0 ? sw : at(node, h, pos - 1);
    const int child = pos + 1 < g_ ? at(node, h, pos + 1) : -1;
    if (lane == 0) {
      if (child < 0) {
        out.push_back(pipeline({ops::send(parent, ops::in(off), len)}, piece));
        return;
      }
      const BufferRef acc = ops::scratch(off);
      const bool postop = nodes_ == 1 && pos == 0;  // one node: the head's sum is the total
      out.push_back(pipeline({ops::recv_reduce_copy(child, ops::in(off), acc, len, postop),
                              ops::send(parent, acc, len)},
                             piece));
      return;
    }
    if (lane - 1 != node) return;
    std::vector<Op> t = {ops::recv(parent, ops::out(off), len)};
    if (child >= 0) t.push_back(ops::send(child, ops::out(off), len));
    out.push_back(pipeline(std::move(t), piece));
  }

  // A switch sends piece k to every node once it has reduced it (nodes ops per piece).
  std::vector<Dependency> dependencies(int rank) const override {
    std::vector<Dependency> deps;
    if (rank < n_) return deps;
    const auto per_piece = static_cast<std::uint64_t>(nodes_);
    for (int c = 0; c < channels_; ++c) {
      const Span part = channel_span(c);
      if (part.length == 0 || n_ + c % switches() != rank) continue;
      for (int k = 0; k < nodes_; ++k) {
        for (std::uint64_t i = 0; i < pieces_of(bytes(part.length)); ++i) {
          deps.push_back({c * width() + 1 + k, i, c * width(), (i + 1) * per_piece - 1});
        }
      }
    }
    return deps;
  }

 private:
  int width() const { return 1 + nodes_; }
  // One switch per head: channel c's head is local rank c mod g.
  int switches() const { return std::min(channels_, g_); }
  // The rank at position pos of node's chain from local rank h.
  int at(int node, int h, int pos) const { return member(node, (h + pos) % g_); }
};

}  // namespace

// On one node the schedule still runs (its switch returns the node's sum), as the backends'
// contract tests check; predict refuses it there, as NCCL never runs it.
void check_collnet(const Request& r, std::string_view name) {
  const int nodes = r.comm.node_count();
  const std::size_t g = r.comm.ranks_of_node(0).size();
  for (int k = 1; k < nodes; ++k) {
    if (r.comm.ranks_of_node(k).size() != g) {
      throw RequestError(fmt::format(
          "algorithm \"{}\" needs the same number of ranks on every node (node 0 has {}, node {} "
          "has {}): local rank b of every node feeds the same switch",
          name, g, k, r.comm.ranks_of_node(k).size()));
    }
  }
}

Schedule make_collnet_direct(const Request& r) {
  if (is_blocked(r.collective)) return make_collnet_direct_blocked(r);
  check_collnet(r, "collnet_direct");
  const int g = static_cast<int>(r.comm.ranks_of_node(0).size());
  ScheduleInfo info = make_info(r, (2 * g - 1 + r.comm.node_count()) * r.channels);
  for (int b = 0; b < g; ++b) {
    info.switches.push_back({r.comm.ranks_of_node(0)[static_cast<std::size_t>(b)],
                             SwitchSite::kNetwork});
  }
  return Schedule(std::move(info), std::make_shared<CollNetDirectSource>(r));
}

Schedule make_collnet_chain(const Request& r) {
  check_collnet(r, "collnet_chain");
  const int g = static_cast<int>(r.comm.ranks_of_node(0).size());
  ScheduleInfo info = make_info(r, (1 + r.comm.node_count()) * r.channels);
  for (int j = 0; j < std::min(r.channels, g); ++j) {
    info.switches.push_back(
        {r.comm.ranks_of_node(0)[static_cast<std::size_t>(j)], SwitchSite::kNetwork});
  }
  return Schedule(std::move(info), std::make_shared<CollNetChainSource>(r));
}

}  // namespace collsim::detail
