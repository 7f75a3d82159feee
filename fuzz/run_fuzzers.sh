#!/usr/bin/env bash
# Runs each libFuzzer target for SECONDS on a copy of its committed seed corpus and prints
# "target: N inputs, findings: K". Builds nothing: configure and build first (EMBER_FUZZ=ON,
# see .ci/run). Exits non-zero when any target has a finding; the inputs that caused them are
# kept in $FUZZ_OUT/<target>/ (crash-*, leak-*, timeout-*, oom-*) with each target's log.
# Usage: fuzz/run_fuzzers.sh SECONDS [target...]
#   EMBER_FUZZ_BUILD  the build directory (default build-fuzz)
#   FUZZ_OUT          where logs and findings go (default $EMBER_FUZZ_BUILD/fuzz-out)
#   FUZZ_SEED         libFuzzer's -seed: the same mutations every run (CI sets 1, so a CI run
#                     repeats the last one's inputs as far as its time allows and fails only
#                     on what a change brought in); unset, a fresh random seed each run
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:?usage: fuzz/run_fuzzers.sh SECONDS [target...]}
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_safetensors fuzz_idx fuzz_state_dict fuzz_ops fuzz_archive)
build=${EMBER_FUZZ_BUILD:-build-fuzz}
out=${FUZZ_OUT:-$build/fuzz-out}

# The allocator cache off so ASan sees every use after free; one OpenMP thread (libFuzzer
# runs one input at a time, and small tensors stay serial anyway).
export EMBER_NO_ALLOCATOR_CACHE=1 OMP_NUM_THREADS=1
declare -A dicts=([fuzz_safetensors]=fuzz/safetensors.dict [fuzz_state_dict]=fuzz/state_dict.dict)

failed=0
for t in "${targets[@]}"; do
  bin=$build/fuzz/$t
  [ -x "$bin" ] || { echo "$t: $bin not built (configure with -DEMBER_FUZZ=ON and build ember_fuzzers)" >&2; exit 2; }
  rm -rf "${out:?}/$t"
  mkdir -p "$out/$t/corpus"
  cp fuzz/corpus/"$t"/* "$out/$t/corpus/"  # a copy: new inputs stay out of the committed seeds
  args=(-max_total_time="$seconds" -print_final_stats=1 -timeout=20 -rss_limit_mb=2560
        -artifact_prefix="$out/$t/")
  [ -n "${dicts[$t]:-}" ] && args+=(-dict="${dicts[$t]}")
  [ -n "${FUZZ_SEED:-}" ] && args+=(-seed="$FUZZ_SEED")
  rc=0
  "$bin" "${args[@]}" "$out/$t/corpus" >"$out/$t/log" 2>&1 || rc=$?
  inputs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$t/log" | tail -1)
  findings=$(find "$out/$t" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
    -o -name 'oom-*' \) | wc -l)
  # libFuzzer stops at its first finding (exit code non-zero); count that even without a file.
  [ "$rc" -ne 0 ] && [ "$findings" -eq 0 ] && findings=1
  echo "$t: ${inputs:-0} inputs, findings: $findings"
  if [ "$findings" -ne 0 ]; then
    failed=1
    echo "  log: $out/$t/log"
    grep -m1 -E 'ERROR|runtime error|finding' "$out/$t/log" | sed 's/^/  /' || true
    find "$out/$t" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | sed 's/^/  input: /'
  fi
done
exit $failed
