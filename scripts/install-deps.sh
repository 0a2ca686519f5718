#!/usr/bin/env bash
# Installs the Debian packages collsim builds with, when missing (a no-op when all are present).
# Called by `make demo` and `make test`; safe to run by hand. Needs root (or sudo) only when
# something is missing.
set -euo pipefail

packages=(
  cmake g++ make pkg-config
  libboost-graph-dev      # the cluster graph, max-flow for bisection bandwidth
  libeigen3-dev           # least-squares fitting (calibration)
  libyaml-cpp-dev         # cluster descriptions
  libgtest-dev libgmock-dev
  libbenchmark-dev        # bench/
  libcli11-dev            # command line
  libfmt-dev              # formatting
  nlohmann-json3-dev      # JSON output and traces
  libopenmpi-dev openmpi-bin  # the MPI backend (mpirun -np 4 in the tests)
  gnuplot-nox             # collsim compare --plot (SVG / PNG)
  python3                 # the docs tests (scripts/check-doc-refs.py, scripts/docs-examples.py)
  python3-dev pybind11-dev python3-pybind11  # the Python module (python/, docs/python.md)
  python3-pytest          # its tests (tests/python)
  graphviz                # collsim topo --svg (dot -Tsvg)
  bsdutils                # `script`: the progress test's pseudo-terminal
  clang libclang-rt-14-dev  # make test-asan and make fuzz: sanitizer runtimes and libFuzzer
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "collsim: installing missing packages: ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
