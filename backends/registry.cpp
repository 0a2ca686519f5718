#include "backends/registry.hpp"

#include <fmt/format.h>

#include <cstdlib>

#include "backends/cpu_backend.hpp"
#include "topology/error.hpp"

#ifdef COLLSIM_HAVE_MPI
#include "backends/mpi/mpi_backend.hpp"
#include "backends/mpi/mpi_world.hpp"
#endif
#ifdef COLLSIM_HAVE_CUDA
#include "backends/cuda/cuda_backend.hpp"
#endif
#ifdef COLLSIM_HAVE_NCCL
#include "backends/nccl/nccl_backend.hpp"
#endif

namespace collsim {

namespace {

constexpr const char* kNoMpi =
    "collsim was built without MPI (no MPI found at configure time: install libopenmpi-dev "
    "openmpi-bin, or set COLLSIM_WITH_MPI=ON to make it an error)";
constexpr const char* kNoCuda =
    "collsim was built without CUDA (COLLSIM_WITH_CUDA=OFF or no toolkit found)";
constexpr const char* kNoNccl =
    "collsim was built without NCCL (COLLSIM_WITH_CUDA=OFF, no toolkit, or no nccl.h / libnccl "
    "found: set NCCL_HOME)";

#ifndef COLLSIM_HAVE_MPI
// The job's process count as the launcher's environment gives it; 0 when it does not say.
long launcher_world_size() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE",
                        "SLURM_STEP_NUM_TASKS"}) {
    if (const char* text = std::getenv(v)) return std::strtol(text, nullptr, 10);
  }
  return 0;
}
#endif

RequestError unknown_backend(std::string_view name) {
  return RequestError(
      fmt::format("unknown backend \"{}\": {}", name, expected_one_of(name, backend_names())));
}

}  // namespace

const std::vector<std::string>& backend_names() {
  static const std::vector<std::string> kNames = {"cpu",  "mpi",         "cuda",
                                                  "nccl", "nccl-native", "dry-run"};
  return kNames;
}

bool backend_built(std::string_view name) {
  if (name == "cpu" || name == "dry-run") return true;
#ifdef COLLSIM_HAVE_MPI
  if (name == "mpi") return true;
#endif
#ifdef COLLSIM_HAVE_CUDA
  if (name == "cuda") return true;
#endif
#ifdef COLLSIM_HAVE_NCCL
  if (name == "nccl" || name == "nccl-native") return true;
#endif
  return false;
}

BackendNeeds backend_needs(std::string_view name) {
  if (name == "cpu" || name == "dry-run") return BackendNeeds::kNothing;
  if (name == "mpi") return BackendNeeds::kMpiLauncher;
  if (name == "cuda" || name == "nccl" || name == "nccl-native") return BackendNeeds::kGpu;
  throw unknown_backend(name);
}

std::unique_ptr<Backend> make_backend(std::string_view name) {
  if (name == "cpu") return std::make_unique<CpuBackend>();
  if (name == "dry-run") return std::make_unique<DryRunBackend>();
  if (name == "mpi") {
#ifdef COLLSIM_HAVE_MPI
    return std::make_unique<MpiBackend>();
#else
    throw BackendError(kNoMpi);
#endif
  }
  if (name == "cuda") {
#ifdef COLLSIM_HAVE_CUDA
    return std::make_unique<CudaBackend>();
#else
    throw BackendError(kNoCuda);
#endif
  }
  if (name == "nccl" || name == "nccl-native") {
#ifdef COLLSIM_HAVE_NCCL
    return std::make_unique<NcclBackend>(name == "nccl" ? NcclBackend::Mode::kSchedule
                                                        : NcclBackend::Mode::kNative);
#else
    throw BackendError(kNoNccl);
#endif
  }
  throw unknown_backend(name);
}

std::unique_ptr<ProcessGroup> job_processes() {
  if (!launched_by_mpi()) return std::make_unique<ProcessGroup>();
#ifdef COLLSIM_HAVE_MPI
  return std::make_unique<MpiWorld>();
#else
  if (launcher_world_size() > 1) {
    throw BackendError(fmt::format("an MPI launcher started {} collsim processes, but {}; run one",
                                   launcher_world_size(), kNoMpi));
  }
  return std::make_unique<ProcessGroup>();
#endif
}

}  // namespace collsim
