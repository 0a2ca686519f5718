// Closed forms of the algorithms whose switches reduce or multicast (estimate.hpp): NVLS, NVLSTree,
// NVLS across nodes, CollNetDirect and CollNetChain. Notation as in estimate.cpp.
#include <algorithm>
#include <cstdint>

#include "algorithms/generators/generator.hpp"
#include "algorithms/models/estimate.hpp"
#include "algorithms/models/estimate_cost.hpp"

namespace collsim::closed_form {

using detail::ceil_div;
using u64 = std::uint64_t;

using estimate_detail::ceil_log2;
using estimate_detail::Shape;
using estimate_detail::shape_of;

namespace {

// The switch's reduction of b bytes for one channel: its per-port NVLS rate (cost_params.hpp) is
// shared by the request's channels; zero rate: free.
Time switch_reduce(const EstimateRequest& q, u64 b) {
  const double per_port = q.cost.nvls_bandwidth.bytes_per_second();
  if (b == 0 || per_port <= 0) return Time();
  return transfer_time(Bytes(b), Bandwidth::bytes_per_second(per_port / std::max(1, q.channels)));
}

// One slice of NVLS's chunk (request.cpp): what a head's share is dealt in.
u64 nvls_slice(const Shape& s) {
  return std::max<u64>(1, s.cut.chunk / static_cast<u64>(s.cut.slices));
}

// NVLS's pipelining piece: a slice, at most a FIFO slot and a block.
u64 nvls_piece(const Shape& s, u64 block) {
  return std::max<u64>(1, std::min({s.cut.piece, nvls_slice(s), block}));
}

// NVLS inside each node whose head of each block also carries it to and from the network
// (nvls_tree, nvls_sharp): the pipeline fills through two hops via the switch, its reduction and
// `net_fill`; then the slowest of a GPU's stream (n and, as a head, its block), the switch's
// reduction of n and a head's network stream of `net_bytes` paces it. A GPU's and a head's sends
// each pay the step overhead on their pieces.
Time nvls_with_heads(const EstimateRequest& q, const Shape& s, u64 block, u64 piece, Time net_fill,
                     u64 net_bytes) {
  const Time fill =
      s.intra.alpha_via_switch() * 2 + s.intra.tau(piece) * 2 + switch_reduce(q, piece) + net_fill;
  return fill + std::max({s.intra.stream(s.len + block, piece), switch_reduce(q, s.len),
                          s.inter.stream(net_bytes, piece)});
}

}  // namespace

// nvls (one node; the NVSwitch is an actor, generators/nvls.cpp). Per channel every GPU pushes
// `up` bytes to the switch and takes `down` bytes from it, the two directions of its link at once;
// the switch reduces at nvls_bandwidth per GPU port, its whole rate shared by the C channels, so
// R reduced bytes of one channel take R·C / nvls_bandwidth. The first piece (of a block) goes up
// (τ₀), is reduced (ρ₀) and comes down (τ₀), its two routes through the switch together taking
// α_s = α + ε (the GPU-to-GPU route's links, and the protocol's per-route excess ε on each
// half); after it the slower of the down and reduce streams paces the rest, unless the up stream
// is slower, and then the last piece (l bytes, shorter than the others where the part is not
// whole pieces) is reduced and comes down after it:
//   T = α_s + max(τ₀ + ρ₀ + max(τ(down), ρ(R)), τ(up) + (k−1)·o + ρ(l) + τ(l))
//   AR: up = down = R = n/C;  RS: up = R = p·b, down = b;  AG: up = b, down = p·b, R = 0
// (n nccl-tests' size, b = n/(p·C) one rank's block of it; k a GPU's up pieces and o the step
// overhead it pays on each but its last, the switch's sends paying none). Approximate: the switch's
// streams and the GPUs' FIFOs are taken as never stalling one another (tests/predict bounds the
// gap to the contention-free simulation from 8 KiB to 1 GiB).
Estimate nvls(const EstimateRequest& q) {
  if (q.nodes > 1) return nvls_sharp(q);
  const Shape s = shape_of(q);
  const u64 p = static_cast<u64>(s.p);
  u64 up = s.len, down = s.len, reduced = s.len;
  if (q.collective == Collective::kReduceScatter) {
    up = reduced = p * s.len;
  } else if (q.collective == Collective::kAllGather) {
    down = p * s.len;
    reduced = 0;
  }
  // A channel's part is cut into blocks (AllReduce: each head's share, the first the largest;
  // RS / AG: rank b's block of p), each pipelined in pieces of NVLS's chunk (request.cpp), at
  // most a FIFO slot.
  const auto heads = static_cast<u64>(nvls_heads(s.p));
  const auto share = [&](u64 h) {
    return detail::nvls_head_share(s.len, heads, nvls_slice(s), detail::kNvlsLastChunkAlign, h)
        .length;
  };
  const u64 block = q.collective == Collective::kAllReduce ? share(0) : s.len;
  const u64 piece = nvls_piece(s, block);
  // AllReduce's up stream ends with the last piece of the last head with a share, shorter than
  // the others where the part is not whole chunks (RS / AG: taken as whole pieces).
  u64 last = piece;
  if (q.collective == Collective::kAllReduce && s.len > 0) {
    u64 h = heads - 1;
    while (h > 0 && share(h) == 0) --h;
    const u64 final_share = share(h);
    last = final_share - (ceil_div(final_share, piece) - 1) * piece;
  }
  const Time tau0 = s.intra.tau(piece);
  const auto rho = [&](u64 b) { return reduced > 0 ? switch_reduce(q, b) : Time(); };
  // A GPU's sends also hold it for the step overhead; the switch's sends have none. The pipeline
  // fills with the first piece and drains with the last.
  const Time t =
      s.intra.alpha_via_switch() +
      std::max(tau0 + rho(piece) + std::max(s.intra.tau(down), switch_reduce(q, reduced)),
               s.intra.stream(up, piece) + rho(last) + s.intra.tau(last));
  return {t,
          "nvls: α_s + max(τ0 + ρ0 + max(τ(down), ρ(reduced)), τ(up) + (k-1)o + ρ(l) + τ(l)) "
          "through the switch",
          false};
}

Estimate nvls_tree(const EstimateRequest& q) {
  // nvls inside each node, a tree of the nodes for each of the g blocks (nvls_tree.cpp): the
  // GPUs stream n through their switch as in nvls, a head also carries its block (n / g) to and
  // from the switch, and each head's NIC carries its block once each way with two nodes, about
  // twice with more (an interior node of one tree takes two children's sums and sends two
  // totals; the trees alternate by channel). The pipeline fills through 2 intra hops and the
  // switch, then 2 x height network hops. Approximate: on h100-2node-ib at 2, 4 and 8 nodes from
  // 1 MiB to 1 GiB within 12 % of the contention-free simulation (tests/predict).
  const Shape s = shape_of(q);
  const int nodes = std::max(1, q.nodes);
  const u64 g = static_cast<u64>(std::max(1, s.p / nodes));
  const u64 block = ceil_div(s.len, g);
  const u64 piece = nvls_piece(s, block);
  const int height = ceil_log2(nodes);
  const u64 network = nodes > 1 ? block * (nodes > 2 ? 2 : 1) : 0;
  const Time t = nvls_with_heads(q, s, block, piece,
                                 (s.inter.alpha() + s.inter.tau(piece)) * (2 * height), network);
  return {t,
          "nvls_tree: fill + max(τ(n + n/g) + (k-1)o, ρ(n), τ_net(block x (1 or 2)) + (k'-1)o) "
          "through switch and tree",
          false};
}

Estimate nvls_sharp(const EstimateRequest& q) {
  // nvls across nodes: nvls_tree inside each node, the network's switches in place of the tree
  // (nvls_tree.cpp): each head's NIC carries its block (n / g) once to its aggregation and once
  // back, which the switch reduces at its ports' rate. The pipeline fills through 2 intra hops,
  // the NVSwitch's reduction, and a network hop each way through the switch. Approximate.
  const Shape s = shape_of(q);
  const int nodes = std::max(1, q.nodes);
  const u64 g = static_cast<u64>(std::max(1, s.p / nodes));
  if (is_blocked(q.collective)) {
    // AllGather / ReduceScatter (collnet.cpp): a GPU's NIC carries its rail's blocks of every
    // node (nodes x b, b one rank's block per channel), and its NVLink every rail's (g times
    // that) through the switch, which reduces them for ReduceScatter. Approximate.
    const bool rs = q.collective == Collective::kReduceScatter;
    const u64 rail = s.len * static_cast<u64>(nodes);
    const u64 piece = nvls_piece(s, s.len);
    const Time fill = s.intra.alpha_via_switch() * 2 + s.intra.tau(piece) * 2 +
                      (rs ? switch_reduce(q, piece) : Time()) + s.inter.alpha_via_switch() +
                      s.inter.tau(piece) * 2;
    const Time t = fill + std::max({s.intra.stream(g * rail, piece), s.inter.stream(rail, piece),
                                    rs ? switch_reduce(q, g * rail) : Time()});
    return {t,
            "nvls across nodes: fill + max(τ(g·n_rail) + (k-1)o, τ_net(n_rail) + (k'-1)o, "
            "ρ(g·n_rail)) through the NVSwitch and the network's",
            false};
  }
  const u64 block = ceil_div(s.len, g);
  const u64 piece = nvls_piece(s, block);
  const Time t = nvls_with_heads(q, s, block, piece,
                                 s.inter.alpha_via_switch() + s.inter.tau(piece) * 2, block);
  return {t,
          "nvls across nodes: fill + max(τ(n + n/g) + (k-1)o, ρ(n), τ_net(n/g) + (k'-1)o) "
          "through the NVSwitch and the network's",
          false};
}

Estimate collnet_direct(const EstimateRequest& q) {
  if (is_blocked(q.collective)) {
    // AllGather / ReduceScatter (collnet.cpp): GPU r's NIC carries its rail's blocks of every
    // node, one each way for the rail's own and nodes x b the other way (b one rank's block per
    // channel), and over NVLink it exchanges nodes x b with each of the g-1 other GPUs of its
    // node (ReduceScatter reducing them). The pipeline fills through a network hop each way
    // through the switch and an intra hop. Approximate.
    const Shape s = shape_of(q);
    const int nodes = std::max(1, q.nodes);
    const u64 g = static_cast<u64>(std::max(1, s.p / nodes));
    const u64 rail = s.len * static_cast<u64>(nodes);
    const u64 piece = std::max<u64>(1, std::min(s.cut.piece, s.len));
    const bool rs = q.collective == Collective::kReduceScatter;
    const Time fill = s.intra.alpha() + s.intra.tau(piece) + s.inter.alpha_via_switch() +
                      s.inter.tau(piece) * 2 + (rs ? s.intra.gamma(piece) : Time());
    const Time t =
        fill + std::max({s.intra.stream((g - 1) * rail, piece), s.inter.stream(rail, piece),
                         rs ? s.intra.gamma((g - 1) * rail) : Time()});
    return {t, "collnet_direct: fill + max(τ(n_rail(g-1)) + (k-1)o, τ_net(n_rail) + (k'-1)o)",
            false};
  }
  // Every GPU a head (collnet.cpp): each GPU sends the node's other heads their blocks and
  // sends its own block's total on to them, (g-1)/g of n each way over NVLink, while its NIC
  // carries its block n/g to the network's switch and back, and it reduces g-1 blocks. The
  // pipeline fills through an intra hop, the switch (it reduces at its ports' rate) and another
  // intra hop. Approximate.
  const Shape s = shape_of(q);
  const int nodes = std::max(1, q.nodes);
  const u64 g = static_cast<u64>(std::max(1, s.p / nodes));
  const u64 block = ceil_div(s.len, g);
  const u64 piece = std::max<u64>(1, std::min(s.cut.piece, block));
  const Time fill = (s.intra.alpha() + s.intra.tau(piece)) * 2 + s.intra.gamma(piece) +
                    s.inter.alpha_via_switch() + s.inter.tau(piece) * 2;
  const Time t = fill + std::max({s.intra.stream(2 * (g - 1) * block, piece),
                                  s.inter.stream(block, piece), s.intra.gamma((g - 1) * block)});
  return {t, "collnet_direct: fill + max(τ(2n(g-1)/g) + (k-1)o, τ_net(n/g) + (k'-1)o, γ(n(g-1)/g))",
          false};
}

Estimate collnet_chain(const EstimateRequest& q) {
  // A chain of the node's g GPUs up to the head and back down (collnet.cpp): every GPU moves n
  // each way over NVLink, the head's NIC carries n to the network's switch and back, and the
  // pipeline fills through g-1 intra hops up, the switch, and g-1 down. Approximate.
  const Shape s = shape_of(q);
  const int nodes = std::max(1, q.nodes);
  const auto g = static_cast<std::int64_t>(std::max(1, s.p / nodes));
  const u64 piece = std::max<u64>(1, std::min(s.cut.piece, s.len));
  const Time hop = s.intra.alpha() + s.intra.tau(piece);
  const Time fill = (hop * 2 + s.intra.gamma(piece)) * (g - 1) + s.inter.alpha_via_switch() +
                    s.inter.tau(piece) * 2;
  const Time t = fill + std::max({s.intra.stream(s.len, piece), s.inter.stream(s.len, piece),
                                  s.intra.gamma(s.len)});
  return {
      t, "collnet_chain: fill + max(τ(n) + (k-1)o, τ_net(n) + (k'-1)o, γ(n)) up and down the chain",
      false};
}

}  // namespace collsim::closed_form
