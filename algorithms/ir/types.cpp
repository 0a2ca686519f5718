#include "algorithms/ir/types.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "topology/error.hpp"

namespace collsim {

namespace {

constexpr std::array<std::string_view, kCollectiveCount> kCollectiveNames = {
    "allreduce", "allgather", "reducescatter", "broadcast", "reduce",
    "gather",    "scatter",   "alltoall",      "barrier",   "sendrecv"};
constexpr std::array<std::string_view, kProtocolCount> kProtocolNames = {"ll", "ll128", "simple"};
constexpr std::array<std::string_view, kDataTypeCount> kDataTypeNames = {
    "f16", "bf16", "f32", "f64", "i32", "i64", "u8", "i8", "u32", "u64", "f8e4m3", "f8e5m2"};
constexpr std::array<std::string_view, kReduceOpCount> kReduceOpNames = {"sum", "prod", "min",
                                                                         "max", "avg"};

// Lower case, with '_' and '-' removed: "All_Reduce" and "all-reduce" both become "allreduce".
std::string normalize(std::string_view text, bool drop_separators) {
  std::string out;
  for (char c : text) {
    if (drop_separators && (c == '_' || c == '-')) continue;
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

template <typename Enum, std::size_t N>
Enum parse_name(std::string_view text, const std::array<std::string_view, N>& names,
                std::string_view what, bool drop_separators) {
  const std::string key = normalize(text, drop_separators);
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == key) return static_cast<Enum>(i);
  }
  // A few accepted aliases that are not just separator variants.
  if (what == "data type") {
    static const std::array<std::pair<std::string_view, DataType>, 15> aliases = {{
        {"half", DataType::kF16},
        {"float16", DataType::kF16},
        {"bfloat16", DataType::kBf16},
        {"float", DataType::kF32},
        {"float32", DataType::kF32},
        {"double", DataType::kF64},
        {"int32", DataType::kI32},
        {"int64", DataType::kI64},
        {"int8", DataType::kI8},
        {"uint8", DataType::kU8},
        {"uint32", DataType::kU32},
        {"uint64", DataType::kU64},
        {"fp8e4m3", DataType::kF8E4M3},
        {"fp8e5m2", DataType::kF8E5M2},
        {"char", DataType::kI8},
    }};
    for (const auto& [alias, value] : aliases) {
      if (alias == key) return static_cast<Enum>(value);
    }
  }
  std::vector<std::string> candidates(names.begin(), names.end());
  throw RequestError(
      fmt::format("unknown {} \"{}\": {}", what, text, expected_one_of(text, candidates)));
}

template <typename Enum, std::size_t N>
std::vector<Enum> all_of() {
  std::vector<Enum> v;
  for (std::size_t i = 0; i < N; ++i) v.push_back(static_cast<Enum>(i));
  return v;
}

}  // namespace

std::string_view to_string(Collective c) { return kCollectiveNames.at(static_cast<int>(c)); }
std::string_view to_string(Protocol p) { return kProtocolNames.at(static_cast<int>(p)); }
std::string_view to_string(DataType t) { return kDataTypeNames.at(static_cast<int>(t)); }
std::string_view to_string(ReduceOp op) { return kReduceOpNames.at(static_cast<int>(op)); }

Collective parse_collective(std::string_view text) {
  return parse_name<Collective>(text, kCollectiveNames, "collective", true);
}
Protocol parse_protocol(std::string_view text) {
  return parse_name<Protocol>(text, kProtocolNames, "protocol", false);
}
DataType parse_data_type(std::string_view text) {
  return parse_name<DataType>(text, kDataTypeNames, "data type", false);
}
ReduceOp parse_reduce_op(std::string_view text) {
  return parse_name<ReduceOp>(text, kReduceOpNames, "reduce op", false);
}

const std::vector<Collective>& all_collectives() {
  static const auto v = all_of<Collective, kCollectiveCount>();
  return v;
}
const std::vector<Protocol>& all_protocols() {
  static const auto v = all_of<Protocol, kProtocolCount>();
  return v;
}
const std::vector<DataType>& all_data_types() {
  static const auto v = all_of<DataType, kDataTypeCount>();
  return v;
}
const std::vector<ReduceOp>& all_reduce_ops() {
  static const auto v = all_of<ReduceOp, kReduceOpCount>();
  return v;
}

std::size_t element_size(DataType t) {
  switch (t) {
    case DataType::kF16:
    case DataType::kBf16:
      return 2;
    case DataType::kF32:
    case DataType::kI32:
    case DataType::kU32:
      return 4;
    case DataType::kF64:
    case DataType::kI64:
    case DataType::kU64:
      return 8;
    case DataType::kU8:
    case DataType::kI8:
    case DataType::kF8E4M3:
    case DataType::kF8E5M2:
      return 1;
  }
  return 1;
}

bool is_floating(DataType t) {
  return t == DataType::kF16 || t == DataType::kBf16 || t == DataType::kF32 ||
         t == DataType::kF64 || t == DataType::kF8E4M3 || t == DataType::kF8E5M2;
}

bool is_reduction(Collective c) {
  return c == Collective::kAllReduce || c == Collective::kReduceScatter || c == Collective::kReduce;
}

bool has_root(Collective c) {
  return c == Collective::kBroadcast || c == Collective::kReduce || c == Collective::kGather ||
         c == Collective::kScatter;
}

bool is_nccl_p2p(Collective c) {
  return c == Collective::kAllToAll || c == Collective::kGather || c == Collective::kScatter ||
         c == Collective::kSendRecv;
}

bool is_blocked(Collective c) {
  return c == Collective::kAllGather || c == Collective::kReduceScatter ||
         c == Collective::kAllToAll || c == Collective::kGather || c == Collective::kScatter;
}

const ProtocolGeometry& geometry(Protocol p) {
  static const std::array<ProtocolGeometry, kProtocolCount> table = {{
      {8, 65536, 32768, 512 * 16},                   // ll
      {8, 614400, 576000, (640 / 32) * 32 * 8 * 8},  // ll128
      {8, 524288, 524288, 0},                        // simple
  }};
  return table.at(static_cast<int>(p));
}

int busbw_factor_scale(Collective c) {
  switch (c) {
    case Collective::kAllReduce:
      return 2;
    case Collective::kReduceScatter:
    case Collective::kAllGather:
    case Collective::kAllToAll:
    case Collective::kGather:
    case Collective::kScatter:
      return 1;
    case Collective::kBroadcast:
    case Collective::kReduce:
    case Collective::kSendRecv:
    case Collective::kBarrier:
      return 0;
  }
  return 0;
}

double busbw_factor(Collective c, int ranks) {
  const int scale = busbw_factor_scale(c);
  if (scale == 0) return 1.0;
  if (ranks <= 0) return 0.0;
  return scale * static_cast<double>(ranks - 1) / ranks;
}

std::string_view busbw_factor_formula(Collective c) {
  switch (busbw_factor_scale(c)) {
    case 2:
      return "2(n-1)/n";
    case 1:
      return "(n-1)/n";
    default:
      return "1";
  }
}

}  // namespace collsim
