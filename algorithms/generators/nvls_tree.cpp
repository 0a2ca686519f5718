// `nvls_tree`: NCCL's NVLSTree AllReduce, NVLink SHARP inside each node and a tree between the
// nodes (`src/device/all_reduce.h` runTreeSplit for NVLS_TREE, `src/graph/connect.cc`
// connectNvls; docs/theory.md §1.8). What NCCL runs for a multi-node AllReduce on NVSwitch gen 3+
// nodes without CollNet, and how it beats a ring over the same NICs: each node's switch reduces
// the node's data, so only one copy of it crosses the network, up and down a tree whose members
// are the nodes.
//
// Actors: the ranks, then one switch per node (actor ranks + k is node k's NVSwitch). Each NCCL
// channel's part of the vector is cut into g blocks (g ranks per node); block b belongs to the
// node's local rank b, its head, which drives the network for it (on its own NIC, as NCCL gives
// each NVLS head its own NIC). Block b of channel c runs over the nodes on NCCL's binary tree
// when b + c is even and on the complementary tree when odd, so that every head is interior in
// one tree and a leaf in the other about equally often (the double binary tree's balance,
// docs/nccl-model.md §2.2).
// IR channels of NCCL channel c, W = 1 + 3g of them, at c x W +
//   0          up:        every GPU sends every block to its switch, which reduces them
//   1 + b      tree up:   the switch hands block b to its head; the head reduces its child
//                         heads' partial sums into it and sends the sum to its parent head
//   1 + g + b  tree down: the head receives the total from its parent (the root has it),
//                         passes it to its child heads and gives it to its switch
//   1 + 2g + m multicast: the switch sends every block to member m, piece by piece in turn
// A lane per head and per member, because a stream's sends leave one after another: one lane for
// all heads would let one NIC work at a time, one for all members would multicast serially.
// Pieces are the protocol's slice (NVLS runs Simple only). The switch hands piece k of block b to
// the head once it has reduced it, multicasts piece k once the head has returned it, and a root
// head starts down with piece k once its up is done with it (cross-channel dependencies).
// On one node there is no tree: the head returns the switch's sum, as nvls but for one more
// hop. The reduction's post-op (avg) runs once, at the last reduction of the whole sum: the root
// head's last child, or on one node the switch's last member.
//
// `nvls` across nodes (NCCL's NVLS AllReduce with CollNet, `src/device/all_reduce.h` RunWorkColl
// NVLS when the work is not oneNode; NVLS + SHARP) is the same inside each node, with the
// InfiniBand switches in place of the tree: head b hands its node's sum of block b to the
// aggregation every node's head b feeds (an actor per head, after the NVSwitches: actor
// ranks + nodes + b, on the switch node 0's NIC b plugs into, as collnet_direct's), which reduces
// the nodes' sums and sends the total back to every node's head b. NCCL's head does this with
// two warp groups, one reducing through the switch and sending to the network, one receiving
// from it and storing to the multicast address. W = 1 + 3g + nodes IR channels:
//   1 + b      head up:    the switch hands block b to its head, which sends it to aggregation b;
//                          aggregation b receives every node's, reducing (its last reduction
//                          applies the post-op)
//   1 + g + b  head return: the head gives the total to its switch (once it has it)
//   1 + 2g + m multicast, as above
//   1 + 3g + k down to node k: aggregation b sends the total of block b to node k's head b
// A lane per node for the aggregation's sends, for the reason collnet_direct has them.
#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "algorithms/generators/group_source.hpp"
#include "topology/error.hpp"

namespace collsim::detail {

namespace {

// How the nodes' sums meet: NVLSTree's tree of heads, or NVLS's in-network aggregation (SHARP).
enum class Across { kTree, kSharp };

class NvlsTreeSource final : public GroupSource {
 public:
  NvlsTreeSource(Request r, Across across)
      : GroupSource(std::move(r)),
        across_(across),
        nodes_(req_.comm.node_count()),
        g_(static_cast<int>(req_.comm.ranks_of_node(0).size())) {}

  std::uint64_t buffer_bytes(int rank, BufferKind buffer) const override {
    if (rank < n_) return GeneratedSource::buffer_bytes(rank, buffer);
    return buffer == BufferKind::kScratch ? 2 * bytes(req_.count) : 0;
  }

  void groups(int r, int ir_channel, std::vector<Group>& out) const override {
    const int c = ir_channel / width();
    const int lane = ir_channel % width();
    const std::uint64_t piece = piece_bytes();
    if (r >= n_ + nodes_) return aggregation_groups(r - n_ - nodes_, c, lane, piece, out);
    const bool is_switch = r >= n_;
    const int node = is_switch ? r - n_ : req_.comm.node_of(r);
    const int sw = n_ + node;
    if (lane == 0) {
      // Every block piece by piece in turn, as NCCL's NVLS loop steps through its heads.
      std::vector<Op> t;
      for (int b = 0; b < g_; ++b) {
        const Span blk = block(c, b);
        if (blk.length == 0) continue;
        const std::uint64_t off = bytes(blk.offset), len = bytes(blk.length);
        if (is_switch) {
          for (Op& o : switch_up(node, off, len)) t.push_back(o);
        } else {
          t.push_back(ops::send(sw, ops::in(off), len));
        }
      }
      if (!t.empty()) out.push_back(pipeline(std::move(t), piece));
      return;
    }
    if (lane <= 2 * g_) {
      const bool up = lane <= g_;
      const int b = up ? lane - 1 : lane - 1 - g_;
      const Span blk = block(c, b);
      if (blk.length == 0) return;
      const std::uint64_t off = bytes(blk.offset), len = bytes(blk.length);
      const int h = head(node, b);
      if (is_switch) {
        out.push_back(pipeline({up ? ops::send(h, ops::scratch(off), len)
                                   : ops::recv(h, ops::scratch(down(off)), len)},
                               piece));
      } else if (r == h) {
        out.push_back(
            pipeline(up ? head_up(node, b, c, off, len) : head_down(node, b, c, off, len), piece));
      }
      return;
    }
    if (lane > 3 * g_) {
      // Down to node k: its head b receives block b's total from aggregation b.
      if (is_switch || lane - 1 - 3 * g_ != node) return;
      const int b = req_.comm.local_rank(r);
      const Span blk = block(c, b);
      if (blk.length == 0) return;
      out.push_back(pipeline(
          {ops::recv(aggregation(b), ops::scratch(down(bytes(blk.offset))), bytes(blk.length))},
          piece));
      return;
    }
    const int m = lane - 1 - 2 * g_;
    if (!is_switch && req_.comm.local_rank(r) != m) return;
    std::vector<Op> t;
    for (int b = 0; b < g_; ++b) {
      const Span blk = block(c, b);
      if (blk.length == 0) continue;
      const std::uint64_t off = bytes(blk.offset), len = bytes(blk.length);
      t.push_back(is_switch ? ops::send(member(node, m), ops::scratch(down(off)), len)
                            : ops::recv(sw, ops::out(off), len));
    }
    if (!t.empty()) out.push_back(pipeline(std::move(t), piece));
  }

  std::vector<Dependency> dependencies(int rank) const override {
    std::vector<Dependency> deps;
    each_dependency(rank, 0, channels_ * width(), [&](const Dependency& d) { deps.push_back(d); });
    return deps;
  }

  // Straight into runs, without the list: a switch has (1 + g) dependencies a piece, and most
  // of them are runs of one (a member's multicast waits on each head's down lane in turn).
  void append_dependency_runs(int rank, int first_channel, int end_channel,
                              std::vector<DependencyRun>& out) const override {
    DependencyRunBuilder runs(out);
    each_dependency(rank, first_channel, end_channel, [&](const Dependency& d) { runs.add(d); });
    runs.finish();
  }

 protected:
  // Up sums in the first half, the totals coming down in the second.
  std::uint64_t scratch_elems(int /*rank*/) const override { return 2 * req_.count; }

 private:
  // Calls f with each of rank's dependencies on IR channels [first, end), sorted by (channel,
  // op): the NCCL channels that range touches, and of each only the lanes inside it.
  template <class F>
  void each_dependency(int rank, int first, int end, F&& f) const {
    const auto inside = [&](int ir_channel) { return ir_channel >= first && ir_channel < end; };
    const int c_first = std::max(0, first / width());
    const int c_end = static_cast<int>(std::min<std::int64_t>(
        channels_,
        (static_cast<std::int64_t>(end) + width() - 1) / width()));  // end may be INT_MAX
    if (rank >= n_ + nodes_) {
      // Aggregation b sends piece k to every node once it has reduced it (nodes ops a piece).
      const int b = rank - n_ - nodes_;
      const auto per_piece = static_cast<std::uint64_t>(nodes_);
      for (int c = c_first; c < c_end; ++c) {
        const Span blk = block(c, b);
        if (blk.length == 0) continue;
        for (int k = 0; k < nodes_; ++k) {
          const int lane = c * width() + 1 + 3 * g_ + k;
          if (!inside(lane)) continue;
          for (std::uint64_t i = 0; i < pieces_of(bytes(blk.length)); ++i) {
            f(Dependency{lane, i, c * width() + 1 + b, (i + 1) * per_piece - 1});
          }
        }
      }
      return;
    }
    if (rank >= n_) {
      // Channel c's non-empty blocks, in order, and how many pieces each is cut into.
      std::vector<std::pair<int, std::uint64_t>> present;
      for (int c = c_first; c < c_end; ++c) {
        present.clear();
        for (int b = 0; b < g_; ++b) {
          const std::uint64_t len = block(c, b).length;
          if (len != 0) present.emplace_back(b, pieces_of(bytes(len)));
        }
        const int base = c * width();
        std::uint64_t most = 0;
        for (const auto& block_pieces : present) most = std::max(most, block_pieces.second);
        // Hand piece k of block b to its head once the switch has reduced it (lane 0 runs
        // g ops per block and piece, the blocks in turn).
        const std::uint64_t up_per_piece = present.size() * static_cast<std::uint64_t>(g_);
        for (std::size_t j = 0; j < present.size(); ++j) {
          const auto [b, n] = present[j];
          if (!inside(base + 1 + b)) continue;
          for (std::uint64_t k = 0; k < n; ++k) {
            f(Dependency{base + 1 + b, k, base, k * up_per_piece + (j + 1) * g_ - 1});
          }
        }
        // Multicast piece k of block b to member m once its head has returned it.
        const std::uint64_t per_piece = present.size();
        for (int m = 0; m < g_; ++m) {
          if (!inside(base + 1 + 2 * g_ + m)) continue;
          for (std::uint64_t k = 0; k < most; ++k) {
            for (std::size_t j = 0; j < present.size(); ++j) {
              const auto [b, n] = present[j];
              if (k >= n) continue;  // an empty piece: nothing to wait for
              f(Dependency{base + 1 + 2 * g_ + m, k * per_piece + j, base + 1 + g_ + b, k});
            }
          }
        }
      }
      return;
    }
    const int node = req_.comm.node_of(rank);
    const int b = req_.comm.local_rank(rank);
    if (across_ == Across::kSharp) {
      // A head returns piece k to its switch once its aggregation has sent it the total.
      for (int c = c_first; c < c_end; ++c) {
        const Span blk = block(c, b);
        if (blk.length == 0 || !inside(c * width() + 1 + g_ + b)) continue;
        for (std::uint64_t k = 0; k < pieces_of(bytes(blk.length)); ++k) {
          f(Dependency{c * width() + 1 + g_ + b, k, c * width() + 1 + 3 * g_ + node, k});
        }
      }
      return;
    }
    // A root head starts down with piece k once its up has the sum of piece k.
    for (int c = c_first; c < c_end; ++c) {
      const Span blk = block(c, b);
      if (blk.length == 0 || tree(node, b, c).parent >= 0 || !inside(c * width() + 1 + g_ + b)) {
        continue;
      }
      const std::uint64_t u = head_up(node, b, c, 0, 0).size();
      const std::uint64_t w = head_down(node, b, c, 0, 0).size();
      for (std::uint64_t k = 0; k < pieces_of(bytes(blk.length)); ++k) {
        f(Dependency{c * width() + 1 + g_ + b, k * w, c * width() + 1 + b, k * u + u - 1});
      }
    }
  }

  int width() const { return 1 + 3 * g_ + (across_ == Across::kSharp ? nodes_ : 0); }
  // The aggregation (SHARP) actor of block b: after the ranks and the nodes' switches.
  int aggregation(int b) const { return n_ + nodes_ + b; }
  std::uint64_t down(std::uint64_t off) const { return bytes(req_.count) + off; }
  // Local rank i of `node`; the head of block b is member b.
  int member(int node, int i) const {
    return req_.comm.ranks_of_node(node)[static_cast<std::size_t>(i)];
  }
  int head(int node, int b) const { return member(node, b); }
  // Block b of channel c's part of the vector, in elements.
  Span block(int c, int b) const {
    const Span part = channel_span(c);
    const Span s = split(part.length, static_cast<std::uint64_t>(g_), b);
    return {part.offset + s.offset, s.length};
  }
  // The tree block b of channel c runs over, as node indices.
  TreeLinks tree(int node, int b, int c) const {
    return (b + c) % 2 == 0 ? btree(nodes_, node) : dtree(nodes_, node);
  }
  // The switch receives the block from each member of its node, reducing. On one node this is
  // the whole sum, and its last reduction applies the post-op.
  std::vector<Op> switch_up(int node, std::uint64_t off, std::uint64_t len) const {
    const BufferRef acc = ops::scratch(off);
    std::vector<Op> v = {ops::recv(member(node, 0), acc, len)};
    for (int m = 1; m < g_; ++m) {
      v.push_back(ops::recv_reduce(member(node, m), acc, len, nodes_ == 1 && m == g_ - 1));
    }
    return v;
  }
  std::vector<Op> head_up(int node, int b, int c, std::uint64_t off, std::uint64_t len) const {
    const BufferRef acc = ops::scratch(off);
    if (across_ == Across::kSharp) {
      return {ops::recv(n_ + node, acc, len), ops::send(aggregation(b), acc, len)};
    }
    const TreeLinks t = tree(node, b, c);
    std::vector<Op> v = {ops::recv(n_ + node, acc, len)};
    for (std::size_t i = 0; i < t.children.size(); ++i) {
      const bool last = t.parent < 0 && i + 1 == t.children.size();
      v.push_back(ops::recv_reduce(head(t.children[i], b), acc, len, last));
    }
    if (t.parent >= 0) v.push_back(ops::send(head(t.parent, b), acc, len));
    return v;
  }
  // The total comes down into the second half of the scratch (the first still holds the up
  // sum, which the root sends from).
  std::vector<Op> head_down(int node, int b, int c, std::uint64_t off, std::uint64_t len) const {
    if (across_ == Across::kSharp) return {ops::send(n_ + node, ops::scratch(down(off)), len)};
    const TreeLinks t = tree(node, b, c);
    const BufferRef acc = ops::scratch(t.parent >= 0 ? down(off) : off);
    std::vector<Op> v;
    if (t.parent >= 0) v.push_back(ops::recv(head(t.parent, b), acc, len));
    for (int child : t.children) v.push_back(ops::send(head(child, b), acc, len));
    v.push_back(ops::send(n_ + node, acc, len));
    return v;
  }

  // Aggregation b's groups: on head b's up lane it receives every node's sum of block b,
  // reducing; on the lane down to node k it sends node k's head the total.
  void aggregation_groups(int b, int c, int lane, std::uint64_t piece,
                          std::vector<Group>& out) const {
    const Span blk = block(c, b);
    if (blk.length == 0) return;
    const std::uint64_t off = bytes(blk.offset), len = bytes(blk.length);
    const BufferRef acc = ops::scratch(off);
    if (lane == 1 + b) {
      std::vector<Op> v = {ops::recv(head(0, b), acc, len)};
      for (int k = 1; k < nodes_; ++k) {
        v.push_back(ops::recv_reduce(head(k, b), acc, len, k == nodes_ - 1));
      }
      out.push_back(pipeline(std::move(v), piece));
    } else if (lane > 3 * g_) {
      out.push_back(pipeline({ops::send(head(lane - 1 - 3 * g_, b), acc, len)}, piece));
    }
  }

  Across across_;
  int nodes_;
  int g_;  // ranks per node
};

// Every node must hold as many ranks: block b of every node meets on its head b's tree or
// aggregation.
void check_equal_nodes(const Request& r, std::string_view name, std::string_view where) {
  const int nodes = r.comm.node_count();
  const std::size_t g = r.comm.ranks_of_node(0).size();
  for (int k = 1; k < nodes; ++k) {
    if (r.comm.ranks_of_node(k).size() != g) {
      throw RequestError(fmt::format(
          "algorithm \"{}\" needs the same number of ranks on every node (node 0 has {}, node {} "
          "has {}): block b of every node meets on {} of local rank b",
          name, g, k, r.comm.ranks_of_node(k).size(), where));
    }
  }
}

}  // namespace

Schedule make_nvls_tree(const Request& r) {
  check_equal_nodes(r, "nvls_tree", "the tree");
  const int nodes = r.comm.node_count();
  const auto g = static_cast<int>(r.comm.ranks_of_node(0).size());
  ScheduleInfo info = make_info(r, (1 + 3 * g) * r.channels);
  for (int k = 0; k < nodes; ++k) {
    info.switches.push_back({r.comm.ranks_of_node(k)[0], SwitchSite::kNvSwitch});
  }
  return Schedule(std::move(info), std::make_shared<NvlsTreeSource>(r, Across::kTree));
}

Schedule make_nvls_sharp(const Request& r) {
  check_equal_nodes(r, "nvls", "the aggregation");
  const int nodes = r.comm.node_count();
  const auto g = static_cast<int>(r.comm.ranks_of_node(0).size());
  ScheduleInfo info = make_info(r, (1 + 3 * g + nodes) * r.channels);
  for (int k = 0; k < nodes; ++k) {
    info.switches.push_back({r.comm.ranks_of_node(k)[0], SwitchSite::kNvSwitch});
  }
  for (int b = 0; b < g; ++b) {
    info.switches.push_back(
        {r.comm.ranks_of_node(0)[static_cast<std::size_t>(b)], SwitchSite::kNetwork});
  }
  return Schedule(std::move(info), std::make_shared<NvlsTreeSource>(r, Across::kSharp));
}

}  // namespace collsim::detail
