#!/usr/bin/env bash
# The Fashion-MNIST trainer data-parallel under the launcher (issue 8), two gloo ranks on
# loopback, on a 4000-image subset:
#  1. `ember-run --nproc-per-node 2 fashion_mnist --dist gloo` trains (the loss falls, a sane
#     test accuracy), and only rank 0 logs and writes the run folder;
#  2. a worker killed (SIGKILL) mid-training makes the launcher stop the other one and exit
#     non-zero within the timeout, leaving no worker behind;
#  3. with --max-restarts 1 and --resume auto, the same kill restarts the group, which
#     resumes from the newest checkpoint and finishes the run (every epoch once in
#     metrics.csv) with a last checkpoint byte-identical to run 1's, which was not interrupted
#     (both ranks load rank 0's checkpoint; rank 1's own BatchNorm buffers never matter, as
#     DDP broadcasts rank 0's before every forward).
# Usage: fashion_mnist_dist.sh <ember-run> <fashion_mnist>. Exit 77 (skip) without the data.
set -euo pipefail
launcher=$1 bin=$2
source "$(dirname "$0")/trainer_test_common.sh"

small=(--data-dir "$data" --limit-train 4000 --limit-test 1000 --threads 1 --workers 1 --seed 0 --dist gloo
       --epochs 4 --patience 10)

# ---- 1. a data-parallel run ----------------------------------------------------------------
timeout 300 "$launcher" --nproc-per-node 2 --standalone "$bin" "${small[@]}" --out-dir "$tmp/run" \
  > "$tmp/run.log" 2>&1 || { cat "$tmp/run.log"; fail "the 2-rank run failed"; }
cat "$tmp/run.log"
grep -q '^\[default0\]:.*data-parallel over 2 ranks (gloo)' "$tmp/run.log" || fail "rank 0 did not report 2 ranks"
if grep -q '^\[default1\]:' "$tmp/run.log"; then fail "rank 1 printed (only rank 0 logs)"; fi
[ "$(grep -c '^\[default0\]:epoch [1-4]/4 ' "$tmp/run.log")" -eq 4 ] || fail "expected four epoch lines from rank 0"
loss1=$(sed -n 's/^\[default0\]:epoch 1\/4 | train loss \([0-9.]*\).*/\1/p' "$tmp/run.log")
loss2=$(sed -n 's/^\[default0\]:epoch 4\/4 | train loss \([0-9.]*\).*/\1/p' "$tmp/run.log")
awk -v a="$loss1" -v b="$loss2" 'BEGIN { exit !(b < a) }' || fail "train loss did not fall: $loss1 -> $loss2"
acc=$(sed -n 's/^\[default0\]:test accuracy \([0-9.]*\)%.*/\1/p' "$tmp/run.log")
awk -v a="$acc" 'BEGIN { exit !(a > 75) }' || fail "test accuracy $acc% after 4 epochs on 2x1800 images"
for f in checkpoint_epoch1.safetensors checkpoint_epoch4.safetensors best_model.safetensors metrics.csv; do
  [ -s "$tmp/run/$f" ] || fail "the run folder lacks $f"
done
[ "$(wc -l < "$tmp/run/metrics.csv")" -eq 5 ] || fail "metrics.csv should hold a header and 4 epochs"

# The worker of rank $2 among the launcher $1's children (from its environment).
worker_pid() {
  local child
  for child in $(pgrep -P "$1"); do
    if tr '\0' '\n' < "/proc/$child/environ" 2>/dev/null | grep -qx "RANK=$2"; then echo "$child"; return; fi
  done
}
# Starts the launcher in the background on $1 (out dir) with the extra launcher options
# after it; waits for checkpoint_epoch1 and SIGKILLs rank 1's worker. Sets $launcher_pid.
start_and_kill_rank1() {
  local out=$1; shift
  "$launcher" --nproc-per-node 2 --standalone "$@" "$bin" "${small[@]}" --resume auto --out-dir "$out" > "$out.log" 2>&1 &
  launcher_pid=$!
  for _ in $(seq 600); do [ -e "$out/checkpoint_epoch1.safetensors" ] && break; sleep 0.1; done
  [ -e "$out/checkpoint_epoch1.safetensors" ] || { cat "$out.log"; fail "no checkpoint after 60 s"; }
  local victim
  victim=$(worker_pid "$launcher_pid" 1)
  [ -n "$victim" ] || { cat "$out.log"; fail "rank 1's worker not found"; }
  kill -KILL "$victim"
  echo "killed rank 1 (pid $victim) after epoch 1's checkpoint"
}
# Waits up to $1 seconds for the launcher; sets $rc to its exit code (or "timeout"). Not in a
# $(...) subshell: only this shell can `wait` for its own background job.
wait_launcher() {
  rc=timeout
  for _ in $(seq $(( $1 * 10 ))); do
    if ! kill -0 "$launcher_pid" 2>/dev/null; then
      rc=0
      wait "$launcher_pid" || rc=$?
      return
    fi
    sleep 0.1
  done
  kill -KILL "$launcher_pid" 2>/dev/null || true
}

# ---- 2. a worker killed: the launcher stops the group and fails --------------------------
start_and_kill_rank1 "$tmp/killed"
wait_launcher 60
cat "$tmp/killed.log"
[ "$rc" != timeout ] || fail "the launcher did not exit within 60 s of the kill"
[ "$rc" -ne 0 ] || fail "the launcher exited 0 after a worker was killed"
grep -q 'SIGKILL\|signal 9' "$tmp/killed.log" || fail "the launcher did not say the worker was killed"
if pgrep -f -- "--out-dir $tmp/killed" > /dev/null; then fail "a worker outlived the launcher"; fi
echo "launcher exited $rc after the kill"

# ---- 3. the same kill with --max-restarts 1: the group restarts and resumes ----------------
start_and_kill_rank1 "$tmp/restart" --max-restarts 1
wait_launcher 300
cat "$tmp/restart.log"
[ "$rc" = 0 ] || fail "the restarted run did not finish (launcher: $rc)"
grep -q 'will restart worker group' "$tmp/restart.log" || fail "the launcher did not restart the group"
grep -q '^\[default0\]:resumed from .*checkpoint_epoch[1-4]\.safetensors' "$tmp/restart.log" ||
  fail "the restarted rank 0 did not resume from a checkpoint"
grep -q '^\[default0\]:test accuracy' "$tmp/restart.log" || fail "the resumed run did not finish"
epochs=$(tail -n +2 "$tmp/restart/metrics.csv" | cut -d, -f1 | tr '\n' ' ')
[ "$epochs" = "1 2 3 4 " ] || fail "metrics.csv epochs after the restart: '$epochs' (want 1 2 3 4)"
cmp "$tmp/run/checkpoint_epoch4.safetensors" "$tmp/restart/checkpoint_epoch4.safetensors" ||
  fail "the restarted run's last checkpoint differs from the uninterrupted run's"
echo "fashion_mnist_dist: trained on 2 ranks; a killed worker stopped the group; a restart resumed the run"
