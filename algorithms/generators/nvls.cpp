// `nvls`: NVLink SHARP, the NVSwitch reduces and multicasts (NCCL's NVLS algorithm, sm90+,
// NVSwitch gen 3 or later; docs/theory.md §1.8). The switch is an actor of the schedule
// (schedule.hpp, "Switch actors"): actor `ranks` is the node's NVSwitch.
//
// Per NCCL channel c two IR channels: 2c "up" (GPUs -> switch) and 2c+1 "down" (switch -> GPUs),
// so that no stream both sends and receives and every GPU runs FIFO-deep ahead of the switch.
// The channel's part of the data is cut into blocks, one per rank (AllReduce: head b's share of
// the part, as NCCL deals it; ReduceScatter / AllGather: rank b's block), and each block into
// pieces (the protocol's slice). NCCL's one-node NVLS AllReduce (`src/device/all_reduce.h`,
// RunWorkColl NVLS) moves the part in steps of one NVLS chunk per head (every GPU up to 32, then
// 32 of them: nvls_heads), then the remainder in chunks of alignUp(divUp(rem, heads), 16 KiB) to
// the first heads, so that a remainder of less than 16 KiB a head leaves the last heads none: a
// 128 KiB part on 8 GPUs is eight chunks of 16 KiB, a 48 KiB part on 72 GPUs three (an even
// split would be 72 sends of 683 bytes); a GPU that is no head gets no block.
//   AllReduce      up:   every GPU sends every block; the switch receives block b from every GPU
//                        and reduces it (the last reduction applies the post-op).
//                  down: the switch multicasts each reduced piece to every GPU (a send per lane).
//   ReduceScatter  up as AllReduce; down: the switch sends reduced block b to rank b only.
//   AllGather      up:   GPU b sends its block; down: the switch multicasts it to every GPU.
//                  Every GPU stores to the multicast address at once, so the switch takes the
//                  blocks as they come: piece k of every block, then piece k + 1 (had it taken
//                  block 0 whole, then block 1, each GPU's sends would wait for the GPU before).
// The switch's down piece k of block b waits for its up piece k (a cross-channel dependency).
// Per GPU this moves n bytes each way (algbw = link rate); NCCL's data path loads the reduced
// chunk through its owner and stores it back (n + n/p each way, docs/theory.md §1.8), which
// collsim folds into the switch's NVLS rate (topology: nvlink.nvls) rather than into extra hops.
//
// This is NVLS inside one NVLink domain. Across nodes NCCL runs NVLS only with CollNet (the
// InfiniBand switches reduce between the nodes; AllGather and ReduceScatter from 2.27 with the
// SHARP plugin's iallgather / ireducescatter): make_nvls hands a communicator of several nodes
// to make_nvls_sharp (AllReduce, nvls_tree.cpp) or make_nvls_sharp_blocked (collnet.cpp).
#include <algorithm>

#include "algorithms/generators/group_source.hpp"

namespace collsim::detail {

namespace {

class NvlsSource final : public GroupSource {
 public:
  explicit NvlsSource(Request r) : GroupSource(std::move(r)), sw_(n_) {}

  std::uint64_t buffer_bytes(int rank, BufferKind buffer) const override {
    if (rank < n_) return GeneratedSource::buffer_bytes(rank, buffer);
    return buffer == BufferKind::kScratch ? bytes(switch_elems()) : 0;
  }

  void groups(int r, int ir_channel, std::vector<Group>& out) const override {
    const int c = ir_channel / width();
    const int lane = ir_channel % width();  // 0: up; 1 + m: down to member m
    const std::uint64_t piece = piece_bytes();
    if (!reduces()) return gather_groups(r, c, lane, piece, out);
    for (int b = 0; b < n_; ++b) {
      const Span blk = block(c, b);
      if (blk.length == 0) continue;
      const std::uint64_t len = bytes(blk.length);
      if (lane == 0) {
        if (r == sw_) out.push_back(pipeline(switch_up(b, blk), piece));
        if (r < n_) {
          out.push_back(pipeline({ops::send(sw_, ops::in(input_offset(b, blk)), len)}, piece));
        }
        continue;
      }
      const int m = lane - 1;
      if (!receives_block(m, b)) continue;
      if (r == sw_) {
        out.push_back(pipeline({ops::send(m, ops::scratch(bytes(blk.offset)), len)}, piece));
      } else if (r == m) {
        out.push_back(pipeline({ops::recv(sw_, ops::out(output_offset(b, blk)), len)}, piece));
      }
    }
  }

  // The switch sends piece k of block b to member m once it has reduced (or received) it.
  std::vector<Dependency> dependencies(int rank) const override {
    std::vector<Dependency> deps;
    if (rank != sw_) return deps;
    if (!reduces()) {
      // AllGather: both lanes take op k·n + b for piece k of block b, so op i waits for op i.
      for (int c = 0; c < channels_; ++c) {
        const Span blk = block(c, 0);
        if (blk.length == 0) continue;  // every block of a channel is as long as block 0
        const std::uint64_t ops = static_cast<std::uint64_t>(n_) * pieces_of(bytes(blk.length));
        for (int m = 0; m < n_; ++m) {
          for (std::uint64_t i = 0; i < ops; ++i)
            deps.push_back({c * width() + 1 + m, i, c * width(), i});
        }
      }
      return deps;
    }
    const std::uint64_t up_ops = switch_up(0, {}).size();
    for (int c = 0; c < channels_; ++c) {
      for (int m = 0; m < n_; ++m) {
        std::uint64_t up_at = 0;
        std::uint64_t down_at = 0;
        for (int b = 0; b < n_; ++b) {
          const Span blk = block(c, b);
          if (blk.length == 0) continue;
          const std::uint64_t pieces = pieces_of(bytes(blk.length));
          if (receives_block(m, b)) {
            for (std::uint64_t k = 0; k < pieces; ++k) {
              deps.push_back(
                  {c * width() + 1 + m, down_at + k, c * width(), up_at + (k + 1) * up_ops - 1});
            }
            down_at += pieces;
          }
          up_at += pieces * up_ops;
        }
      }
    }
    return deps;  // by (channel, op): channels ascend with (c, m), ops within each
  }

 private:
  bool reduces() const { return req_.collective != Collective::kAllGather; }
  // AllReduce: head h's elements of a part of `len`, at their place in it.
  Span head_share(std::uint64_t len, std::uint64_t h) const {
    return nvls_head_share(len, static_cast<std::uint64_t>(nvls_heads(n_)),
                           std::max<std::uint64_t>(1, piece_bytes() / elem_),
                           std::max<std::uint64_t>(1, kNvlsLastChunkAlign / elem_), h);
  }

  // ReduceScatter: only block b's owner receives it; AllReduce / AllGather: every rank.
  bool receives_block(int r, int b) const {
    return req_.collective != Collective::kReduceScatter || r == b;
  }

  // Block b of channel c, in elements of the (blocked) vector.
  Span block(int c, int b) const {
    const Span part = channel_span(c);
    if (req_.collective == Collective::kAllReduce) {
      const Span s = head_share(part.length, static_cast<std::uint64_t>(b));
      return {part.offset + s.offset, s.length};
    }
    return {static_cast<std::uint64_t>(b) * req_.count + part.offset, part.length};
  }
  std::uint64_t input_offset(int b, Span blk) const {
    return req_.collective == Collective::kAllGather ? bytes(blk.offset - b * req_.count)
                                                     : bytes(blk.offset);
  }
  std::uint64_t output_offset(int b, Span blk) const {
    return req_.collective == Collective::kReduceScatter ? bytes(blk.offset - b * req_.count)
                                                         : bytes(blk.offset);
  }
  // The switch's accumulator holds every block at its place in the (blocked) vector.
  std::uint64_t switch_elems() const {
    return req_.collective == Collective::kAllReduce ? req_.count : n_ * req_.count;
  }

  // AllGather's groups of (r, channel c, lane): one group whose piece k is piece k of every
  // block, in block order, on the switch's side; GPU r sends its own block on the up lane and
  // receives every block on its down lane.
  void gather_groups(int r, int c, int lane, std::uint64_t piece, std::vector<Group>& out) const {
    if (block(c, 0).length == 0) return;
    if (lane == 0) {
      if (r < n_) {
        const Span blk = block(c, r);
        out.push_back(
            pipeline({ops::send(sw_, ops::in(input_offset(r, blk)), bytes(blk.length))}, piece));
        return;
      }
      std::vector<Op> up;
      for (int b = 0; b < n_; ++b) up.push_back(switch_up(b, block(c, b)).front());
      out.push_back(pipeline(std::move(up), piece));
      return;
    }
    const int m = lane - 1;
    if (r != sw_ && r != m) return;
    std::vector<Op> down;
    for (int b = 0; b < n_; ++b) {
      const Span blk = block(c, b);
      const std::uint64_t len = bytes(blk.length);
      down.push_back(r == sw_ ? ops::send(m, ops::scratch(bytes(blk.offset)), len)
                              : ops::recv(sw_, ops::out(output_offset(b, blk)), len));
    }
    out.push_back(pipeline(std::move(down), piece));
  }

  // The switch's up templates for block b: receive it from every sender, reducing.
  std::vector<Op> switch_up(int b, Span blk) const {
    const std::uint64_t len = bytes(blk.length);
    const BufferRef acc = ops::scratch(bytes(blk.offset));
    if (!reduces()) return {ops::recv(b, acc, len)};
    std::vector<Op> v = {ops::recv(0, acc, len)};
    for (int m = 1; m < n_; ++m) v.push_back(ops::recv_reduce(m, acc, len, m == n_ - 1));
    return v;
  }
  // IR channels per NCCL channel: the up lane and one down lane per member.
  int width() const { return 1 + n_; }

  int sw_;  // the switch actor
};

}  // namespace

Schedule make_nvls(const Request& r) {
  if (r.comm.node_count() > 1) {
    return r.collective == Collective::kAllReduce ? make_nvls_sharp(r) : make_nvls_sharp_blocked(r);
  }
  ScheduleInfo info = make_info(r, (1 + r.comm.size()) * r.channels);
  info.switches = {SwitchActor{0, SwitchSite::kNvSwitch}};
  return Schedule(std::move(info), std::make_shared<NvlsSource>(r));
}

}  // namespace collsim::detail
