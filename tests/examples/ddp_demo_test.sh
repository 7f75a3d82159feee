#!/usr/bin/env bash
# The DistributedDataParallel example of docs/data_parallelism.md under the launcher: two gloo workers on
# loopback train and must end with the same weights (one checksum) and a loss far below the
# first one. Usage: ddp_demo_test.sh <ember-run> <ddp_demo>.
set -euo pipefail
launcher=$1 demo=$2
out=$(timeout 120 "$launcher" --nproc-per-node 2 --standalone "$demo" 2>&1) || { echo "$out"; echo "FAIL: the run failed"; exit 1; }
echo "$out"
fail() { echo "FAIL: $*"; exit 1; }
sums=$(sed -n 's/.*weights checksum \([^ ]*\)$/\1/p' <<< "$out" | sort -u)
[ "$(grep -c "weights checksum" <<< "$out")" -eq 2 ] || fail "expected a line from each of the 2 ranks"
[ "$(wc -l <<< "$sums")" -eq 1 ] || fail "the ranks ended with different weights: $sums"
while read -r first last; do
  awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a / 10) }' || fail "loss $first -> $last did not fall tenfold"
done < <(sed -n 's/.*: loss \([^ ]*\) -> \([^,]*\),.*/\1 \2/p' <<< "$out")
echo "ddp_demo: both ranks ended with weights checksum $sums"
