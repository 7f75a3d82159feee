#!/usr/bin/env bash
# ember-run on small shell-script workers: torchrun's environment (2 and 4 ranks, two nodes,
# --standalone), prefixed whole output lines, a failing worker stopping the others (their
# processes are gone), a worker killed by SIGKILL, SIGTERM reaching the workers, SIGKILL after
# the stop timeout, and --max-restarts. Every launcher run is under `timeout`, so nothing hangs.
# Usage: ember_run_test.sh <path to ember-run>.
set -uo pipefail
run=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# A launcher run, at most $1 seconds; its exit status in $rc, its output in $tmp/out, $tmp/err.
launch() {
  local limit=$1; shift
  timeout -s KILL "$limit" "$run" "$@" > "$tmp/out" 2> "$tmp/err"
  rc=$?
}
# Waits (at most 5 s) until file $1 has content (a writer that `>` created may not have written yet).
wait_for() { for _ in $(seq 100); do [ -s "$1" ] && return 0; sleep 0.05; done; return 1; }
# Process $1 no longer runs (gone, or a zombie an init that does not reap keeps).
# Starts the launcher in the background (pid in $launcher), with a watchdog that SIGKILLs it
# after 15 s. Not under `timeout`: it would pass our signals on to its whole process group,
# so the launcher would see each one twice.
start_bg() {
  "$run" "$@" > "$tmp/out" 2> "$tmp/err" &
  launcher=$!
  (sleep 15; kill -KILL $launcher 2> /dev/null) > /dev/null 2>&1 &
  watchdog=$!
}
# Waits for the background launcher; its exit status in $rc, the time since $start in $elapsed_ms.
finish_bg() {
  wait $launcher
  rc=$?
  elapsed_ms=$((($(date +%s%N) - start) / 1000000))
  kill $watchdog 2> /dev/null
  wait $watchdog 2> /dev/null
}
gone() { ! kill -0 "$1" 2> /dev/null || [ "$(awk '{print $3}' "/proc/$1/stat" 2> /dev/null)" = Z ]; }

cat > "$tmp/env.sh" <<'W'
#!/bin/sh
echo "RANK=$RANK LOCAL_RANK=$LOCAL_RANK WORLD_SIZE=$WORLD_SIZE LOCAL_WORLD_SIZE=$LOCAL_WORLD_SIZE GROUP_RANK=$GROUP_RANK MASTER=$MASTER_ADDR:$MASTER_PORT RESTART=$TORCHELASTIC_RESTART_COUNT/$TORCHELASTIC_MAX_RESTARTS RUN_ID=$TORCHELASTIC_RUN_ID OMP=${OMP_NUM_THREADS:-unset} ARGS=$*"
W
chmod +x "$tmp/env.sh"

# ---- environment ------------------------------------------------------------------------
launch 10 --nproc-per-node 2 "$tmp/env.sh" a b
[ $rc -eq 0 ] || fail "2 ranks: exit $rc"
sort "$tmp/out" > "$tmp/got"
cat > "$tmp/want" <<'E'
[default0]:RANK=0 LOCAL_RANK=0 WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 GROUP_RANK=0 MASTER=127.0.0.1:29500 RESTART=0/0 RUN_ID=none OMP=1 ARGS=a b
[default1]:RANK=1 LOCAL_RANK=1 WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 GROUP_RANK=0 MASTER=127.0.0.1:29500 RESTART=0/0 RUN_ID=none OMP=1 ARGS=a b
E
cmp -s "$tmp/got" "$tmp/want" || { fail "2 ranks: environment"; diff "$tmp/want" "$tmp/got"; }
grep -q "Setting OMP_NUM_THREADS environment variable" "$tmp/err" || fail "no OMP_NUM_THREADS notice"

OMP_NUM_THREADS=3 launch 10 --nproc_per_node=4 --master_addr=10.1.2.3 --master_port 1234 --max_restarts 2 "$tmp/env.sh"
[ $rc -eq 0 ] || fail "4 ranks: exit $rc"
sort "$tmp/out" > "$tmp/got"
: > "$tmp/want"
for r in 0 1 2 3; do
  echo "[default$r]:RANK=$r LOCAL_RANK=$r WORLD_SIZE=4 LOCAL_WORLD_SIZE=4 GROUP_RANK=0 MASTER=10.1.2.3:1234 RESTART=0/2 RUN_ID=none OMP=3 ARGS=" >> "$tmp/want"
done
cmp -s "$tmp/got" "$tmp/want" || { fail "4 ranks: environment"; diff "$tmp/want" "$tmp/got"; }
grep -q "Setting OMP_NUM_THREADS" "$tmp/err" && fail "OMP_NUM_THREADS notice although it was set"

launch 10 --nnodes 2 --node-rank 1 --nproc-per-node 2 --rdzv-id job7 "$tmp/env.sh"
[ $rc -eq 0 ] || fail "node 1 of 2: exit $rc"
sort "$tmp/out" > "$tmp/got"
cat > "$tmp/want" <<'E'
[default0]:RANK=2 LOCAL_RANK=0 WORLD_SIZE=4 LOCAL_WORLD_SIZE=2 GROUP_RANK=1 MASTER=127.0.0.1:29500 RESTART=0/0 RUN_ID=job7 OMP=1 ARGS=
[default1]:RANK=3 LOCAL_RANK=1 WORLD_SIZE=4 LOCAL_WORLD_SIZE=2 GROUP_RANK=1 MASTER=127.0.0.1:29500 RESTART=0/0 RUN_ID=job7 OMP=1 ARGS=
E
cmp -s "$tmp/got" "$tmp/want" || { fail "node 1 of 2: environment"; diff "$tmp/want" "$tmp/got"; }

launch 10 --standalone "$tmp/env.sh"
grep -Eq '^\[default0\]:RANK=0 .* MASTER=127\.0\.0\.1:[0-9]+ .*RUN_ID=[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12} OMP=unset' "$tmp/out" ||
  fail "--standalone: $(cat "$tmp/out")"
grep -q ":29500 " "$tmp/out" && fail "--standalone kept port 29500"

TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE='<${rank}>' launch 10 --nnodes=2 --node_rank=1 --local-ranks-filter 1 --nproc-per-node 2 sh -c 'echo hi'
[ "$(cat "$tmp/out")" = "<3>hi" ] || fail "prefix template / local ranks filter: $(cat "$tmp/out")"

# ---- whole prefixed lines -----------------------------------------------------------------
# Each line is written in three pieces; four workers write at once, stdout and stderr.
cat > "$tmp/lines.sh" <<'W'
#!/bin/sh
i=0
while [ $i -lt 300 ]; do
  printf 'w%s-%s ' "$LOCAL_RANK" $i; printf 'xxxxxxxxxxxxxxxxxxxxxxxx'; printf 'yy\n'
  printf 'e%s-%s\n' "$LOCAL_RANK" $i >&2
  i=$((i + 1))
done
printf 'no newline at the end'
W
chmod +x "$tmp/lines.sh"
launch 20 --nproc-per-node 4 "$tmp/lines.sh"
[ $rc -eq 0 ] || fail "lines: exit $rc"
for r in 0 1 2 3; do
  n=$(grep -Ec "^\[default$r\]:w$r-[0-9]+ x{24}yy$" "$tmp/out")
  [ "$n" -eq 300 ] || fail "rank $r: $n whole stdout lines of 300"
  n=$(grep -Ec "^\[default$r\]:e$r-[0-9]+$" "$tmp/err")
  [ "$n" -eq 300 ] || fail "rank $r: $n whole stderr lines of 300"
  grep -qx "\[default$r\]:no newline at the end" "$tmp/out" || fail "rank $r: unterminated last line"
done
[ "$(wc -l < "$tmp/out")" -eq 1204 ] || fail "stray stdout lines: $(grep -Ev '^\[default[0-3]\]:(w|no newline)' "$tmp/out" | head -3)"

# ---- a failing worker stops the others ------------------------------------------------------
# Rank 1 exits 3; rank 0 sleeps (exec); rank 2 is a shell waiting on a child, which must go too.
cat > "$tmp/fail.sh" <<'W'
#!/bin/sh
d=$1
case $LOCAL_RANK in
  1) for r in 0 2; do while [ ! -s "$d/pid.$r" ]; do sleep 0.02; done; done; exit 3 ;;
  2) sleep 30 & echo $! > "$d/child.2"; echo $$ > "$d/pid.2"; wait ;;
  *) echo $$ > "$d/pid.$LOCAL_RANK"; exec sleep 30 ;;
esac
W
chmod +x "$tmp/fail.sh"
mkdir "$tmp/f"
start=$(date +%s%N)
launch 15 --nproc-per-node 3 --stop-timeout 5 "$tmp/fail.sh" "$tmp/f"
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
[ $rc -eq 3 ] || fail "failing worker: launcher exited $rc, not 3"
[ $elapsed_ms -lt 4000 ] || fail "failing worker: the launcher took ${elapsed_ms} ms"
for p in "$tmp/f/pid.0" "$tmp/f/pid.2" "$tmp/f/child.2"; do
  [ -s "$p" ] && gone "$(cat "$p")" || fail "failing worker: $(basename "$p") $(cat "$p" 2>/dev/null) still runs"
done
grep -q "FAILED" "$tmp/err" && grep -q "rank      : 1 (local_rank: 1)" "$tmp/err" &&
  grep -q "exitcode  : 3 (pid: " "$tmp/err" || { fail "failing worker: no failure summary"; cat "$tmp/err"; }

# ---- a worker killed by SIGKILL ---------------------------------------------------------------
launch 10 --nproc-per-node 2 sh -c 'if [ "$LOCAL_RANK" = 0 ]; then kill -9 $$; fi; exec sleep 30'
[ $rc -eq 137 ] || fail "SIGKILLed worker: launcher exited $rc, not 137"
grep -q "exitcode  : -9 " "$tmp/err" && grep -q "Signal 9 (SIGKILL) received by PID" "$tmp/err" ||
  fail "SIGKILLed worker: summary"

# ---- a program that cannot be executed --------------------------------------------------------
launch 10 "$tmp/does-not-exist"
[ $rc -eq 127 ] || fail "missing program: exit $rc, not 127"
grep -q "^\[default0\]:ember-run: cannot execute" "$tmp/err" || fail "missing program: no message"

# ---- SIGTERM to the launcher reaches the workers ------------------------------------------------
cat > "$tmp/term.sh" <<'W'
#!/bin/sh
d=$1
trap 'echo "$LOCAL_RANK" > "$d/term.$LOCAL_RANK"; exit 0' TERM
sleep 30 & echo $! > "$d/child.$LOCAL_RANK"
echo $$ > "$d/pid.$LOCAL_RANK"
wait
W
chmod +x "$tmp/term.sh"
mkdir "$tmp/t"
start_bg --nproc-per-node 2 --stop-timeout 5 "$tmp/term.sh" "$tmp/t"
wait_for "$tmp/t/pid.0" && wait_for "$tmp/t/pid.1" || fail "SIGTERM: workers did not start"
start=$(date +%s%N)
kill -TERM $launcher
finish_bg
[ $rc -eq 143 ] || fail "SIGTERM: launcher exited $rc, not 143"
for r in 0 1; do
  [ -e "$tmp/t/term.$r" ] || fail "SIGTERM did not reach worker $r"
  gone "$(cat "$tmp/t/child.$r")" || fail "SIGTERM: worker $r's child still runs"
done

# A worker that ignores SIGTERM is killed after --stop-timeout.
mkdir "$tmp/k"
start_bg --nproc-per-node 2 --stop-timeout 0.5 sh -c 'trap "" TERM; echo $$ > "$0/pid.$LOCAL_RANK"; exec sleep 30' "$tmp/k"
wait_for "$tmp/k/pid.0" && wait_for "$tmp/k/pid.1" || fail "stop timeout: workers did not start"
start=$(date +%s%N)
kill -TERM $launcher
finish_bg
[ $rc -eq 143 ] || fail "stop timeout: launcher exited $rc, not 143"
[ $elapsed_ms -ge 450 ] && [ $elapsed_ms -lt 3000 ] || fail "stop timeout: took ${elapsed_ms} ms, not about 500"
for r in 0 1; do gone "$(cat "$tmp/k/pid.$r")" || fail "stop timeout: worker $r still runs"; done

# A second signal kills at once, without waiting for --stop-timeout.
mkdir "$tmp/i"
start_bg --nproc-per-node 2 --stop-timeout 20 sh -c 'trap "" INT TERM; echo $$ > "$0/pid.$LOCAL_RANK"; exec sleep 30' "$tmp/i"
wait_for "$tmp/i/pid.0" && wait_for "$tmp/i/pid.1" || fail "second signal: workers did not start"
start=$(date +%s%N)
kill -INT $launcher
sleep 0.2
kill -INT $launcher
finish_bg
[ $rc -eq 130 ] || fail "second signal: launcher exited $rc, not 130"
[ $elapsed_ms -lt 3000 ] || fail "second signal: took ${elapsed_ms} ms"
for r in 0 1; do gone "$(cat "$tmp/i/pid.$r")" || fail "second signal: worker $r still runs"; done

# ---- --max-restarts ------------------------------------------------------------------------------
# Rank 1 fails on the first attempt only; the whole group runs again and succeeds.
mkdir "$tmp/r"
cat > "$tmp/restart.sh" <<'W'
#!/bin/sh
echo "$TORCHELASTIC_RESTART_COUNT" >> "$1/attempts.$LOCAL_RANK"
if [ "$LOCAL_RANK" = 1 ] && [ "$TORCHELASTIC_RESTART_COUNT" = 0 ]; then
  # -s, not -e: `>>` creates the file before echo writes to it, and a rank 0 stopped between
  # the two would leave it empty.
  while [ ! -s "$1/attempts.0" ]; do sleep 0.02; done
  exit 4
fi
[ "$LOCAL_RANK" = 0 ] && [ "$TORCHELASTIC_RESTART_COUNT" = 0 ] && exec sleep 30
exit 0
W
chmod +x "$tmp/restart.sh"
launch 15 --nproc-per-node 2 --max-restarts 1 --stop-timeout 5 "$tmp/restart.sh" "$tmp/r"
[ $rc -eq 0 ] || fail "restart: exit $rc, not 0"
for r in 0 1; do
  [ "$(tr '\n' ' ' < "$tmp/r/attempts.$r")" = "0 1 " ] || fail "restart: rank $r attempts $(cat "$tmp/r/attempts.$r")"
done
grep -q "1/1 attempts left; will restart worker group" "$tmp/err" || fail "restart: no restart message"

# Restarts exhausted: the last failure's exit code.
launch 15 --nproc-per-node 2 --max-restarts 2 sh -c 'echo x >> "$0/always.$LOCAL_RANK"; [ "$LOCAL_RANK" = 1 ] && exit 6; exit 0' "$tmp/r"
[ $rc -eq 6 ] || fail "restarts exhausted: exit $rc, not 6"
[ "$(wc -l < "$tmp/r/always.1")" -eq 3 ] || fail "restarts exhausted: $(wc -l < "$tmp/r/always.1") attempts, not 3"

if [ $failures -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "ember-run: all checks passed"
