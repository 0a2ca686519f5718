// `collnet_direct` and `collnet_chain`: NCCL's CollNet AllReduce, where the InfiniBand switches
// reduce across nodes (CollNetDirect's AllGather and ReduceScatter, and NVLS's across nodes,
// further down; SHARP; `src/device/all_reduce.h` CollNetDirect / CollNetChain,
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

#include "algorithms/generators/group_source.hpp"
#include "topology/error.hpp"

namespace collsim::detail {

namespace {

// What both CollNet schedules share: nodes of g ranks each, in-network sums.
class CollNetSource : public GroupSource {
 public:
  explicit CollNetSource(Request r)
      : GroupSource(std::move(r)),
        nodes_(req_.comm.node_count()),
        g_(static_cast<int>(req_.comm.ranks_of_node(0).size())) {}

  std::uint64_t buffer_bytes(int rank, BufferKind buffer) const override {
    if (rank < n_) return GeneratedSource::buffer_bytes(rank, buffer);
    return buffer == BufferKind::kScratch ? bytes(vector_elems()) : 0;
  }

 protected:
  // A GPU's scratch holds the partial sum it sends on (a head's or a chain member's).
  std::uint64_t scratch_elems(int /*rank*/) const override { return vector_elems(); }
  // The whole vector: AllReduce's count, or every rank's block of AllGather / ReduceScatter.
  std::uint64_t vector_elems() const {
    return is_blocked(req_.collective) ? static_cast<std::uint64_t>(n_) * req_.count : req_.count;
  }

  int member(int node, int i) const {
    return req_.comm.ranks_of_node(node)[static_cast<std::size_t>(i)];
  }
  // The switch's up templates for a region: node 0's sum, then every other node's, reducing;
  // the last reduction is the whole sum's and applies the post-op.
  std::vector<Op> switch_up(int local, std::uint64_t off, std::uint64_t len) const {
    const BufferRef acc = ops::scratch(off);
    std::vector<Op> v = {ops::recv(member(0, local), acc, len)};
    for (int k = 1; k < nodes_; ++k) {
      v.push_back(ops::recv_reduce(member(k, local), acc, len, k == nodes_ - 1));
    }
    return v;
  }

  int nodes_;
  int g_;  // ranks per node
};

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

// CollNetDirect's AllGather and ReduceScatter (NCCL 2.23+, with the SHARP plugin's iallgather /
// ireducescatter; `src/device/all_gather.h`, `reduce_scatter.h` RunWorkColl COLLNET_DIRECT): GPU
// r of every node is the head of rail r, and aggregation r gathers or reduce-scatters the rail's
// blocks across the nodes. Block (k, r) is the block of node k's local rank r; each NCCL
// channel takes its part of every block (channel_span).
//   AllGather, W = 1 + nodes + (g - 1) IR channels per NCCL channel:
//     0          up: every GPU sends its block to its rail's aggregation, which keeps them all
//     1 + k      down to node k: aggregation r sends every node's rail-r block to node k's GPU r,
//                into its output
//     1 + nodes + d - 1, d = 1..g-1  broadcast: GPU r sends the rail-r blocks it received to local
//                rank r + d (mod g) and receives rail r - d's from local rank r - d, a block
//                sent, a block received
//   ReduceScatter, W = g + nodes:
//     b          up to head b: every other GPU of the node sends head b its input's blocks of rail
//                b (every node's), which head b adds to its own and sends to aggregation b;
//                aggregation b adds up the nodes' sums of each block
//     g + k      down to node k: aggregation b sends block (k, b)'s total to node k's GPU b, into
//                its output
// Lanes per node and per broadcast distance for the reasons the AllReduce has them. A piece of
// a down lane waits for the aggregation's piece of that block, a broadcast send for the piece's
// arrival from the network (cross-channel dependencies).
class CollNetDirectBlockedSource final : public CollNetSource {
 public:
  using CollNetSource::CollNetSource;

  void groups(int r, int ir_channel, std::vector<Group>& out) const override {
    const int c = ir_channel / width();
    const int lane = ir_channel % width();
    const Span part = channel_span(c);
    if (part.length == 0) return;
    const std::uint64_t len = bytes(part.length);
    const std::uint64_t piece = piece_bytes();
    if (gathers()) return gather_groups(r, lane, part, len, piece, out);
    const bool is_switch = r >= n_;
    if (lane < g_) {  // up to head b
      const int b = lane;
      if (is_switch) {
        if (r - n_ != b) return;
        std::vector<Op> v;
        for (int j = 0; j < nodes_; ++j) {
          const BufferRef acc = ops::scratch(offset(j, b, part));
          v.push_back(ops::recv(member(0, b), acc, len));
          for (int k = 1; k < nodes_; ++k) {
            v.push_back(ops::recv_reduce(member(k, b), acc, len, k == nodes_ - 1));
          }
        }
        out.push_back(pipeline(std::move(v), piece));
        return;
      }
      const int node = req_.comm.node_of(r);
      const int head = member(node, b);
      std::vector<Op> v;
      for (int j = 0; j < nodes_; ++j) {
        const std::uint64_t off = offset(j, b, part);
        if (r != head) {
          v.push_back(ops::send(head, ops::in(off), len));
          continue;
        }
        if (g_ == 1) {
          v.push_back(ops::send(n_ + b, ops::in(off), len));
          continue;
        }
        // Own input and every other GPU's block, then on to the aggregation. One node: the
        // node's sum is the total (the post-op's place).
        const BufferRef acc = ops::scratch(off);
        const int last = b == g_ - 1 ? g_ - 2 : g_ - 1;
        bool first = true;
        for (int m = 0; m < g_; ++m) {
          if (m == b) continue;
          const bool postop = nodes_ == 1 && m == last;
          v.push_back(first ? ops::recv_reduce_copy(member(node, m), ops::in(off), acc, len, postop)
                            : ops::recv_reduce(member(node, m), acc, len, postop));
          first = false;
        }
        v.push_back(ops::send(n_ + b, acc, len));
      }
      out.push_back(pipeline(std::move(v), piece));
      return;
    }
    const int k = lane - g_;  // down to node k
    for (int b = 0; b < g_; ++b) {
      if (r == n_ + b) {
        out.push_back(
            pipeline({ops::send(member(k, b), ops::scratch(offset(k, b, part)), len)}, piece));
      } else if (r == member(k, b)) {
        out.push_back(pipeline({ops::recv(n_ + b, ops::out(bytes(part.offset)), len)}, piece));
      }
    }
  }

  std::vector<Dependency> dependencies(int rank) const override {
    std::vector<Dependency> deps;
    for (int c = 0; c < channels_; ++c) {
      const Span part = channel_span(c);
      if (part.length == 0) continue;
      const std::uint64_t pieces = pieces_of(bytes(part.length));
      const auto nodes = static_cast<std::uint64_t>(nodes_);
      const int base = c * width();
      if (rank >= n_) {
        // Down to node k, piece i: the aggregation's piece i of node k's block (AllGather: op
        // i·nodes + j of the up lane for block j; ReduceScatter: the last reduction of block k).
        const int b = rank - n_;
        for (int k = 0; k < nodes_; ++k) {
          const int down = base + (gathers() ? 1 + k : g_ + k);
          for (std::uint64_t i = 0; i < pieces; ++i) {
            if (gathers()) {
              for (std::uint64_t j = 0; j < nodes; ++j) {
                deps.push_back({down, i * nodes + j, base, i * nodes + j});
              }
            } else {
              const std::uint64_t k64 = static_cast<std::uint64_t>(k);
              deps.push_back({down, i, base + b, i * nodes * nodes + k64 * nodes + nodes - 1});
            }
          }
        }
        continue;
      }
      if (!gathers()) continue;
      // AllGather: a GPU broadcasts piece i of block j once the network has returned it.
      const int node = req_.comm.node_of(rank);
      for (int d = 1; d < g_; ++d) {
        for (std::uint64_t i = 0; i < pieces; ++i) {
          for (std::uint64_t j = 0; j < nodes; ++j) {
            deps.push_back(
                {base + nodes_ + d, i * 2 * nodes + 2 * j, base + 1 + node, i * nodes + j});
          }
        }
      }
    }
    return deps;
  }

 private:
  bool gathers() const { return req_.collective == Collective::kAllGather; }
  int width() const { return nodes_ + g_; }  // either collective's (above)
  // Bytes from the start of the blocked vector to channel part `part` of block (node k, rail r).
  std::uint64_t offset(int k, int r, Span part) const {
    return bytes(static_cast<std::uint64_t>(member(k, r)) * req_.count + part.offset);
  }

  void gather_groups(int r, int lane, Span part, std::uint64_t len, std::uint64_t piece,
                     std::vector<Group>& out) const {
    if (r >= n_) {
      if (lane > nodes_) return;  // the broadcast is the GPUs'
      const int rail = r - n_;
      std::vector<Op> v;
      for (int j = 0; j < nodes_; ++j) {
        const BufferRef slot = ops::scratch(offset(j, rail, part));
        v.push_back(lane == 0 ? ops::recv(member(j, rail), slot, len)
                              : ops::send(member(lane - 1, rail), slot, len));
      }
      out.push_back(pipeline(std::move(v), piece));
      return;
    }
    const int node = req_.comm.node_of(r);
    const int l = req_.comm.local_rank(r);
    if (lane == 0) {
      out.push_back(pipeline({ops::send(n_ + l, ops::in(bytes(part.offset)), len)}, piece));
      return;
    }
    if (lane <= nodes_) {
      if (lane - 1 != node) return;
      std::vector<Op> v;
      for (int j = 0; j < nodes_; ++j) {
        v.push_back(ops::recv(n_ + l, ops::out(offset(j, l, part)), len));
      }
      out.push_back(pipeline(std::move(v), piece));
      return;
    }
    const int d = lane - nodes_;
    const int to = (l + d) % g_;
    const int from = (l - d + g_) % g_;
    // Each send followed by its receive, as the AllReduce's broadcast: a GPU that sent every
    // node's block before receiving any would, with more nodes than FIFO slots, wait on a
    // peer that waits on it.
    std::vector<Op> v;
    for (int j = 0; j < nodes_; ++j) {
      v.push_back(ops::send(member(node, to), ops::out(offset(j, l, part)), len));
      v.push_back(ops::recv(member(node, from), ops::out(offset(j, from, part)), len));
    }
    out.push_back(pipeline(std::move(v), piece));
  }
};

// NVLS's AllGather and ReduceScatter across nodes (NCCL 2.27+, with the SHARP plugin's
// iallgather / ireducescatter; `src/device/all_gather.h`, `reduce_scatter.h` RunWorkColl NVLS
// without oneNode): rail r's SHARP group gathers or reduce-scatters the rail's blocks across the
// nodes as collnet_direct's, and inside each node the NVSwitch multicasts (AllGather) or reduces
// (ReduceScatter) in place of the GPUs' copies. Actors: the ranks, node k's NVSwitch (ranks + k),
// then rail r's aggregation (ranks + nodes + r).
//   AllGather, W = 2 + nodes + g IR channels per NCCL channel:
//     0          up: every GPU sends its block to its rail's aggregation
//     1 + k      down to node k: aggregation r sends every node's rail-r block to node k's GPU r
//     1 + nodes  to the switch: GPU r stores those blocks to the multicast address
//     2 + nodes + m  multicast: the switch sends every rail's blocks to member m, into its output
//   ReduceScatter, W = 1 + g + nodes:
//     0          up: every GPU sends the switch every block of its input; the switch reduces
//                each across the node's GPUs
//     1 + r      head r: the switch hands rail r's node sums to GPU r, which sends them to
//                aggregation r; the aggregation reduces each block across the nodes
//     1 + g + k  down to node k: aggregation r sends block (k, r)'s total to node k's GPU r
// A piece moves on once it has arrived (cross-channel dependencies).
class NvlsSharpBlockedSource final : public CollNetSource {
 public:
  using CollNetSource::CollNetSource;

  void groups(int r, int ir_channel, std::vector<Group>& out) const override {
    const int c = ir_channel / width();
    const int lane = ir_channel % width();
    const Span part = channel_span(c);
    if (part.length == 0) return;
    const std::uint64_t len = bytes(part.length);
    const std::uint64_t piece = piece_bytes();
    std::vector<Op> v;
    if (gathers()) {
      gather_ops(r, lane, part, len, v);
    } else {
      scatter_ops(r, lane, part, len, v);
    }
    if (!v.empty()) out.push_back(pipeline(std::move(v), piece));
  }

  std::vector<Dependency> dependencies(int rank) const override {
    std::vector<Dependency> deps;
    const auto nodes = static_cast<std::uint64_t>(nodes_);
    const auto g = static_cast<std::uint64_t>(g_);
    for (int c = 0; c < channels_; ++c) {
      const Span part = channel_span(c);
      if (part.length == 0) continue;
      const std::uint64_t pieces = pieces_of(bytes(part.length));
      const int base = c * width();
      if (rank >= n_ + nodes_) {  // aggregation: down piece i once it has all of it
        for (int k = 0; k < nodes_; ++k) {
          for (std::uint64_t i = 0; i < pieces; ++i) {
            if (gathers()) {
              for (std::uint64_t j = 0; j < nodes; ++j) {
                deps.push_back({base + 1 + k, i * nodes + j, base, i * nodes + j});
              }
            } else {
              const int rail = rank - n_ - nodes_;
              const auto k64 = static_cast<std::uint64_t>(k);
              deps.push_back({base + 1 + g_ + k, i, base + 1 + rail,
                              i * nodes * nodes + k64 * nodes + nodes - 1});
            }
          }
        }
      } else if (rank >= n_) {  // a node's switch
        if (gathers()) {
          // Multicast piece i of (rail r, block j) once GPU r has stored it.
          for (int m = 0; m < g_; ++m) {
            for (std::uint64_t i = 0; i < pieces; ++i) {
              for (std::uint64_t t = 0; t < g * nodes; ++t) {
                deps.push_back({base + 2 + nodes_ + m, i * g * nodes + t, base + 1 + nodes_,
                                i * g * nodes + t});
              }
            }
          }
        } else {
          // Hand head r piece i of block j once every GPU's is reduced into it.
          for (int rail = 0; rail < g_; ++rail) {
            const auto r64 = static_cast<std::uint64_t>(rail);
            for (std::uint64_t i = 0; i < pieces; ++i) {
              for (std::uint64_t j = 0; j < nodes; ++j) {
                deps.push_back({base + 1 + rail, i * nodes + j, base,
                                i * g * nodes * g + (r64 * nodes + j) * g + g - 1});
              }
            }
          }
        }
      } else {
        const int node = req_.comm.node_of(rank);
        if (gathers()) {
          // Store piece i of block j to the switch once the network has returned it.
          for (std::uint64_t i = 0; i < pieces; ++i) {
            for (std::uint64_t j = 0; j < nodes; ++j) {
              deps.push_back({base + 1 + nodes_, i * nodes + j, base + 1 + node, i * nodes + j});
            }
          }
        }
        // ReduceScatter: a head's send to the aggregation follows its receive on the same lane.
      }
    }
    return deps;
  }

 private:
  bool gathers() const { return req_.collective == Collective::kAllGather; }
  int width() const { return gathers() ? 2 + nodes_ + g_ : 1 + g_ + nodes_; }
  int nvswitch(int node) const { return n_ + node; }
  int aggregation(int rail) const { return n_ + nodes_ + rail; }
  std::uint64_t offset(int k, int r, Span part) const {
    return bytes(static_cast<std::uint64_t>(member(k, r)) * req_.count + part.offset);
  }

  void gather_ops(int r, int lane, Span part, std::uint64_t len, std::vector<Op>& v) const {
    if (r >= n_ + nodes_) {  // aggregation of `rail`
      const int rail = r - n_ - nodes_;
      if (lane > nodes_) return;
      for (int j = 0; j < nodes_; ++j) {
        const BufferRef slot = ops::scratch(offset(j, rail, part));
        v.push_back(lane == 0 ? ops::recv(member(j, rail), slot, len)
                              : ops::send(member(lane - 1, rail), slot, len));
      }
      return;
    }
    if (r >= n_) {  // node k's switch
      const int k = r - n_;
      if (lane == 1 + nodes_) {
        for (int rail = 0; rail < g_; ++rail) {
          for (int j = 0; j < nodes_; ++j) {
            v.push_back(ops::recv(member(k, rail), ops::scratch(offset(j, rail, part)), len));
          }
        }
      } else if (lane >= 2 + nodes_) {
        const int m = lane - 2 - nodes_;
        for (int rail = 0; rail < g_; ++rail) {
          for (int j = 0; j < nodes_; ++j) {
            v.push_back(ops::send(member(k, m), ops::scratch(offset(j, rail, part)), len));
          }
        }
      }
      return;
    }
    const int node = req_.comm.node_of(r);
    const int l = req_.comm.local_rank(r);
    if (lane == 0) {
      v.push_back(ops::send(aggregation(l), ops::in(bytes(part.offset)), len));
    } else if (lane == 1 + node) {
      for (int j = 0; j < nodes_; ++j) {
        v.push_back(ops::recv(aggregation(l), ops::scratch(offset(j, l, part)), len));
      }
    } else if (lane == 1 + nodes_) {
      for (int j = 0; j < nodes_; ++j) {
        v.push_back(ops::send(nvswitch(node), ops::scratch(offset(j, l, part)), len));
      }
    } else if (lane == 2 + nodes_ + l) {
      for (int rail = 0; rail < g_; ++rail) {
        for (int j = 0; j < nodes_; ++j) {
          v.push_back(ops::recv(nvswitch(node), ops::out(offset(j, rail, part)), len));
        }
      }
    }
  }

  void scatter_ops(int r, int lane, Span part, std::uint64_t len, std::vector<Op>& v) const {
    if (r >= n_ + nodes_) {  // aggregation of `rail`
      const int rail = r - n_ - nodes_;
      if (lane == 1 + rail) {
        for (int j = 0; j < nodes_; ++j) {
          const BufferRef acc = ops::scratch(offset(j, rail, part));
          v.push_back(ops::recv(member(0, rail), acc, len));
          for (int k = 1; k < nodes_; ++k) {
            v.push_back(ops::recv_reduce(member(k, rail), acc, len, k == nodes_ - 1));
          }
        }
      } else if (lane > g_) {
        const int k = lane - 1 - g_;
        v.push_back(ops::send(member(k, rail), ops::scratch(offset(k, rail, part)), len));
      }
      return;
    }
    if (r >= n_) {  // node k's switch
      const int k = r - n_;
      if (lane == 0) {
        for (int rail = 0; rail < g_; ++rail) {
          for (int j = 0; j < nodes_; ++j) {
            const BufferRef acc = ops::scratch(offset(j, rail, part));
            v.push_back(ops::recv(member(k, 0), acc, len));
            for (int m = 1; m < g_; ++m) v.push_back(ops::recv_reduce(member(k, m), acc, len));
          }
        }
      } else if (lane <= g_) {
        const int rail = lane - 1;
        for (int j = 0; j < nodes_; ++j) {
          v.push_back(ops::send(member(k, rail), ops::scratch(offset(j, rail, part)), len));
        }
      }
      return;
    }
    const int node = req_.comm.node_of(r);
    const int l = req_.comm.local_rank(r);
    if (lane == 0) {
      for (int rail = 0; rail < g_; ++rail) {
        for (int j = 0; j < nodes_; ++j) {
          v.push_back(ops::send(nvswitch(node), ops::in(offset(j, rail, part)), len));
        }
      }
    } else if (lane == 1 + l) {
      for (int j = 0; j < nodes_; ++j) {
        const BufferRef acc = ops::scratch(offset(j, l, part));
        v.push_back(ops::recv(nvswitch(node), acc, len));
        v.push_back(ops::send(aggregation(l), acc, len));
      }
    } else if (lane == 1 + g_ + node) {
      v.push_back(ops::recv(aggregation(l), ops::out(bytes(part.offset)), len));
    }
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

}  // namespace

Schedule make_collnet_direct(const Request& r) {
  check_collnet(r, "collnet_direct");
  const int g = static_cast<int>(r.comm.ranks_of_node(0).size());
  const int nodes = r.comm.node_count();
  const bool blocked = is_blocked(r.collective);
  // AllReduce 2g - 1 + nodes lanes per NCCL channel; AllGather and ReduceScatter g + nodes.
  ScheduleInfo info = make_info(r, ((blocked ? g : 2 * g - 1) + nodes) * r.channels);
  for (int b = 0; b < g; ++b) {
    info.switches.push_back({r.comm.ranks_of_node(0)[static_cast<std::size_t>(b)],
                             SwitchSite::kNetwork});
  }
  if (blocked) {
    return Schedule(std::move(info), std::make_shared<CollNetDirectBlockedSource>(r));
  }
  return Schedule(std::move(info), std::make_shared<CollNetDirectSource>(r));
}

Schedule make_nvls_sharp_blocked(const Request& r) {
  check_collnet(r, "nvls");
  const int g = static_cast<int>(r.comm.ranks_of_node(0).size());
  const int nodes = r.comm.node_count();
  const int width = r.collective == Collective::kAllGather ? 2 + nodes + g : 1 + g + nodes;
  ScheduleInfo info = make_info(r, width * r.channels);
  for (int k = 0; k < nodes; ++k) {
    info.switches.push_back({r.comm.ranks_of_node(k)[0], SwitchSite::kNvSwitch});
  }
  for (int b = 0; b < g; ++b) {
    info.switches.push_back(
        {r.comm.ranks_of_node(0)[static_cast<std::size_t>(b)], SwitchSite::kNetwork});
  }
  return Schedule(std::move(info), std::make_shared<NvlsSharpBlockedSource>(r));
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
