#!/usr/bin/env bash
# Runs each libFuzzer target for a bounded time (make fuzz; CI runs a short smoke run).
#   scripts/fuzz.sh BUILD_DIR SECONDS
# Seed corpora are made here from configs/ and tests/data, in BUILD_DIR/fuzz-corpus/<target>, so
# nothing generated is committed; what a run learns stays there for the next run. A crash leaves
# crash-* in BUILD_DIR/fuzz-artifacts and fails the script: make it a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-san}
SECONDS_EACH=${2:-60}
CORPUS=$BUILD/fuzz-corpus
ART=$BUILD/fuzz-artifacts
mkdir -p "$CORPUS"/{config,measurements,units,schedule} "$ART"
cp configs/*.yaml tests/data/configs/*.yaml tests/data/configs/bad/*.yaml "$CORPUS/config/"
cp tests/data/nccl-tests/*.txt tests/data/nccl-tests-bad/* "$CORPUS/measurements/"
# nccl-tests' JSON report (-J): one result, as nccl-tests writes it.
printf '%s' '{"version":3,"args":["./all_reduce_perf"],"env":["NCCL_PROTO=LL"],"nccl_version":22902,"config":{"nthreads":1,"ngpus":2,"minimum_bytes":8,"maximum_bytes":8,"step_factor":2,"warmup_iters":5,"iterations":20,"aggregated_iterations":1,"validation":1,"graph":0,"devices":[{"rank":0,"group":0,"pid":1,"hostname":"h","device":0,"device_hex":"0000:18:00","device_info":"GPU"}]},"results":[{"size":8,"count":2,"type":"float","redop":"sum","root":"    -1","out_of_place":{"time":10.000000,"alg_bw":0.000800,"bus_bw":0.000800,"nwrong":0.000000},"in_place":{"time":10.000000,"alg_bw":0.000800,"bus_bw":0.000800,"nwrong":null}}]}' \
  > "$CORPUS/measurements/report.json"
i=0
for s in 8 64MiB 1.5GB 4K 400Gbps 450GB/s 12.5GB/s 0.6us 600ns "1.2 µs" 2ms 300ps -1us 1e309; do
  printf '%s' "$s" > "$CORPUS/units/seed$i"
  i=$((i + 1))
done
head -c 64 /dev/zero > "$CORPUS/schedule/zero"
status=0
for target in config measurements units schedule; do
  log=$BUILD/fuzz-$target.log
  if ! "$BUILD/fuzz/fuzz_$target" "$CORPUS/$target" -max_total_time="$SECONDS_EACH" \
        -timeout=10 -rss_limit_mb=4096 -max_len=65536 -print_final_stats=1 \
        -artifact_prefix="$ART/$target-" > "$log" 2>&1; then
    echo "fuzz_$target: FAILED (see $log and $ART)" >&2
    tail -30 "$log" >&2
    status=1
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  echo "fuzz_$target: $runs executions in ${SECONDS_EACH}s"
done
exit $status
