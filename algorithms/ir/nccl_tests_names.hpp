// nccl-tests' vocabulary mapped onto collsim's and back: program names, data type and reduction
// names (the busbw factors live with the collectives, algorithms/ir/types.hpp). One table per
// vocabulary serves both directions, so that the tables collsim writes (cli/nccl_tests_table.hpp)
// and the logs it reads (calibrate/nccl_tests_reader.hpp) cannot disagree on a name.
//
//   collective_of_program("all_gather");      // Collective::kAllGather ("all_gather_perf")
//   nccl_tests_program(Collective::kAllGather);  // "all_gather"
//   nccl_tests_type(DataType::kBf16);         // "bfloat16"
//   nccl_tests_type_size("bfloat16");         // 2
//
// The names are nccl-tests' own (`float`, `half`, `mulsum`); collsim's spellings (`f32`, `bf16`)
// are accepted too, because collsim's CSV prints them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/ir/types.hpp"

namespace collsim {

// The nccl-tests program stem of a word such as "./build/all_reduce_perf_mpi" ("all_reduce"), or
// "" when the word does not name a *_perf or *_perf_mpi program.
std::string perf_program_stem(std::string_view word);

// The collective an nccl-tests program stem measures; nullopt for stems that are not collectives
// collsim models (hypercube) or not nccl-tests programs at all.
std::optional<Collective> collective_of_program(std::string_view stem);

// The nccl-tests programs collsim reads, "all_reduce_perf" first (for messages).
const std::vector<std::string>& nccl_tests_programs();
// The stem of the nccl-tests program measuring `c` ("all_reduce"); nullopt for Barrier, which
// nccl-tests has no program for.
std::optional<std::string_view> nccl_tests_program(Collective c);

// Element size of an nccl-tests (or collsim) type name; nullopt for names neither knows.
std::optional<std::size_t> nccl_tests_type_size(std::string_view name);
// collsim's DataType for a type name; nullopt for types collsim lacks (int8, uint32, fp8, ...).
std::optional<DataType> data_type_of(std::string_view name);
// collsim's ReduceOp for a reduction name; nullopt for "none" and operations collsim lacks.
std::optional<ReduceOp> reduce_op_of(std::string_view name);

// nccl-tests' names for collsim's type and reduction: "float", "bfloat16"; "sum", "avg".
std::string_view nccl_tests_type(DataType t);
std::string_view nccl_tests_redop(ReduceOp op);

}  // namespace collsim
