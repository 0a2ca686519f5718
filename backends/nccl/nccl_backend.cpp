#include "backends/nccl/nccl_backend.hpp"

#include <fmt/format.h>

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/device_ranks.hpp"
#include "backends/nccl/nccl_check.hpp"
#include "backends/nccl/nccl_comms.hpp"
#include "topology/error.hpp"

#ifdef COLLSIM_HAVE_MPI
#include "backends/mpi/mpi_world.hpp"
#endif

namespace collsim {

NcclBackend::NcclBackend(Mode mode) : mode_(mode) {
  cuda_device_count();  // "no CUDA device found (...)" before anything else
#ifdef COLLSIM_HAVE_MPI
  if (launched_by_mpi()) world_ = std::make_unique<MpiWorld>();
#endif
  comms_ = std::make_unique<NcclComms>(world_.get());
  if (!world_) world_ = std::make_unique<ProcessGroup>();
}

NcclBackend::~NcclBackend() = default;

ProcessGroup& NcclBackend::processes() { return *world_; }

std::vector<std::string> NcclBackend::header_comments() const {
  int code = 0;
  nccl_check(ncclGetVersion(&code), "ncclGetVersion");
  // NCCL_VERSION_CODE since 2.9: 10000 x major + 100 x minor + patch.
  return {fmt::format("NCCL version {}.{}.{}", code / 10000, code / 100 % 100, code % 100)};
}

int NcclBackend::preferred_ranks() const { return comms_->rank_count(); }

std::vector<int> NcclBackend::local_ranks(const Schedule& s) const {
  if (s.rank_count() != comms_->rank_count()) {
    throw BackendError(fmt::format(
        "{} backend: the schedule has {} ranks but NCCL runs {} here (one per {}); ask for "
        "--ranks {}{}",
        name(), s.rank_count(), comms_->rank_count(),
        world_->size() > 1 ? "MPI process" : "visible GPU", comms_->rank_count(),
        world_->size() > 1 ? ""
                           : ", or use the cuda backend, which places several ranks on a GPU"));
  }
  return comms_->local_ranks();
}

Backend::Placement NcclBackend::placement(int rank) const {
  const int device = world_->size() > 1 ? rank % cuda_device_count() : comms_->device_of(rank);
  return {device, describe_device(device)};
}

RunResult NcclBackend::run(const Schedule& s, HostBuffers& buffers, const RunOptions& options) {
  refuse_switch_actors(s, "nccl");
  const std::vector<int> ranks = local_ranks(s);
  check_buffers(s, buffers, ranks);
  const ScheduleInfo& i = s.info();
  const bool fresh = !dev_ || dev_source_ != s.source() || dev_info_.count != i.count ||
                     dev_info_.channels != i.channels || dev_info_.ranks != i.ranks ||
                     dev_info_.fifo.slot_payload != i.fifo.slot_payload;
  if (fresh) {
    dev_.reset();
    std::vector<int> devices;
    for (int r : ranks) devices.push_back(comms_->device_of(r));
    // Per stream: a staging piece for recv-reduce-send, and the landing piece of receives.
    const std::uint64_t piece = std::max<std::uint64_t>(16, i.fifo.slot_payload);
    dev_ = std::make_unique<DeviceRanks>(s, ranks, devices, 2 * piece);
    dev_source_ = s.source();
    dev_info_ = i;
  }
  comms_->ensure_channels(mode_ == Mode::kSchedule ? s.channel_count() : 1);
  if (fresh || !options.same_inputs) dev_->upload_inputs(buffers);
  RunResult res = mode_ == Mode::kSchedule ? run_nccl_schedule(s, *comms_, *dev_, options)
                                           : run_nccl_native(s, *comms_, *dev_);
  if (!options.discard_outputs) dev_->download_outputs(buffers);
  return res;
}

}  // namespace collsim
