// The vocabulary of a collective request: which collective, protocol, data type and reduction.
//
// Every enum has a to_string() giving the spelling the CLI prints and a parse_*() that accepts
// what users type (case-insensitive; `all_reduce`, `all-reduce` and `allreduce` are the same
// collective, as nccl-tests and docs/cli.md spell them) and throws RequestError listing the
// accepted names otherwise.
//
//   Collective c = parse_collective("all_reduce");            // Collective::kAllReduce
//   const ProtocolGeometry& g = geometry(Protocol::kSimple);   // 8 slots of 512 KiB
//   std::size_t e = element_size(DataType::kBf16);             // 2
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace collsim {

enum class Collective {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kGather,
  kScatter,
  kAllToAll,
  kBarrier,
  kSendRecv,
};
inline constexpr int kCollectiveCount = 10;

enum class Protocol { kLL, kLL128, kSimple };
inline constexpr int kProtocolCount = 3;

// NCCL's ncclDataType_t, all twelve (src/nccl.h.in; the two 8-bit floats from 2.24).
enum class DataType { kF16, kBf16, kF32, kF64, kI32, kI64, kU8, kI8, kU32, kU64, kF8E4M3, kF8E5M2 };
inline constexpr int kDataTypeCount = 12;

enum class ReduceOp { kSum, kProd, kMin, kMax, kAvg };
inline constexpr int kReduceOpCount = 5;

std::string_view to_string(Collective c);
std::string_view to_string(Protocol p);
std::string_view to_string(DataType t);
std::string_view to_string(ReduceOp op);

// Parsers; each throws RequestError("unknown collective \"x\": expected one of ...").
Collective parse_collective(std::string_view text);
Protocol parse_protocol(std::string_view text);
DataType parse_data_type(std::string_view text);
ReduceOp parse_reduce_op(std::string_view text);

// All values of each enum, in declaration order (for matrices and contract tests).
const std::vector<Collective>& all_collectives();
const std::vector<Protocol>& all_protocols();
const std::vector<DataType>& all_data_types();
const std::vector<ReduceOp>& all_reduce_ops();

std::size_t element_size(DataType t);
bool is_floating(DataType t);

// Whether the collective combines values with a ReduceOp.
bool is_reduction(Collective c);
// Whether the collective has a root rank (Broadcast, Reduce, Gather, Scatter).
bool has_root(Collective c);
// Whether NCCL runs the collective as a group of ncclSend/ncclRecv on its point-to-point
// kernel (nccl-tests' alltoall, gather, scatter and sendrecv), not as a collective kernel.
bool is_nccl_p2p(Collective c);
// Whether nccl-tests' "count" for this collective is per rank-block (AllGather, ReduceScatter,
// AllToAll, Gather, Scatter), so that buffers hold ranks x count elements.
bool is_blocked(Collective c);

// busbw = algbw x busbw_factor (docs/nccl-model.md §3, nccl-tests doc/PERFORMANCE.md):
// 2(n-1)/n for AllReduce; (n-1)/n for ReduceScatter, AllGather, AllToAll, Gather, Scatter;
// 1 for Broadcast, Reduce, SendRecv and Barrier.
double busbw_factor(Collective c, int ranks);
// The c of c(n-1)/n, or 0 where the factor is 1 whatever the rank count.
int busbw_factor_scale(Collective c);
// "2(n-1)/n", "(n-1)/n" or "1", for messages.
std::string_view busbw_factor_formula(Collective c);

// The bounded FIFO of one connection (one channel, one sender, one receiver), as NCCL sizes it
// (docs/nccl-model.md §2.3, NCCL `src/include/device.h` NCCL_STEPS and `src/init.cc` buffer sizes):
//   simple: 4 MiB buffer / 8 steps  -> 524288-B slots, all payload;
//   ll:     512 KiB / 8             -> 65536-B slots, half flags -> 32768 B payload;
//   ll128:  4915200 B / 8           -> 614400-B slots, 120 of 128 B payload -> 576000 B.
// And the bytes one pass of a channel's threads moves, the grain in which LL and LL128 forward a
// piece they receive (docs/theory.md §2.5, `--line-forwarding`):
//   ll:     each of NCCL_LL_MAX_NTHREADS = 512 threads polls and forwards one 16-byte line a trip
//           (src/device/prims_ll.h, LLGenericOp: offset += nthreads) -> 8192 B;
//   ll128:  each of 640 / 32 = 20 warps polls a slice of 32 x NCCL_LL128_SHMEM_ELEMS_PER_THREAD
//           (8) 8-byte words, waits for every flag in it, then stores it on (prims_ll128.h,
//           GenericOp: WireWordPerSlice) -> 20 x 2048 = 40960 B;
//   simple: 0, a slice's flag follows all of it (prims_simple.h): store and forward.
struct ProtocolGeometry {
  int slots = 8;                   // NCCL_STEPS
  std::uint64_t slot_bytes = 0;    // bytes a slot occupies in the connection buffer
  std::uint64_t slot_payload = 0;  // user bytes a slot carries
  std::uint64_t pass_bytes = 0;    // wire bytes one pass of a channel forwards (0: a whole slice)
};
const ProtocolGeometry& geometry(Protocol p);

}  // namespace collsim
