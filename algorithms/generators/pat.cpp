// `pat`: NCCL's PAT, Parallel Aggregated Trees (Jeaugey, "PAT: a new algorithm for all-gather
// and reduce-scatter operations at scale", arXiv 2506.20252, 2025; NCCL 2.23+, `PatAGAlgorithm`
// and `PatRSAlgorithm` in src/include/collectives.h; docs/nccl-model.md §2.5). NCCL runs it for
// AllGather and ReduceScatter with one GPU per node, Simple only.
//
// PAT is Bruck's algorithm with its dimensions reversed. AllGather: every rank's block travels a
// binomial tree whose far levels come first, so the last, largest exchange is with the nearest
// rank. With D = ceil(log2 p), at dimension d = D-1 down to 0 rank r sends to r - 2^d everything
// it holds whose offset t (block r + t) is a multiple of 2^(d+1) with t + 2^d < p, and receives
// the same offsets plus 2^d from r + 2^d: after dimension d it holds every offset that is a
// multiple of 2^d, after dimension 0 all of them. The messages grow from one block to p/2:
// log2 p network latencies, (p-1)/p of the data, as a ring moves. ReduceScatter runs the same
// trees backwards (d = 0 up to D-1, rank r sending its partial sums for offsets t + 2^d to
// r + 2^d, which reduces them into its own for offset t), ending with rank r's block reduced.
//
// Layout: the blocks a rank holds are kept in a work area of 2^D slots in scratch, offset t in
// slot bitreverse_D(t), so that what dimension d moves is one contiguous range of slots
// ([0, 2^(D-1-d)) sent, the next 2^(D-1-d) received; NCCL's `mirror`), with gaps where t + 2^d
// >= p when p is not a power of two (then one op per contiguous run). The own input is copied in
// (AllGather) or every input block packed (ReduceScatter) and the result copied out, as NCCL's
// PAT copies through its step buffers rather than sending from the user buffers.
//
// Loops and aggregation, as NCCL: each channel's part of a block is moved in chunks (PAT's chunk,
// request.cpp), every chunk through all D dimensions before the next; a dimension's message is
// cut into pieces of `aggregation` chunks, NCCL's postFreq: the most blocks (a power of two, at
// most p/2) whose chunks fill at most half a FIFO step. Small messages thus cross each dimension
// as one piece; large ones as one piece per block.
#include "algorithms/generators/group_source.hpp"

namespace collsim::detail {

int pat_dims(int ranks) {
  int d = 0;
  while ((1 << d) < ranks) ++d;
  return d;
}

std::uint64_t pat_aggregation(int ranks, std::uint64_t channel_bytes, std::uint64_t step_bytes) {
  std::uint64_t agg = 1;
  const std::uint64_t cap = static_cast<std::uint64_t>(std::max(1, ranks / 2));
  // PatAGAlgorithm's constructor: grow while stepSize / (channelSize x aggFactor) >= 2.
  while (channel_bytes > 0 && step_bytes / (channel_bytes * agg) >= 2 && agg < cap) agg *= 2;
  return agg;
}

int pat_slot(int dims, int offset) {
  int s = 0;
  for (int b = 0; b < dims; ++b) {
    if (offset & (1 << b)) s |= 1 << (dims - 1 - b);
  }
  return s;
}

std::vector<SlotRun> pat_runs(int ranks, int d) {
  const int dims = pat_dims(ranks);
  const int half = 1 << (dims - 1 - d);
  std::vector<SlotRun> runs;
  for (int j = 0; j < half; ++j) {
    if (pat_slot(dims, j) + (1 << d) >= ranks) continue;  // offset t + 2^d is no rank
    if (!runs.empty() && runs.back().end == j) {
      ++runs.back().end;
    } else {
      runs.push_back({j, j + 1});
    }
  }
  return runs;
}

namespace {

class PatSource final : public GroupSource {
 public:
  explicit PatSource(const Request& r) : GroupSource(r), dims_(pat_dims(n_)) {
    for (int d = 0; d < dims_; ++d) runs_.push_back(pat_runs(n_, d));
  }

  void groups(int rank, int c, std::vector<Group>& out) const override {
    const Span span = channel_span(c);
    if (span.length == 0) return;
    if (n_ == 1) {
      out.push_back(whole({ops::copy(ops::in(bytes(span.offset)), ops::out(bytes(span.offset)),
                                     bytes(span.length))}));
      return;
    }
    const std::uint64_t agg =
        pat_aggregation(n_, bytes(span.length), geometry(req_.protocol).slot_payload);
    for (std::uint64_t o = 0; o < span.length; o += chunk_elems_) {
      const std::uint64_t len = std::min(chunk_elems_, span.length - o);
      const Loop loop{span.offset + o, len, slots() * (span.offset + o), agg * bytes(len)};
      if (req_.collective == Collective::kAllGather) {
        all_gather(rank, loop, out);
      } else {
        reduce_scatter(rank, loop, out);
      }
    }
  }

 protected:
  std::uint64_t scratch_elems(int /*rank*/) const override {
    return n_ == 1 ? 0 : slots() * req_.count;
  }

 private:
  // One chunk of the channel's part of every block: elements [at, at + len) of a block; its work
  // area (slot j at area + j x len) in scratch; the piece its messages are cut into.
  struct Loop {
    std::uint64_t at, len, area, piece;
  };

  std::uint64_t slots() const { return std::uint64_t{1} << dims_; }

  // One run of a dimension: `send` and `recv` (equal sizes) cut into pieces, the sends running up
  // to a FIFO's slots ahead of the receives: the data of a whole dimension is on hand when it
  // starts, and NCCL posts a PAT step's send without waiting for the peer, so a piece's latency
  // overlaps the next pieces' pushes. Every rank sends and receives the same pieces at the same
  // lag, within the FIFO's credits, so this cannot deadlock (as [send, recv] in lock step, which
  // would pay each piece's latency before pushing the next).
  Group exchange(const Op& send, const Op& recv, std::uint64_t piece) const {
    const Group cut = pipeline({send, recv}, piece);  // op 2k: send piece k; 2k + 1: recv piece k
    const std::uint64_t lag = geometry(req_.protocol).slots;
    std::vector<Op> order;
    order.reserve(cut.size());
    for (std::uint64_t k = 0; k < cut.pieces + lag; ++k) {
      if (k >= lag) order.push_back(cut.op(2 * (k - lag) + 1));
      if (k < cut.pieces) order.push_back(cut.op(2 * k));
    }
    return whole(std::move(order));
  }
  BufferRef slot(const Loop& l, std::uint64_t j) const {
    return ops::scratch(bytes(l.area + j * l.len));
  }
  // Where offset t's block sits in a blocked buffer (the input of ReduceScatter, the output of
  // AllGather) for `rank`.
  std::uint64_t block_at(int rank, int t, const Loop& l) const {
    return bytes(static_cast<std::uint64_t>((rank + t) % n_) * req_.count + l.at);
  }

  void all_gather(int r, const Loop& l, std::vector<Group>& out) const {
    out.push_back(whole({ops::copy(ops::in(bytes(l.at)), slot(l, 0), bytes(l.len))}));
    for (int d = dims_ - 1; d >= 0; --d) {
      const int to = (r - (1 << d) % n_ + n_) % n_;
      const int from = (r + (1 << d)) % n_;
      const std::uint64_t half = std::uint64_t{1} << (dims_ - 1 - d);
      for (const SlotRun& run : runs_[d]) {
        const std::uint64_t b = bytes(static_cast<std::uint64_t>(run.end - run.begin) * l.len);
        out.push_back(exchange(ops::send(to, slot(l, run.begin), b),
                               ops::recv(from, slot(l, run.begin + half), b), l.piece));
      }
    }
    std::vector<Op> copies;
    for (int t = 0; t < n_; ++t) {
      copies.push_back(
          ops::copy(slot(l, pat_slot(dims_, t)), ops::out(block_at(r, t, l)), bytes(l.len)));
    }
    out.push_back(whole(std::move(copies)));
  }

  void reduce_scatter(int r, const Loop& l, std::vector<Group>& out) const {
    std::vector<Op> copies;
    for (int t = 0; t < n_; ++t) {
      copies.push_back(
          ops::copy(ops::in(block_at(r, t, l)), slot(l, pat_slot(dims_, t)), bytes(l.len)));
    }
    out.push_back(whole(std::move(copies)));
    for (int d = 0; d < dims_; ++d) {
      const int to = (r + (1 << d)) % n_;
      const int from = (r - (1 << d) % n_ + n_) % n_;
      const std::uint64_t half = std::uint64_t{1} << (dims_ - 1 - d);
      for (const SlotRun& run : runs_[d]) {
        const std::uint64_t b = bytes(static_cast<std::uint64_t>(run.end - run.begin) * l.len);
        // The last dimension completes offset 0, rank r's own block: into the output, with the
        // reduction's post-operation.
        const Op recv = d == dims_ - 1
                            ? ops::recv_reduce_copy(from, slot(l, 0), ops::out(bytes(l.at)), b,
                                                    /*postop=*/true)
                            : ops::recv_reduce(from, slot(l, run.begin), b);
        out.push_back(exchange(ops::send(to, slot(l, run.begin + half), b), recv, l.piece));
      }
    }
  }

  int dims_;
  std::vector<std::vector<SlotRun>> runs_;  // per dimension
};

}  // namespace

Schedule make_pat(const Request& r) {
  return Schedule(make_info(r, r.channels), std::make_shared<PatSource>(r));
}

}  // namespace collsim::detail
