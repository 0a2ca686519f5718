#include "algorithms/generators/generator.hpp"

#include <algorithm>

namespace collsim::detail {

std::uint64_t input_elems(const Request& r, int rank) {
  const std::uint64_t n = static_cast<std::uint64_t>(r.comm.size());
  switch (r.collective) {
    case Collective::kAllReduce:
    case Collective::kAllGather:
    case Collective::kReduce:
    case Collective::kGather:
    case Collective::kSendRecv:
      return r.count;
    case Collective::kReduceScatter:
    case Collective::kAllToAll:
      return n * r.count;
    case Collective::kBroadcast:
      return rank == r.root ? r.count : 0;
    case Collective::kScatter:
      return rank == r.root ? n * r.count : 0;
    case Collective::kBarrier:
      return 0;
  }
  return 0;
}

std::uint64_t output_elems(const Request& r, int rank) {
  const std::uint64_t n = static_cast<std::uint64_t>(r.comm.size());
  switch (r.collective) {
    case Collective::kAllReduce:
    case Collective::kReduceScatter:
    case Collective::kBroadcast:
    case Collective::kScatter:
    case Collective::kSendRecv:
      return r.count;
    case Collective::kAllGather:
    case Collective::kAllToAll:
      return n * r.count;
    case Collective::kReduce:
      return rank == r.root ? r.count : 0;
    case Collective::kGather:
      return rank == r.root ? n * r.count : 0;
    case Collective::kBarrier:
      return 0;
  }
  return 0;
}

ScheduleInfo make_info(const Request& r, int ir_channels) {
  ScheduleInfo i;
  i.collective = r.collective;
  i.algorithm = r.algorithm;
  i.protocol = r.protocol;
  i.dtype = r.dtype;
  i.redop = r.redop;
  i.ranks = r.comm.size();
  i.nodes = std::max(1, r.comm.node_count());
  i.channels = ir_channels;
  i.requested_channels = r.channels;
  i.count = r.count;
  i.widest_channel = r.split.empty()
                         ? ceil_div(r.count, static_cast<std::uint64_t>(std::max(1, r.channels)))
                         : r.split.widest();
  i.bytes = request_bytes(r);
  i.root = r.root;
  const Chunking k = chunking(r);
  i.chunk_bytes = k.chunk_bytes;
  i.slices = k.slices;
  i.fifo = geometry(r.protocol);
  i.p2p = on_nccl_p2p_kernel(r);
  return i;
}

GeneratedSource::GeneratedSource(Request r)
    : req_(std::move(r)),
      n_(req_.comm.size()),
      channels_(req_.channels),
      elem_(element_size(req_.dtype)),
      chunking_(chunking(req_)),
      chunk_elems_(std::max<std::uint64_t>(1, chunking_.chunk_bytes / elem_)) {}

std::uint64_t GeneratedSource::buffer_bytes(int rank, BufferKind buffer) const {
  switch (buffer) {
    case BufferKind::kInput:
      return bytes(input_elems(req_, rank));
    case BufferKind::kOutput:
      return bytes(output_elems(req_, rank));
    case BufferKind::kScratch:
      return bytes(scratch_elems(rank));
  }
  return 0;
}

std::vector<int> ring_order(const Communicator& comm, int channel) {
  std::vector<int> order;
  order.reserve(comm.size());
  const bool reversed = channel % 2 == 1;
  for (int node = 0; node < comm.node_count(); ++node) {
    const std::vector<int>& ranks = comm.ranks_of_node(node);
    const int g = static_cast<int>(ranks.size());
    const int entry = channel % g;
    const int exit = comm.node_count() > 1 ? comm.ring_exit(ranks[entry]) : -1;
    if (exit >= 0) {
      // In at `entry`, out at the GPU that leaves by the same NIC (Communicator::ring_exit), the
      // others in rotation between them; an odd channel's segment is written backwards, so that
      // reversing the whole ring below runs it from `entry` to `exit` as well.
      std::vector<int> segment{ranks[entry]};
      for (int j = 1; j < g; ++j) {
        const int r = ranks[(entry + j) % g];
        if (r != exit) segment.push_back(r);
      }
      segment.push_back(exit);
      if (reversed) std::reverse(segment.begin(), segment.end());
      order.insert(order.end(), segment.begin(), segment.end());
      continue;
    }
    // A reversed chain [s, s+1, ..., s-1] enters the node at s-1, hence s = c + 1 when odd.
    const int start = (channel + (channel % 2)) % g;
    for (int j = 0; j < g; ++j) order.push_back(ranks[(start + j) % g]);
  }
  if (channel % 2 == 1) std::reverse(order.begin(), order.end());
  return order;
}

TreeLinks btree(int n, int r) {
  TreeLinks t;
  if (n <= 1) return t;
  if (r == 0) {
    int h = 1;
    while (h * 2 < n) h *= 2;
    t.children.push_back(h);
    return t;
  }
  const int b = r & -r;
  t.parent = (r ^ b) | (b << 1);
  if (t.parent >= n) t.parent = r ^ b;
  if (b > 1) {
    t.children.push_back(r - b / 2);
    int h = b / 2;
    while (h >= 1 && r + h >= n) h /= 2;
    if (h >= 1) t.children.push_back(r + h);
  }
  return t;
}

TreeLinks dtree(int n, int r) {
  if (n % 2 == 0) {
    TreeLinks t = btree(n, n - 1 - r);
    if (t.parent >= 0) t.parent = n - 1 - t.parent;
    for (int& c : t.children) c = n - 1 - c;
    return t;
  }
  TreeLinks t = btree(n, (r - 1 + n) % n);
  if (t.parent >= 0) t.parent = (t.parent + 1) % n;
  for (int& c : t.children) c = (c + 1) % n;
  return t;
}

}  // namespace collsim::detail
