# Finds the CUDA toolkit and NCCL for the optional GPU backends.
#
# COLLSIM_WITH_CUDA=AUTO builds them when both are found and prints why not otherwise;
# ON makes a missing toolkit a configure error; OFF skips the search. Results:
#   COLLSIM_HAVE_CUDA, COLLSIM_HAVE_NCCL (BOOL) and the imported target collsim::nccl.
set(COLLSIM_HAVE_CUDA OFF)
set(COLLSIM_HAVE_NCCL OFF)

string(TOUPPER "${COLLSIM_WITH_CUDA}" _collsim_cuda_mode)
if(NOT _collsim_cuda_mode MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "COLLSIM_WITH_CUDA must be AUTO, ON or OFF, got '${COLLSIM_WITH_CUDA}'")
endif()

if(_collsim_cuda_mode STREQUAL "OFF")
  message(STATUS "collsim: CUDA/NCCL backends off (COLLSIM_WITH_CUDA=OFF)")
  return()
endif()

# check_language looks on PATH; the toolkit's usual home and CUDA_HOME are added so a plain
# `cmake` finds it on machines where nvcc is installed but not on PATH.
if(NOT CMAKE_CUDA_COMPILER)
  foreach(_dir "$ENV{CUDA_HOME}/bin" "/usr/local/cuda/bin")
    if(EXISTS "${_dir}/nvcc")
      set(CMAKE_CUDA_COMPILER "${_dir}/nvcc" CACHE FILEPATH "CUDA compiler")
      break()
    endif()
  endforeach()
endif()
include(CheckLanguage)
check_language(CUDA)
if(NOT CMAKE_CUDA_COMPILER)
  set(_why "no CUDA compiler (nvcc) found on PATH, in CUDA_HOME or /usr/local/cuda")
elseif(NOT CMAKE_CUDA_ARCHITECTURES)
  # Hopper is the hardware collsim's GPU tests run on; Ampere keeps A100 machines usable.
  set(CMAKE_CUDA_ARCHITECTURES "80;90" CACHE STRING "CUDA architectures")
endif()

if(CMAKE_CUDA_COMPILER)
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  set(COLLSIM_HAVE_CUDA ON)
  find_path(COLLSIM_NCCL_INCLUDE_DIR nccl.h
            HINTS ENV NCCL_HOME ${CUDAToolkit_INCLUDE_DIRS} PATH_SUFFIXES include)
  find_library(COLLSIM_NCCL_LIBRARY nccl
               HINTS ENV NCCL_HOME ${CUDAToolkit_LIBRARY_DIR} PATH_SUFFIXES lib lib64)
  if(COLLSIM_NCCL_INCLUDE_DIR AND COLLSIM_NCCL_LIBRARY)
    set(COLLSIM_HAVE_NCCL ON)
    add_library(collsim::nccl UNKNOWN IMPORTED)
    set_target_properties(collsim::nccl PROPERTIES
      IMPORTED_LOCATION "${COLLSIM_NCCL_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${COLLSIM_NCCL_INCLUDE_DIR}")
    message(STATUS "collsim: CUDA ${CUDAToolkit_VERSION} and NCCL (${COLLSIM_NCCL_LIBRARY}) found; "
                   "GPU backends will be built")
  else()
    message(STATUS "collsim: CUDA ${CUDAToolkit_VERSION} found but no NCCL (nccl.h / libnccl, set "
                   "NCCL_HOME); the CUDA backend will be built without NCCL")
  endif()
else()
  if(_collsim_cuda_mode STREQUAL "ON")
    message(FATAL_ERROR "COLLSIM_WITH_CUDA=ON but ${_why}")
  endif()
  message(STATUS "collsim: GPU backends not built: ${_why}")
endif()
