#!/usr/bin/env bash
# The docs test must fail when the model changes: with one number of the dgx-h100 preset changed
# (its NVLink bandwidth halved), scripts/docs-examples.py check has to report a difference.
set -euo pipefail
cd "$(dirname "$0")/.."
COLLSIM=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cp configs/*.yaml "$TMP/"
# The bandwidth under "  nvlink:", whatever its value.
sed -i '/^  nvlink:/,/bandwidth:/ s/^\(    bandwidth: \)[0-9.]*GB\/s/\1225GB\/s/' "$TMP/dgx-h100.yaml"
if cmp -s configs/dgx-h100.yaml "$TMP/dgx-h100.yaml"; then
  echo "the preset edit did not apply: update this script with the preset" >&2
  exit 1
fi
# The tour's dgx-h100 sections (its section 4, 64 nodes of h100-16node-ib, takes minutes).
sed '/^## 4\./,$d' docs/tour.md > "$TMP/tour.md"
if COLLSIM_CONFIG_DIR=$TMP python3 scripts/docs-examples.py check "$COLLSIM" "$TMP/tour.md" \
  > "$TMP/out"; then
  echo "docs-examples.py check passed with a changed preset" >&2
  exit 1
fi
grep -q "differ" "$TMP/out"
echo "a changed preset fails the docs check: ok"
