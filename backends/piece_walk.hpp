// How every backend walks the pieces of a send or receive op: the op's bytes cut into FIFO
// pieces of `payload` bytes (the schedule's slot payload; a 0-byte op is one empty piece), each
// piece first received (if the op receives) and then sent on (if it sends), resuming where the
// last call stopped when a piece has not arrived or the outgoing FIFO is full.
//
//   PieceWalk w = walk_pieces(st.piece, st.received, op, payload_, progress,
//       [&](std::uint64_t off, std::size_t len) { return receive(st, op, off, len); },
//       [&](std::uint64_t off, std::size_t len) { return send(st, op, off, len); });
//   if (w == PieceWalk::kBlocked) return progress;   // come back when something moved
//
// `recv(off, len)` returns false while the piece has not arrived; `send(off, len)` returns false
// while the FIFO has no free slot (the piece is then retried without being received again).
// `piece` and `received` are the caller's resumable state; `progress` turns true whenever a piece
// was received, sent or finished.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "algorithms/ir/op.hpp"

namespace collsim {

inline std::uint64_t piece_count(std::uint64_t bytes, std::uint64_t payload) {
  return bytes == 0 ? 1 : (bytes + payload - 1) / payload;
}

enum class PieceWalk { kDone, kBlocked };

template <class Recv, class Send>
PieceWalk walk_pieces(std::uint64_t& piece, bool& received, const Op& op, std::uint64_t payload,
                      bool& progress, Recv&& recv, Send&& send) {
  const std::uint64_t pieces = piece_count(op.bytes, payload);
  while (piece < pieces) {
    const std::uint64_t off = piece * payload;
    const auto len =
        static_cast<std::size_t>(std::min(payload, op.bytes - std::min(off, op.bytes)));
    if (receives(op.kind) && !received) {
      if (!recv(off, len)) return PieceWalk::kBlocked;
      received = true;
      progress = true;
    }
    if (sends(op.kind)) {
      if (!send(off, len)) return PieceWalk::kBlocked;
    }
    received = false;
    ++piece;
    progress = true;
  }
  return PieceWalk::kDone;
}

}  // namespace collsim
