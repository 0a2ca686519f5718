# Sanitizer and fuzzing builds (issue: hardening; README "Development").
#
#   COLLSIM_SANITIZE=address,undefined   every target built and linked with these sanitizers
#   COLLSIM_FUZZ=ON                      also build the libFuzzer targets in fuzz/ (needs clang)
#
# `make test-asan` and `make fuzz` configure a separate build directory with both (Makefile).
set(COLLSIM_SANITIZE "" CACHE STRING "Sanitizers for every target, e.g. address,undefined")
option(COLLSIM_FUZZ "Build the libFuzzer targets (clang only)" OFF)

if(COLLSIM_SANITIZE)
  set(_collsim_san -fsanitize=${COLLSIM_SANITIZE} -fno-omit-frame-pointer
                   -fno-sanitize-recover=all)
  add_compile_options(${_collsim_san})
  add_link_options(${_collsim_san})
  message(STATUS "collsim: sanitizers ${COLLSIM_SANITIZE}")
endif()

if(COLLSIM_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "COLLSIM_FUZZ=ON needs clang (libFuzzer): configure with "
                        "CXX=clang++ (got ${CMAKE_CXX_COMPILER_ID})")
  endif()
  # Everything instrumented for coverage; only the fuzz executables link libFuzzer's main.
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
