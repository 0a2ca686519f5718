#!/bin/sh
# Usage: same_under_mpirun.sh MPIRUN_WITH_NP COLLSIM ARGS...
# `mpirun -np K collsim sweep|compare|scale ...` must print byte for byte what one process prints
# (cli/distribute.hpp): runs ARGS both ways and compares.
set -eu
mpirun=$1
collsim=$2
shift 2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$collsim" "$@" > "$dir/one"
# shellcheck disable=SC2086  # MPIRUN_WITH_NP is a command line: mpirun -np 4
$mpirun "$collsim" "$@" > "$dir/many"
if ! cmp -s "$dir/one" "$dir/many"; then
  echo "collsim $*: the MPI job printed something else than one process:" >&2
  diff "$dir/one" "$dir/many" | head -40 >&2
  exit 1
fi
test -s "$dir/one"
echo "collsim $*: identical ($(wc -l < "$dir/one") lines)"
