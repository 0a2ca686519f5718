#include "backends/nccl/nccl_comms.hpp"

#include <fmt/format.h>

#include <cstring>

#include "backends/cuda/cuda_check.hpp"
#include "backends/nccl/nccl_check.hpp"
#include "topology/error.hpp"

namespace collsim {

void nccl_check(ncclResult_t rc, const char* call, ncclComm_t comm) {
  if (rc == ncclSuccess) return;
  std::string msg = fmt::format("{}: {}", call, ncclGetErrorString(rc));
  if (comm != nullptr) {
    const char* last = ncclGetLastError(comm);
    if (last != nullptr && *last != '\0') msg += fmt::format("; {}", last);
  }
  throw BackendError(msg);
}

ncclDataType_t nccl_type(DataType t) {
  switch (t) {
    case DataType::kF16:
      return ncclFloat16;
    case DataType::kBf16:
      return ncclBfloat16;
    case DataType::kF32:
      return ncclFloat32;
    case DataType::kF64:
      return ncclFloat64;
    case DataType::kI32:
      return ncclInt32;
    case DataType::kI64:
      return ncclInt64;
    case DataType::kU8:
      return ncclUint8;
    case DataType::kI8:
      return ncclInt8;
    case DataType::kU32:
      return ncclUint32;
    case DataType::kU64:
      return ncclUint64;
    case DataType::kF8E4M3:
    case DataType::kF8E5M2:
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 24, 0)
      return t == DataType::kF8E4M3 ? ncclFloat8e4m3 : ncclFloat8e5m2;
#else
      throw BackendError(fmt::format(
          "--dtype {}: this NCCL ({}.{}) has no 8-bit floats; NCCL reduces them from 2.24",
          to_string(t), NCCL_MAJOR, NCCL_MINOR));
#endif
  }
  return ncclFloat32;
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return ncclSum;
    case ReduceOp::kProd:
      return ncclProd;
    case ReduceOp::kMin:
      return ncclMin;
    case ReduceOp::kMax:
      return ncclMax;
    case ReduceOp::kAvg:
      return ncclAvg;
  }
  return ncclSum;
}

NcclComms::NcclComms(ProcessGroup* world) : world_(world) {
  const int gpus = cuda_device_count();
  if (world_ == nullptr) {
    ranks_ = gpus;
    for (int r = 0; r < gpus; ++r) {
      local_.push_back(r);
      devices_.push_back(r);
    }
  } else {
    ranks_ = world_->size();
    local_ = {world_->index()};
    devices_ = {world_->local_index() % gpus};
  }
}

NcclComms::~NcclComms() {
  for (auto& channel : comms_) {
    for (ncclComm_t c : channel) ncclCommDestroy(c);
  }
}

int NcclComms::device_of(int rank) const {
  for (std::size_t i = 0; i < local_.size(); ++i) {
    if (local_[i] == rank) return devices_[i];
  }
  throw BackendError(fmt::format("nccl backend: rank {} does not run in this process", rank));
}

void NcclComms::ensure_channels(int channels) {
  while (static_cast<int>(comms_.size()) < channels) {
    std::vector<ncclComm_t> made(local_.size(), nullptr);
    if (world_ == nullptr) {
      nccl_check(ncclCommInitAll(made.data(), ranks_, devices_.data()), "ncclCommInitAll");
    } else {
      ncclUniqueId id;
      if (world_->index() == 0) nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
      std::vector<char> bytes(sizeof(id));
      std::memcpy(bytes.data(), &id, sizeof(id));
      world_->broadcast(bytes);
      std::memcpy(&id, bytes.data(), sizeof(id));
      use_device(devices_[0]);
      nccl_check(ncclCommInitRank(&made[0], ranks_, id, local_[0]), "ncclCommInitRank");
    }
    comms_.push_back(std::move(made));
  }
}

ncclComm_t NcclComms::get(int channel, int rank) {
  ensure_channels(channel + 1);
  for (std::size_t i = 0; i < local_.size(); ++i) {
    if (local_[i] == rank) return comms_[channel][i];
  }
  throw BackendError(fmt::format("nccl backend: rank {} does not run in this process", rank));
}

}  // namespace collsim
