# Finds MPI for the optional MPI backend (and NCCL's multi-process mode).
#
# COLLSIM_WITH_MPI=AUTO builds it when an MPI is found and prints why not otherwise; ON makes a
# missing MPI a configure error; OFF skips the search. Results: COLLSIM_HAVE_MPI (BOOL), the
# imported target MPI::MPI_CXX and MPIEXEC_EXECUTABLE / MPIEXEC_NUMPROC_FLAG for tests.
# collsim calls MPI's C API from C++; the deprecated MPI-2 C++ bindings are kept out.
set(COLLSIM_HAVE_MPI OFF)
set(COLLSIM_WITH_MPI AUTO CACHE STRING "Build the MPI backend: AUTO, ON or OFF")
set_property(CACHE COLLSIM_WITH_MPI PROPERTY STRINGS AUTO ON OFF)

string(TOUPPER "${COLLSIM_WITH_MPI}" _collsim_mpi_mode)
if(NOT _collsim_mpi_mode MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "COLLSIM_WITH_MPI must be AUTO, ON or OFF, got '${COLLSIM_WITH_MPI}'")
endif()

if(_collsim_mpi_mode STREQUAL "OFF")
  message(STATUS "collsim: MPI backend off (COLLSIM_WITH_MPI=OFF)")
  return()
endif()

set(MPI_CXX_SKIP_MPICXX ON CACHE BOOL "Do not use the MPI-2 C++ bindings")
find_package(MPI COMPONENTS CXX QUIET)
if(MPI_CXX_FOUND)
  set(COLLSIM_HAVE_MPI ON)
  message(STATUS "collsim: MPI ${MPI_CXX_VERSION} found (${MPIEXEC_EXECUTABLE}); the MPI backend "
                 "will be built")
elseif(_collsim_mpi_mode STREQUAL "ON")
  message(FATAL_ERROR "COLLSIM_WITH_MPI=ON but no MPI was found (install libopenmpi-dev "
                      "openmpi-bin, or point MPI_HOME at an MPI installation)")
else()
  message(STATUS "collsim: MPI backend not built: no MPI found (install libopenmpi-dev "
                 "openmpi-bin, or set MPI_HOME)")
endif()

# How the tests start MPI jobs: 4 processes on whatever cores there are (CI has 2), as root in a
# container, over loopback only. Open MPI reads these variables; other MPIs ignore them.
set(COLLSIM_MPI_TEST_ENV
  OMPI_ALLOW_RUN_AS_ROOT=1                             # CI containers run as root
  OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  OMPI_MCA_rmaps_base_oversubscribe=1                  # more processes than cores (4.x)
  PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe # the same for 5.x
  OMPI_MCA_hwloc_base_binding_policy=none              # do not pin 4 processes to 2 cores
  OMPI_MCA_mpi_yield_when_idle=1
  OMPI_MCA_pml=ob1                                     # no UCX: nothing probes the network
  OMPI_MCA_btl_tcp_if_include=lo                       # shared memory, else loopback
  OMPI_MCA_oob_tcp_if_include=lo
  OMPI_MCA_btl_vader_single_copy_mechanism=none        # containers forbid cross-process ptrace
)

# Under the sanitizers (make test-asan): Open MPI unloads its plugins before LeakSanitizer runs at
# exit, so the allocations they keep cannot be attributed (nor suppressed by library name). Leak
# checking is off for the MPI jobs only; AddressSanitizer and UBSan still check every access.
if(COLLSIM_SANITIZE)
  list(APPEND COLLSIM_MPI_TEST_ENV
    "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:strict_string_checks=1")
endif()
