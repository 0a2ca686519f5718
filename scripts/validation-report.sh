#!/usr/bin/env bash
# Regenerates docs/validation.md: for each hardware class collsim has a preset for, calibrate on
# some of its published nccl-tests tables (tests/data/nccl-tests) and validate on the others
# (another collective, GPU count or size range), with collsim's simulation and with NCCL's own
# tuning model side by side, and plot predicted against measured busbw.
#
#   make validation            # or: scripts/validation-report.sh [path/to/collsim]
#
# Every fit starts from the NCCL-sourced default costs (--default-costs), which are what the
# presets ship (they carry no fitted values: docs/calibration.md), so the "uncalibrated" column is
# what a preset predicts. Each is --cross-check: with two or more training tables, what one of
# them does not carry over to when fitted without it stays at its default (docs/calibration.md).
#
# Leave one class out: for each class, one joint fit (calibrate --also) on the training tables of
# every OTHER hardware family, with one value of each parameter for all of them, then validated on
# this class's validation tables. That is the figure that says how collsim does on hardware it
# was not fitted to. Each is fitted with --shared-only: a parameter that one of those families'
# rows alone determine is that family's own trait and stays at its default, since the class
# predicted is none of them, and so does one that, fitted without each training cluster in turn,
# predicts any cluster left out worse than the defaults do (docs/calibration.md). LOCO_JOBS
# (default 1) runs that many of those fits at once.
# SKIP_CLASS_FITS=1 keeps the per-class results already in docs/validation and redoes only the
# leave-one-class-out fits and the report; LOCO_ONLY="name ..." then redoes only those classes'
# leave-one-class-out results and keeps the others'. Classes of one family share one
# leave-one-class-out fit (their training sets are the same), so it is fitted once.
# VALIDATION_OUT (default docs/validation) puts the results elsewhere, the report with them as
# validation.md; LOCO_FIX="PATTERN ..." holds those parameters at the defaults in the
# leave-one-class-out fits (calibrate --fix).
#
# Takes a few minutes for the per-class fits (each calibration simulates every training row a few
# hundred times), and about 5x that for the leave-one-class-out fits (2026-11-25, 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
COLLSIM=${1:-build/cli/collsim}
D=tests/data/nccl-tests
OUT=${VALIDATION_OUT:-docs/validation}
LOCO_JOBS=${LOCO_JOBS:-1}
# Parameters every leave-one-class-out fit holds at the defaults (calibrate --fix), by pattern.
# A channel's cap is one CTA's rate, which NCCL's constants give per GPU architecture (Ampere,
# Hopper and Blackwell differ by 1.5-2x, simulator/cost_params.cpp); a joint fit across classes
# has one value of each parameter for all of them, so an H100 table would set the A100 cap and
# the other way round. Each class keeps its own architecture's caps instead.
LOCO_FIX=${LOCO_FIX-protocols.*.channel_bandwidth}
# Classes whose training tables the other classes' leave-one-class-out fits leave out: tables that
# measured a setup rather than the hardware. a100-roce: the OCI RoCE table reached 71.6 GB/s
# busbw across two nodes, and the later revision of the same page measured 222.9 GB/s on the same
# two machines (NCCL 2.15.5, NCCL_IB_GID_INDEX=3, 4 QPs; tests/data/nccl-tests INDEX.md), while
# both revisions' one-node runs agree; in the joint fits that table carried half of what set
# LL128's efficiency and launch for every other class (docs/calibration.md, Known limits). The
# class itself is still fitted and validated on it.
LOCO_POOL_SKIP=${LOCO_POOL_SKIP-a100-roce}
mkdir -p "$OUT"
if [ -n "${LOCO_ONLY:-}" ]; then
  [ "${SKIP_CLASS_FITS:-0}" = 1 ] || { echo "LOCO_ONLY needs SKIP_CLASS_FITS=1" >&2; exit 1; }
  for name in $LOCO_ONLY; do rm -f "$OUT/$name".loco.*; done
elif [ "${SKIP_CLASS_FITS:-0}" = 1 ]; then
  rm -f "$OUT"/*.loco.*
else
  rm -f "$OUT"/*.json "$OUT"/*.yaml "$OUT"/*.txt
fi

# What leave-one-class-out needs of each class: its family (classes of one family are the same
# hardware and are left out together), config, --nodes, training files (options dropped: the
# rows of another family are never this class's) and validation arguments.
declare -A FAMILY CONFIG NODES TRAIN TEST
CLASSES=()

# name, config, --nodes for validation ("" for the config's), training files and options
# (or reuse:NAME for another class's overlay), validation files and options.
run_class() {
  local name=$1 config=$2 nodes=$3 train=$4 test=$5
  CLASSES+=("$name")
  FAMILY[$name]=${name%-4node}
  CONFIG[$name]=$config
  NODES[$name]=$nodes
  TEST[$name]=$test
  if [[ $train == reuse:* ]]; then
    TRAIN[$name]=${TRAIN[${train#reuse:}]}
  else
    TRAIN[$name]=$(echo "$train" | grep -o -- '--measurements [^ ]*' | cut -d' ' -f2 | tr '\n' ' ')
  fi
  [ "${SKIP_CLASS_FITS:-0}" = 1 ] && return
  local nodes_opt=()
  [ -n "$nodes" ] && nodes_opt=(--nodes "$nodes")
  if [[ $train == reuse:* ]]; then
    cp "$OUT/${train#reuse:}.yaml" "$OUT/$name.yaml"
    echo "== $name: the overlay of ${train#reuse:}" >&2
  else
    echo "== $name: calibrate $config on: $train" >&2
    # shellcheck disable=SC2086
    "$COLLSIM" calibrate "$config" --default-costs $train --cross-check -o "$OUT/$name.yaml" \
      > "$OUT/$name.calibrate.txt"
  fi
  for model in sim nccl; do
    # shellcheck disable=SC2086
    "$COLLSIM" validate "$config" "${nodes_opt[@]}" --default-costs --costs "$OUT/$name.yaml" $test \
      --model "$model" --format json > "$OUT/$name.$model.json"
    # shellcheck disable=SC2086
    "$COLLSIM" validate "$config" "${nodes_opt[@]}" --default-costs $test --model "$model" \
      --format json \
      > "$OUT/$name.$model.uncalibrated.json"
  done
}

run_class h100-nvswitch dgx-h100 "" \
  "--measurements $D/h100x4_1node_allreduce_waynehacking8.txt --measurements $D/h100x4_1node_allgather_waynehacking8.txt" \
  "--measurements $D/h100x4_1node_reducescatter_waynehacking8.txt
   --measurements $D/h100x4_1node_allreduce_algosweep-Ring-Tree-NVLS_waynehacking8.txt
   --measurements $D/h100x4_1node_allreduce_protosweep-Simple-LL-LL128_waynehacking8.txt
   --measurements $D/h100x4_1node_allreduce_small-msg_reg0_graph0_waynehacking8.txt
   --measurements $D/h100x4_1node_allreduce_small-msg_reg0_graph1_waynehacking8.txt
   --measurements $D/h100x2-4-6_1node_allreduce_gpu-scaling_waynehacking8.txt
   --measurements $D/h100x8_1node_allreduce_NVLS_together.txt
   --measurements $D/h100x8_1node_allreduce_xxrjun-cluster01.txt
   --measurements $D/h100x8_1node_allgather_xxrjun-cluster01.txt
   --measurements $D/h100x8_1node_reducescatter_xxrjun-cluster01.txt
   --measurements $D/h100x8_1node_alltoall_xxrjun-cluster01.txt
   --measurements $D/h100x8_1node_sendrecv_xxrjun-cluster01.txt"

# Its table ran from one thread driving all 8 GPUs (-g 8): below 64 KiB every row is the host's
# 8 launches, so only the mid sizes speak for the GPU's LL launch, and they trade it against
# LL's rate (a fit drove it to 0). NCCL's baseLat is held there.
run_class a100-nvswitch dgx-a100 "" \
  "--measurements $D/a100x8_1node_allreduce_oci-bm-gpu4.8_ocitutorials.txt --max-bytes 32M --fix protocols.ll.launch" \
  "--measurements $D/a100x8_1node_allreduce_oci-bm-gpu4.8_ocitutorials.txt --min-bytes 33M
   --measurements $D/a100x8_1node_sendrecv_li-plus-playground.txt"

run_class h100-ib-4gpu-nodes h100-4gpu-2node-ndr200 "" \
  "--measurements $D/h100x8_2node-4gpu_allreduce_snellius-ib-4xNDR200_odissei.txt --measurements $D/h100x8_2node-4gpu_allgather_snellius-ib-4xNDR200_odissei.txt" \
  "--measurements $D/h100x8_2node-4gpu_reducescatter_snellius-ib-4xNDR200_odissei.txt"

run_class h100-ib-8nic h100-2node-ib "" \
  "--measurements $D/h100x16_2node_allreduce_ib-400G_NCCL_ALGO-Ring_MIN_CTAS24-QPS2_nccl-tests-issue309-gjaion.txt" \
  "--measurements $D/h100x16_2node_allreduce_dell-xe9680-ib-8x400G-nvls_nccl-tests-issue309.txt"

run_class h100-ib-8nic-4node h100-2node-ib 4 reuse:h100-ib-8nic \
  "--measurements $D/h100x32_4node_allreduce_voltagepark-ib-8x400G_vpbenchmarking.txt"

run_class a100-roce a100-2node-roce "" \
  "--measurements $D/a100x16_2node_allreduce_oci-bm-gpu4.8-roce-16x100G_ocitutorials.txt --max-bytes 64M" \
  "--measurements $D/a100x16_2node_allreduce_oci-bm-gpu4.8-roce-16x100G_ocitutorials.txt --min-bytes 65M"

run_class pcie-noP2P pcie-2gpu "" \
  "--measurements $D/rtx2080ti-x2_1node-pcie-noP2P_allreduce_anthony-hoo-blog.txt" \
  "--measurements $D/rtx2080ti-x2_1node-pcie-noP2P_allgather_anthony-hoo-blog.txt"

# One leave-one-class-out fit: every other family's training files, on their own configs.
loco_class() {
  local name=$1 primary="" args=() other f
  for other in "${CLASSES[@]}"; do
    [ "${FAMILY[$other]}" = "${FAMILY[$name]}" ] && continue
    [[ " $LOCO_POOL_SKIP " == *" $other "* ]] && continue
    [[ " ${seen[*]:-} " == *" ${FAMILY[$other]} "* ]] && continue
    seen+=("${FAMILY[$other]}")
    for f in ${TRAIN[$other]}; do
      if [ -z "$primary" ]; then
        primary=${CONFIG[$other]}
        args+=(--measurements "$f")
      else
        args+=(--also "${CONFIG[$other]}=$f")
      fi
    done
  done
  local nodes_opt=()
  [ -n "${NODES[$name]}" ] && nodes_opt=(--nodes "${NODES[$name]}")
  local fitted=${LOCO_FIT[${FAMILY[$name]}]}
  if [ "$fitted" != "$name" ] && [ -f "$OUT/$fitted.loco.yaml" ]; then
    echo "== $name: the leave-one-class-out fit of $fitted (same family)" >&2
    cp "$OUT/$fitted.loco.yaml" "$OUT/$name.loco.yaml"
  else
    echo "== $name: leave-one-class-out fit on $((${#args[@]} / 2)) files" >&2
    local fix=() patterns=()
    read -ra patterns <<< "$LOCO_FIX"
    for f in "${patterns[@]}"; do fix+=(--fix "$f"); done
    "$COLLSIM" calibrate "$primary" --default-costs "${args[@]}" --shared-only "${fix[@]}" \
      -o "$OUT/$name.loco.yaml" > "$OUT/$name.loco.calibrate.txt"
  fi
  # shellcheck disable=SC2086
  "$COLLSIM" validate "${CONFIG[$name]}" "${nodes_opt[@]}" --default-costs \
    --costs "$OUT/$name.loco.yaml" ${TEST[$name]} --format json > "$OUT/$name.loco.json"
}
# The class that fits each family's leave-one-class-out overlay: the family's first class with a
# fit already in $OUT (kept by LOCO_ONLY), else its first class. The others of the family copy
# it once the fits are done.
declare -A LOCO_FIT
for name in "${CLASSES[@]}"; do
  fam=${FAMILY[$name]}
  if [ -z "${LOCO_FIT[$fam]:-}" ] || { [ -f "$OUT/$name.loco.yaml" ] &&
    [ ! -f "$OUT/${LOCO_FIT[$fam]}.loco.yaml" ]; }; then
    LOCO_FIT[$fam]=$name
  fi
done
redo() { [ -z "${LOCO_ONLY:-}" ] || [[ " $LOCO_ONLY " == *" $1 "* ]]; }
for pass in fit copy; do
  for name in "${CLASSES[@]}"; do
    redo "$name" || continue
    if [ "$pass" = fit ] && [ "${LOCO_FIT[${FAMILY[$name]}]}" != "$name" ]; then continue; fi
    if [ "$pass" = copy ] && [ "${LOCO_FIT[${FAMILY[$name]}]}" = "$name" ]; then continue; fi
    seen=()
    loco_class "$name" &
    while [ "$(jobs -rp | wc -l)" -ge "$LOCO_JOBS" ]; do wait -n; done
  done
  for pid in $(jobs -p); do wait "$pid"; done  # each one's status, so a failed fit stops here
done

REPORT=docs/validation.md
[ "$OUT" = docs/validation ] || REPORT=$OUT/validation.md
LOCO_POOL_SKIP=$LOCO_POOL_SKIP python3 scripts/validation_report.py "$OUT" > "$REPORT"
echo "wrote $REPORT" >&2
