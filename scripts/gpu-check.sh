#!/usr/bin/env bash
# Builds collsim on a machine with a GPU and runs what needs one: the tests labelled `gpu`, the
# CUDA and NCCL backends measured like nccl-tests, and the importer on this machine's own
# `nvidia-smi topo -m` and NCCL topology dump. Everything it prints also goes to OUTDIR.
#
#   scripts/gpu-check.sh OUTDIR [quick]
#
# Where our Debian packages are not installed (a GPU machine with no network), put their .deb
# files in .deb/ first (on a machine with apt: `mkdir -p .deb && cd .deb && apt-get download
# <the -dev packages of scripts/install-deps.sh and their runtime libraries>`): they are unpacked
# into a private prefix and CMake is pointed at it. NCCL is taken from NCCL_HOME, the CUDA
# toolkit, or PyTorch's nvidia-nccl wheel, in that order. `quick` skips the measurements.
set -uo pipefail

out=${1:?usage: scripts/gpu-check.sh OUTDIR [quick]}
mode=${2:-full}
mkdir -p "$out"
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GPU_BUILD_DIR:-$root/build-gpu}
jobs=$(nproc)

log() { echo "== $*" | tee -a "$out/summary.txt"; }

{
  echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,clocks.max.mem \
    --format=csv 2>&1
  nvcc --version 2>&1 | tail -2
  c++ --version 2>&1 | head -1
  cmake --version | head -1
  echo "cores: $jobs"
} >"$out/env.txt"
cat "$out/env.txt"

cmake_args=(-DCMAKE_BUILD_TYPE=Release -DCOLLSIM_WITH_CUDA=ON -DCOLLSIM_WITH_PYTHON=OFF)

# Our packages, unpacked into a prefix whose CMake files are made to point into it (Debian's
# name /usr/include and /usr/lib/x86_64-linux-gnu outright).
if compgen -G "$root/.deb/*.deb" >/dev/null; then
  prefix=/tmp/collsim-deps
  rm -rf "$prefix" && mkdir -p "$prefix"
  for f in "$root"/.deb/*.deb; do dpkg -x "$f" "$prefix"; done
  grep -rlE '/usr/(include|lib/x86_64-linux-gnu)' "$prefix/usr/lib/x86_64-linux-gnu/cmake" \
    "$prefix/usr/share/cmake" 2>/dev/null |
    xargs -r sed -i -E "s#([\"' ;(]|^)/usr/(include|lib/x86_64-linux-gnu)#\1$prefix/usr/\2#g"
  cmake_args+=(-DCMAKE_PREFIX_PATH="$prefix/usr")
  export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
fi

# NCCL: a library named libnccl.so is what find_library looks for; a wheel ships only .so.2.
if [ -z "${NCCL_HOME:-}" ] && [ ! -e /usr/local/cuda/include/nccl.h ]; then
  wheel=$(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__) if nvidia.nccl.__file__ else list(nvidia.nccl.__path__)[0])' 2>/dev/null)
  if [ -n "$wheel" ] && [ -e "$wheel/include/nccl.h" ]; then
    export NCCL_HOME=/tmp/collsim-nccl
    mkdir -p "$NCCL_HOME/lib"
    ln -sfn "$wheel/include" "$NCCL_HOME/include"
    ln -sf "$wheel"/lib/libnccl.so.2 "$NCCL_HOME/lib/libnccl.so.2"
    ln -sf libnccl.so.2 "$NCCL_HOME/lib/libnccl.so"
    export LD_LIBRARY_PATH="$NCCL_HOME/lib:$LD_LIBRARY_PATH"
  fi
fi
echo "NCCL_HOME=${NCCL_HOME:-}" >>"$out/env.txt"

log "configure and build ($jobs jobs)"
start=$SECONDS
if ! cmake -S "$root" -B "$build" "${cmake_args[@]}" >"$out/configure.log" 2>&1 ||
  ! cmake --build "$build" -j "$jobs" >"$out/build.log" 2>&1; then
  tail -40 "$out/configure.log" "$out/build.log" 2>/dev/null
  log "build failed"
  exit 1
fi
grep -E "collsim: (CUDA|GPU)" "$out/configure.log" | tee -a "$out/summary.txt"
log "built in $((SECONDS - start)) s"

log "ctest -L gpu"
ctest --test-dir "$build" -L gpu --output-on-failure -j 1 >"$out/ctest-gpu.log" 2>&1
rc=$?
grep -E "tests passed|Skipped|\*\*\*|Failed" "$out/ctest-gpu.log" | tee -a "$out/summary.txt"
[ "$mode" = quick ] && exit $rc

collsim=$build/cli/collsim
log "the cuda backend: ring AllReduce, 2/4/8 ranks on this one GPU"
for n in 2 4 8; do
  "$collsim" bench --backend cuda --ranks "$n" --op allreduce -b 8 -e 256M -f 8 -w 3 -n 10 \
    -o "$out/bench-cuda-allreduce-$n.txt" 2>&1 | tail -2
done
log "NCCL itself (nccl-native) and collsim's schedule through NCCL (nccl), 1 rank"
NCCL_TOPO_DUMP_FILE=$out/nccl-topo.xml "$collsim" bench --backend nccl-native --op allreduce \
  -b 8 -e 1G -f 2 -w 5 -n 20 -o "$out/bench-nccl-native-allreduce.txt" 2>&1 | tail -2
"$collsim" bench --backend nccl --op allreduce -b 8 -e 256M -f 8 -w 3 -n 10 \
  -o "$out/bench-nccl-allreduce.txt" 2>&1 | tail -2
# With one rank NCCL's collectives are copies; a send and receive to itself runs NCCL's own
# point-to-point kernel, its floor and its copy rate (docs/gpu.md, 2026-11-28).
"$collsim" bench --backend nccl-native --op sendrecv --algo direct -b 8 -e 1G -f 2 -w 5 -n 20 \
  -o "$out/bench-nccl-native-sendrecv.txt" 2>&1 | tail -2
log "collsim import on this machine's topology"
nvidia-smi topo -m >"$out/nvidia-smi-topo.txt" 2>&1
"$collsim" import "$out/nccl-topo.xml" -o "$out/imported-nccl-xml.yaml" 2>&1 | tee -a "$out/summary.txt"
# The matrix names no GPU model when no NVLink joins the GPUs: take the one the XML gave.
gpu=$(sed -n 's/^  gpu: //p' "$out/imported-nccl-xml.yaml" 2>/dev/null)
"$collsim" import "$out/nvidia-smi-topo.txt" --from nvidia-smi --nic-bandwidth 400G \
  ${gpu:+--gpu "$gpu"} -o "$out/imported-nvidia-smi.yaml" 2>&1 | tee -a "$out/summary.txt"

log "every other test (ctest -LE 'gpu|docs')"
ctest --test-dir "$build" -LE 'gpu|docs' -j "$jobs" --output-on-failure >"$out/ctest-rest.log" 2>&1 || rc=1
grep -E "tests passed|\*\*\*Failed" "$out/ctest-rest.log" | tee -a "$out/summary.txt"
exit $rc
