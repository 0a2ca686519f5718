# Finds Python and pybind11 for the Python module `collsim` (python/, docs/python.md).
#
# COLLSIM_WITH_PYTHON=AUTO builds it when both are found and prints why not otherwise; ON makes a
# missing one a configure error; OFF skips the search. Results: COLLSIM_PYTHON (BOOL) and
# COLLSIM_PYTEST_PYTHON, the interpreter that runs the pytest suite: Python3_EXECUTABLE when it
# can import pytest, otherwise another python3 of the same version that can (Debian's
# python3-pytest installs for /usr/bin/python3, which a pyenv or venv python3 on PATH hides).
set(COLLSIM_PYTHON OFF)
set(COLLSIM_WITH_PYTHON AUTO CACHE STRING "Build the Python module (pybind11): AUTO, ON or OFF")
set_property(CACHE COLLSIM_WITH_PYTHON PROPERTY STRINGS AUTO ON OFF)

string(TOUPPER "${COLLSIM_WITH_PYTHON}" _collsim_python_mode)
if(NOT _collsim_python_mode MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "COLLSIM_WITH_PYTHON must be AUTO, ON or OFF, got '${COLLSIM_WITH_PYTHON}'")
endif()
if(_collsim_python_mode STREQUAL "OFF")
  message(STATUS "collsim: Python module off (COLLSIM_WITH_PYTHON=OFF)")
  return()
endif()

find_package(Python3 COMPONENTS Interpreter Development.Module QUIET)
if(Python3_FOUND)
  set(PYBIND11_FINDPYTHON ON)
  find_package(pybind11 2.6 CONFIG QUIET)
endif()
if(NOT Python3_FOUND OR NOT pybind11_FOUND)
  set(_why "Python 3 headers (python3-dev) or pybind11 (pybind11-dev) not found")
  if(_collsim_python_mode STREQUAL "ON")
    message(FATAL_ERROR "COLLSIM_WITH_PYTHON=ON but ${_why}")
  endif()
  message(STATUS "collsim: Python module not built: ${_why}")
  return()
endif()
set(COLLSIM_PYTHON ON)
message(STATUS "collsim: Python module for ${Python3_EXECUTABLE} (${Python3_VERSION}), "
               "pybind11 ${pybind11_VERSION}")

function(_collsim_has_pytest python out)
  execute_process(COMMAND ${python} -c "import pytest, sys; print('%d.%d' % sys.version_info[:2])"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE version OUTPUT_STRIP_TRAILING_WHITESPACE
                  ERROR_QUIET)
  if(rc EQUAL 0 AND version STREQUAL "${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}")
    set(${out} ON PARENT_SCOPE)
  else()
    set(${out} OFF PARENT_SCOPE)
  endif()
endfunction()

if(NOT COLLSIM_PYTEST_PYTHON)
  set(_pytest_python ${Python3_EXECUTABLE})
  _collsim_has_pytest(${Python3_EXECUTABLE} _ok)
  if(NOT _ok)
    foreach(_candidate /usr/bin/python${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}
                       /usr/bin/python3)
      _collsim_has_pytest(${_candidate} _ok)
      if(_ok)
        set(_pytest_python ${_candidate})
        break()
      endif()
    endforeach()
  endif()
  if(NOT _ok)
    message(STATUS "collsim: no python${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR} with "
                   "pytest found (install python3-pytest); the python tests will fail")
  endif()
  set(COLLSIM_PYTEST_PYTHON ${_pytest_python} CACHE FILEPATH "the interpreter that runs pytest")
endif()
