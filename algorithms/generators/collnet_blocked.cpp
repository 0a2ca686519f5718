// CollNetDirect's AllGather and ReduceScatter, and NVLS's across nodes: rail r's SHARP group
// (the aggregation actor of collnet.cpp's schedules, SwitchSite::kNetwork) gathers or
// reduce-scatters the rail's blocks across the nodes (docs/theory.md §1.9). Each schedule's
// lanes are described at its source below.
#include <algorithm>

#include "algorithms/generators/collnet_source.hpp"

namespace collsim::detail {

namespace {

// What the two blocked schedules share: block (k, r) is node k's local rank r's, each NCCL
// channel takes its part of every block (channel_span), and each actor runs one pipelined group
// on each IR channel it uses.
class RailBlockedSource : public CollNetSource {
 public:
  using CollNetSource::CollNetSource;

  void groups(int r, int ir_channel, std::vector<Group>& out) const final {
    const Span part = channel_span(ir_channel / width());
    if (part.length == 0) return;
    std::vector<Op> v;
    lane_ops(r, ir_channel % width(), part, bytes(part.length), v);
    if (!v.empty()) out.push_back(pipeline(std::move(v), piece_bytes()));
  }

 protected:
  // IR channels per NCCL channel, and the ops of actor r on one of them (none: idle).
  virtual int width() const = 0;
  virtual void lane_ops(int r, int lane, Span part, std::uint64_t len,
                        std::vector<Op>& v) const = 0;

  bool gathers() const { return req_.collective == Collective::kAllGather; }
  // Bytes from the start of the blocked vector to channel part `part` of block (node k, rail r).
  std::uint64_t offset(int k, int r, Span part) const {
    return bytes(static_cast<std::uint64_t>(member(k, r)) * req_.count + part.offset);
  }
};

// CollNetDirect's AllGather and ReduceScatter (NCCL 2.23+, with the SHARP plugin's iallgather /
// ireducescatter; `src/device/all_gather.h`, `reduce_scatter.h` RunWorkColl COLLNET_DIRECT): GPU
// r of every node is the head of rail r, and aggregation r gathers or reduce-scatters the rail's
// blocks across the nodes.
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
class CollNetDirectBlockedSource final : public RailBlockedSource {
 public:
  using RailBlockedSource::RailBlockedSource;

  void lane_ops(int r, int lane, Span part, std::uint64_t len, std::vector<Op>& v) const override {
    if (gathers()) return gather_ops(r, lane, part, len, v);
    const bool is_switch = r >= n_;
    if (lane < g_) {  // up to head b
      const int b = lane;
      if (is_switch) {
        if (r - n_ != b) return;
        for (int j = 0; j < nodes_; ++j) {
          const BufferRef acc = ops::scratch(offset(j, b, part));
          v.push_back(ops::recv(member(0, b), acc, len));
          for (int k = 1; k < nodes_; ++k) {
            v.push_back(ops::recv_reduce(member(k, b), acc, len, k == nodes_ - 1));
          }
        }
        return;
      }
      const int node = req_.comm.node_of(r);
      const int head = member(node, b);
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
      return;
    }
    const int k = lane - g_;  // down to node k
    for (int b = 0; b < g_; ++b) {
      if (r == n_ + b) {
        v.push_back(ops::send(member(k, b), ops::scratch(offset(k, b, part)), len));
      } else if (r == member(k, b)) {
        v.push_back(ops::recv(n_ + b, ops::out(bytes(part.offset)), len));
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
  int width() const override { return nodes_ + g_; }  // either collective's (above)

  void gather_ops(int r, int lane, Span part, std::uint64_t len, std::vector<Op>& v) const {
    if (r >= n_) {
      if (lane > nodes_) return;  // the broadcast is the GPUs'
      const int rail = r - n_;
      for (int j = 0; j < nodes_; ++j) {
        const BufferRef slot = ops::scratch(offset(j, rail, part));
        v.push_back(lane == 0 ? ops::recv(member(j, rail), slot, len)
                              : ops::send(member(lane - 1, rail), slot, len));
      }
      return;
    }
    const int node = req_.comm.node_of(r);
    const int l = req_.comm.local_rank(r);
    if (lane == 0) {
      v.push_back(ops::send(n_ + l, ops::in(bytes(part.offset)), len));
      return;
    }
    if (lane <= nodes_) {
      if (lane - 1 != node) return;
      for (int j = 0; j < nodes_; ++j) {
        v.push_back(ops::recv(n_ + l, ops::out(offset(j, l, part)), len));
      }
      return;
    }
    const int d = lane - nodes_;
    const int to = (l + d) % g_;
    const int from = (l - d + g_) % g_;
    // Each send followed by its receive, as the AllReduce's broadcast: a GPU that sent every
    // node's block before receiving any would, with more nodes than FIFO slots, wait on a
    // peer that waits on it.
    for (int j = 0; j < nodes_; ++j) {
      v.push_back(ops::send(member(node, to), ops::out(offset(j, l, part)), len));
      v.push_back(ops::recv(member(node, from), ops::out(offset(j, from, part)), len));
    }
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
class NvlsSharpBlockedSource final : public RailBlockedSource {
 public:
  using RailBlockedSource::RailBlockedSource;

  void lane_ops(int r, int lane, Span part, std::uint64_t len, std::vector<Op>& v) const override {
    if (gathers()) {
      gather_ops(r, lane, part, len, v);
    } else {
      scatter_ops(r, lane, part, len, v);
    }
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
  int width() const override { return gathers() ? 2 + nodes_ + g_ : 1 + g_ + nodes_; }
  int nvswitch(int node) const { return n_ + node; }
  int aggregation(int rail) const { return n_ + nodes_ + rail; }

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

}  // namespace

Schedule make_collnet_direct_blocked(const Request& r) {
  check_collnet(r, "collnet_direct");
  const int g = static_cast<int>(r.comm.ranks_of_node(0).size());
  ScheduleInfo info = make_info(r, (g + r.comm.node_count()) * r.channels);
  for (int b = 0; b < g; ++b) {
    info.switches.push_back(
        {r.comm.ranks_of_node(0)[static_cast<std::size_t>(b)], SwitchSite::kNetwork});
  }
  return Schedule(std::move(info), std::make_shared<CollNetDirectBlockedSource>(r));
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

}  // namespace collsim::detail
