// NCCL errors as BackendErrors (internal to backends/nccl).
//
//   nccl_check(ncclSend(...), "ncclSend", comm);
//   // "ncclSend: unhandled cuda error (run with NCCL_DEBUG=INFO for details); last error: ..."
#pragma once

#include <nccl.h>

#include "algorithms/ir/types.hpp"

namespace collsim {

// Throws BackendError("<call>: <ncclGetErrorString>[; <ncclGetLastError>]") unless ncclSuccess.
void nccl_check(ncclResult_t rc, const char* call, ncclComm_t comm = nullptr);

ncclDataType_t nccl_type(DataType t);
ncclRedOp_t nccl_op(ReduceOp op);

}  // namespace collsim
