// Every backend by name, including the optional ones this build may lack.
//
//   std::unique_ptr<Backend> b = make_backend("mpi");   // BackendError if built without MPI
//   for (const std::string& n : backend_names()) std::cout << n << (backend_built(n) ? "" : " (not
//   built)");
//
// Names: cpu, dry-run (always built); mpi (when an MPI was found at configure time); cuda (a
// CUDA toolkit); nccl and nccl-native (CUDA and NCCL). An unknown name is a RequestError listing
// the known ones; a known one this build lacks is a BackendError saying why ("collsim was built
// without CUDA (COLLSIM_WITH_CUDA=OFF or no toolkit found)"); a GPU backend on a machine without
// a GPU fails when opened ("no CUDA device found (cudaGetDeviceCount: ...)").
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.hpp"

namespace collsim {

std::unique_ptr<Backend> make_backend(std::string_view name);

const std::vector<std::string>& backend_names();
bool backend_built(std::string_view name);

// What a backend needs at run time beyond being built, so that a test or a driver can tell
// "cannot run on this machine" from a failure: mpi, an MPI launcher (mpirun) starting one process
// per rank; cuda, nccl and nccl-native, a GPU. RequestError for an unknown name.
enum class BackendNeeds { kNothing, kMpiLauncher, kGpu };
BackendNeeds backend_needs(std::string_view name);

// The processes of the job this one belongs to: the MPI job (MpiWorld) when an MPI launcher
// started it, else this process alone. BackendError when a launcher started several processes
// and this build has no MPI (each would otherwise do and print the whole work).
std::unique_ptr<ProcessGroup> job_processes();

}  // namespace collsim
