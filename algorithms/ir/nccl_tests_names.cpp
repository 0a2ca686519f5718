#include "algorithms/ir/nccl_tests_names.hpp"

#include <array>
#include <utility>

namespace collsim {

namespace {

struct Program {
  std::string_view stem;
  Collective collective;
};

// nccl-tests' src/*.cu programs, one per collective (hypercube_perf is left out on purpose: it
// measures a pattern, not a collective collsim models).
constexpr std::array<Program, 9> kPrograms = {{
    {"all_reduce", Collective::kAllReduce},
    {"all_gather", Collective::kAllGather},
    {"reduce_scatter", Collective::kReduceScatter},
    {"broadcast", Collective::kBroadcast},
    {"reduce", Collective::kReduce},
    {"alltoall", Collective::kAllToAll},
    {"sendrecv", Collective::kSendRecv},
    {"gather", Collective::kGather},
    {"scatter", Collective::kScatter},
}};

struct TypeName {
  std::string_view name;
  std::size_t size;
  std::optional<DataType> type;
};

// nccl-tests' names come before collsim's, so that the first entry of a DataType is the name the
// writer prints.
constexpr std::array<TypeName, 24> kTypes = {{
    {"int8", 1, DataType::kI8},
    {"uint8", 1, DataType::kU8},
    {"int32", 4, DataType::kI32},
    {"uint32", 4, DataType::kU32},
    {"int64", 8, DataType::kI64},
    {"uint64", 8, DataType::kU64},
    {"half", 2, DataType::kF16},
    {"float", 4, DataType::kF32},
    {"double", 8, DataType::kF64},
    {"bfloat16", 2, DataType::kBf16},
    {"f8e4m3", 1, DataType::kF8E4M3},
    {"f8e5m2", 1, DataType::kF8E5M2},
    // collsim's own spellings (CSV output).
    {"f16", 2, DataType::kF16},
    {"bf16", 2, DataType::kBf16},
    {"f32", 4, DataType::kF32},
    {"f64", 8, DataType::kF64},
    {"i32", 4, DataType::kI32},
    {"i64", 8, DataType::kI64},
    {"u8", 1, DataType::kU8},
    {"i8", 1, DataType::kI8},
    {"u32", 4, DataType::kU32},
    {"u64", 8, DataType::kU64},
    // nccl-tests' names before NCCL 2.x's full type list (src/common.cu's other test_typenames).
    {"char", 1, DataType::kI8},
    {"int", 4, DataType::kI32},
}};

constexpr std::array<std::pair<std::string_view, ReduceOp>, kReduceOpCount> kOps = {{
    {"sum", ReduceOp::kSum},
    {"prod", ReduceOp::kProd},
    {"min", ReduceOp::kMin},
    {"max", ReduceOp::kMax},
    {"avg", ReduceOp::kAvg},
}};

const TypeName* find_type(std::string_view name) {
  for (const TypeName& t : kTypes) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

}  // namespace

std::string perf_program_stem(std::string_view word) {
  // Trailing punctuation comes from prose around a command ("all_reduce_perf;").
  while (!word.empty() && (word.back() == ';' || word.back() == ',' || word.back() == ')' ||
                           word.back() == '"' || word.back() == '\'')) {
    word.remove_suffix(1);
  }
  if (const auto slash = word.rfind('/'); slash != std::string_view::npos) {
    word.remove_prefix(slash + 1);
  }
  for (std::string_view suffix : {"_perf_mpi", "_perf"}) {
    if (word.size() > suffix.size() && word.ends_with(suffix)) {
      word.remove_suffix(suffix.size());
      for (char c : word) {
        if (!((c >= 'a' && c <= 'z') || c == '_')) return "";
      }
      return std::string(word);
    }
  }
  return "";
}

std::optional<Collective> collective_of_program(std::string_view stem) {
  for (const Program& p : kPrograms) {
    if (p.stem == stem) return p.collective;
  }
  return std::nullopt;
}

const std::vector<std::string>& nccl_tests_programs() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const Program& p : kPrograms) v.push_back(std::string(p.stem) + "_perf");
    return v;
  }();
  return names;
}

std::optional<std::size_t> nccl_tests_type_size(std::string_view name) {
  const TypeName* t = find_type(name);
  if (t == nullptr) return std::nullopt;
  return t->size;
}

std::optional<DataType> data_type_of(std::string_view name) {
  const TypeName* t = find_type(name);
  if (t == nullptr) return std::nullopt;
  return t->type;
}

std::optional<ReduceOp> reduce_op_of(std::string_view name) {
  for (const auto& [n, op] : kOps) {
    if (n == name) return op;
  }
  return std::nullopt;
}

std::optional<std::string_view> nccl_tests_program(Collective c) {
  for (const Program& p : kPrograms) {
    if (p.collective == c) return p.stem;
  }
  return std::nullopt;
}

std::string_view nccl_tests_type(DataType t) {
  for (const TypeName& n : kTypes) {
    if (n.type == t) return n.name;
  }
  return to_string(t);  // unreachable: every DataType has an nccl-tests name
}

std::string_view nccl_tests_redop(ReduceOp op) {
  for (const auto& [n, o] : kOps) {
    if (o == op) return n;
  }
  return to_string(op);  // unreachable: every ReduceOp has an nccl-tests name
}

}  // namespace collsim
