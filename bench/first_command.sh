#!/usr/bin/env bash
# The newcomer's first command, timed as a new user meets it: a fresh clone of this checkout,
# no compiler cache, `scripts/setup.sh && build/examples/fashion_mnist` until the trainer draws
# its first progress bar. Prints the build time, the time to the first bar, the compiler time
# summed over all build steps and the slowest steps (from ninja's log). Run it on an otherwise
# idle machine; the README quotes its result.
# Usage: bench/first_command.sh [work-dir]   (default: a new temporary directory, removed after)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$(mktemp -d)}
[ -n "${1:-}" ] || trap 'rm -rf "$work"' EXIT
git clone -q "$src" "$work/ember"
cd "$work/ember"
export CCACHE_DISABLE=1
start=$(date +%s.%N)
scripts/setup.sh > "$work/build.log" 2>&1 || { tail -20 "$work/build.log"; exit 1; }
built=$(date +%s.%N)
# The bar is drawn only on a terminal: script(1) gives the trainer one.
timeout 300 script -qfc "build/examples/fashion_mnist --epochs 1" "$work/run.log" > /dev/null 2>&1 &
run=$!
until grep -q "samples/s" "$work/run.log" 2>/dev/null; do
  kill -0 "$run" 2>/dev/null || { echo "the trainer stopped before its first progress bar:"; cat "$work/run.log"; exit 1; }
  sleep 0.2
done
bar=$(date +%s.%N)
kill "$run" 2>/dev/null || true
printf 'build: %.0f s; first progress bar: %.0f s after the clone; build steps: %d\n' \
  "$(echo "$built - $start" | bc)" "$(echo "$bar - $start" | bc)" "$(($(wc -l < build/.ninja_log) - 1))"
awk 'NR > 1 { t += $2 - $1 } END { printf "compiler time summed over the steps: %.0f s\n", t / 1000 }' build/.ninja_log
echo "slowest steps (s):"
awk 'NR > 1 { printf "%6.1f %s\n", ($2 - $1) / 1000, $4 }' build/.ninja_log | sort -rn | head -5
