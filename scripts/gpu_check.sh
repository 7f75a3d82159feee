#!/usr/bin/env bash
# The GPU check: one command that checks everything CUDA in ember on a machine with an NVIDIA
# GPU and no network. It configures and builds ember with CUDA (sm_90), runs the whole ctest
# suite, runs the CUDA benchmarks (and PyTorch's side of them when python3 has torch, each
# workload printed next to PyTorch's with the ratio and the copy bandwidth it is held
# against), trains the Fashion-MNIST example for one epoch on the GPU (and on the CPU beside
# it, to compare accuracies; then with mixed precision, --amp fp16 and --amp bf16, against the
# float32 GPU epoch), runs the CUDA tests under compute-sanitizer's memcheck, and
# writes one report file with a summary on top. Every stage has a time limit, so the whole
# fits in 9 minutes on an H200 with 16 cores; a stage that fails is recorded and the next one
# still runs (without a build, there is nothing to test). Without a GPU it still builds and
# runs the CPU tests and says which CUDA stages it skipped. See README.md, "The GPU check".
#
# Usage: scripts/gpu_check.sh [options]
#   --deps DIR        build dependencies from scripts/prepare_gpu_deps.sh (default:
#                     shared/gpu-deps when it exists; else the system's packages)
#   --build-dir DIR   default build-gpu
#   --report FILE     default $OUT/gpu_check_report.txt when OUT is set, else
#                     <build-dir>/gpu_check_report.txt
#   -j N              build jobs (default: the number of cores)
#   --budget S        seconds for the whole check (default 540)
#   --examples        also run the examples' tests (smoke, --amp) in ctest (the examples are always
#                     built: the trainer stage runs examples/fashion_mnist)
# The trainer stage reads Fashion-MNIST from $FASHION_MNIST_DIR, /usr/share/datasets/fashion-mnist
# or <deps>/usr/share/datasets/fashion-mnist (scripts/prepare_gpu_deps.sh puts it there).
# Exit status: 0 when every stage that ran passed, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
repo=$(pwd)

deps="" build_dir=build-gpu report="" jobs=$(nproc) budget=540 examples_smoke=0
while [ $# -gt 0 ]; do
  case $1 in
    --deps) deps=$2; shift 2 ;;
    --build-dir) build_dir=$2; shift 2 ;;
    --report) report=$2; shift 2 ;;
    -j) jobs=$2; shift 2 ;;
    -j*) jobs=${1#-j}; shift ;;
    --budget) budget=$2; shift 2 ;;
    --examples) examples_smoke=1; shift ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu_check: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -z "$deps" ] && [ -d shared/gpu-deps/usr ] && deps=shared/gpu-deps
[ -n "$deps" ] && deps=$(cd "$deps" && pwd)
mkdir -p "$build_dir" && build_dir=$(cd "$build_dir" && pwd)
logs=$build_dir/gpu_check_logs
rm -rf "$logs" && mkdir -p "$logs"
if [ -z "$report" ]; then
  if [ -n "${OUT:-}" ]; then report=$OUT/gpu_check_report.txt; else report=$build_dir/gpu_check_report.txt; fi
fi
mkdir -p "$(dirname "$report")"

t_start=$(date +%s)
deadline=$((t_start + budget))
elapsed() { echo $(($(date +%s) - t_start)); }
say() { echo "[gpu_check $(printf '%3d' "$(elapsed)")s] $*"; }

# ---- the report: a summary table on top, each stage's details below -----------------------
stage_names=() stage_status=() stage_secs=() stage_notes=()
details=$logs/details.txt
: > "$details"
header_lines=()
bench_table=""

# Rewritten after every stage, so a check cut off from outside still leaves a report.
write_report() {
  local tmp=$report.tmp i overall=PASS
  for i in "${!stage_status[@]}"; do
    case ${stage_status[$i]} in FAIL | TIMEOUT) overall=FAIL ;; esac
  done
  {
    echo "ember GPU check: $overall$([ "$have_gpu" = 0 ] && echo ' (NO GPU: the CUDA stages were skipped)')    ($(date -u '+%Y-%m-%d %H:%M UTC'), $(elapsed) s of a $budget s budget)"
    printf '%s\n' "${header_lines[@]}"
    echo
    printf '%-22s %-8s %6s  %s\n' stage status time details
    printf '%-22s %-8s %6s  %s\n' ---------------------- -------- ------ -------
    for i in "${!stage_names[@]}"; do
      printf '%-22s %-8s %5ss  %s\n' "${stage_names[$i]}" "${stage_status[$i]}" "${stage_secs[$i]}" "${stage_notes[$i]}"
    done
    echo
    [ -n "$bench_table" ] && printf '%s\n\n' "$bench_table"
    echo "status: ok = passed, FAIL = failed, TIMEOUT = stopped at its time limit, skip = not run (why in details)"
    echo "full logs on the machine that ran the check: $logs"
    echo
    cat "$details"
  } > "$tmp" && mv "$tmp" "$report"
}

record() {  # record NAME STATUS SECONDS NOTE
  stage_names+=("$1") stage_status+=("$2") stage_secs+=("$3") stage_notes+=("$4")
  say "$1: $2 ($3 s) $4"
  write_report
}

section() {  # section TITLE: a heading in the details part of the report
  printf '\n==== %s ====\n' "$1" >> "$details"
}

# Appends a log to the details: all of it when short, else its first and last lines
# (ctest's "Start n: name" lines are left out: each test's result line names it again).
attach_log() {  # attach_log FILE [LINES]
  local f=$1 n=${2:-150} total
  total=$(grep -c -v -E '^ +Start +[0-9]+: ' "$f")
  if [ "$total" -le $((2 * n)) ]; then
    grep -v -E '^ +Start +[0-9]+: ' "$f" >> "$details"
  else
    { grep -v -E '^ +Start +[0-9]+: ' "$f" | head -n "$n"
      echo "... ($((total - 2 * n)) lines left out; all of them in $f) ..."
      grep -v -E '^ +Start +[0-9]+: ' "$f" | tail -n "$n"; } >> "$details"
  fi
}

# Seconds a stage may run: at most MAX, and never into the KEEP seconds kept for later stages.
# Both are sized for the default budget of 540 s on an H200 with 16 cores and scale with
# --budget (a slower machine gets a larger budget and every stage more time).
stage_limit() {  # stage_limit MAX KEEP
  local max=$(($1 * budget / 540)) keep=$(($2 * budget / 540)) left
  left=$((deadline - $(date +%s) - keep))
  [ "$left" -lt "$max" ] && echo "$left" || echo "$max"
}

# Runs a command under `timeout`, output to LOG, printing the log's last line every 20 s so
# the progress shows. Sets run_rc (124: stopped at the limit) and run_secs.
run_logged() {  # run_logged LIMIT LOG cmd...
  local limit=$1 log=$2 t0 pid last=""
  shift 2
  [ "$limit" -ge 1 ] || limit=1  # timeout 0 would mean no limit at all
  t0=$(date +%s)
  timeout -k 10 "$limit" "$@" > "$log" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    if kill -0 "$pid" 2>/dev/null; then
      last=$(tail -n 1 "$log" 2>/dev/null | cut -c1-150)
      say "  ... $(($(date +%s) - t0)) s: $last"
    fi
  done
  wait "$pid"
  run_rc=$?
  run_secs=$(($(date +%s) - t0))
}

# ---- stage 1: the machine --------------------------------------------------------------
say "ember GPU check: report $report"
t0=$(date +%s)
env_log=$logs/environment.txt
orig_ld_library_path=${LD_LIBRARY_PATH-}  # PyTorch runs with this one (see find_cuda_lib)
gpu_list=$(timeout 30 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || true)
have_gpu=0
[ -n "$gpu_list" ] && have_gpu=1
{
  echo "\$ nvidia-smi"
  timeout 30 nvidia-smi 2>&1 || echo "(nvidia-smi: not found or failed)"
} > "$env_log" 2>&1

# nvcc: PATH, then $CUDA_HOME/bin, /usr/local/cuda/bin, /usr/local/cuda-*/bin.
nvcc=$(command -v nvcc || true)
for c in ${CUDA_HOME:+"$CUDA_HOME/bin/nvcc"} /usr/local/cuda/bin/nvcc /usr/local/cuda-*/bin/nvcc; do
  [ -z "$nvcc" ] && [ -x "$c" ] && nvcc=$c
done
cuda_home=""
[ -n "$nvcc" ] && cuda_home=$(dirname "$(dirname "$(readlink -f "$nvcc")")")
sanitizer=$(command -v compute-sanitizer || true)
for c in ${cuda_home:+"$cuda_home/bin/compute-sanitizer" "$cuda_home/compute-sanitizer/compute-sanitizer"}; do
  [ -z "$sanitizer" ] && [ -x "$c" ] && sanitizer=$c
done
# CMake and ninja: PATH, else beside python3 (pip's cmake and ninja packages).
py=$(command -v python3 || true)
for tool in cmake ninja ctest; do
  if ! command -v "$tool" >/dev/null && [ -n "$py" ]; then
    pybin=$(dirname "$("$py" -c 'import sys; print(sys.executable)' 2>/dev/null || echo "$py")")
    [ -x "$pybin/$tool" ] && export PATH="$PATH:$pybin"
  fi
done

# The site-packages folder of an importable package (namespace packages have no __file__).
py_pkg_dir() {
  [ -n "$py" ] || return 1
  timeout 60 "$py" -c "import importlib, sys; m = importlib.import_module('$1'); print(list(m.__path__)[0])" 2>/dev/null
}

# cuDNN and NCCL wherever they are: the CUDA toolkit, the system, or PyTorch's pip packages
# (nvidia/cudnn, nvidia/nccl). Nothing in this issue's build uses them yet; they are found,
# reported and exported (<NAME>_ROOT, CMAKE_PREFIX_PATH, LD_LIBRARY_PATH) for the builds of
# later issues. A pip package ships only versioned libraries (libcudnn.so.9), which
# find_library does not look for: each one found gets a prefix in the build folder with
# include/ and lib/ linked to it, plus the unversioned names. PyTorch itself keeps the
# original LD_LIBRARY_PATH, so that it loads its own cuDNN and NCCL, not these.
find_cuda_lib() {  # find_cuda_lib HEADER LIBNAME PYMODULE -> "root include_dir lib_dir"
  local header=$1 lib=$2 mod=$3 root inc libdir d nv pip_root
  pip_root=$(py_pkg_dir "$mod" || true)
  if [ -z "$pip_root" ] && nv=$(py_pkg_dir nvidia); then  # another wheel layout (nvidia/cu13/...)
    d=$(find "$nv" -name "lib$lib.so*" 2>/dev/null | head -n 1)
    [ -n "$d" ] && pip_root=$(dirname "$(dirname "$d")")
  fi
  for root in ${cuda_home:+"$cuda_home"} /usr/local/cuda /usr /usr/local "$pip_root"; do
    if [ -z "$root" ] || [ ! -d "$root" ]; then continue; fi
    inc="" libdir=""
    for d in "$root/include" "$root/include/x86_64-linux-gnu" "$root/targets/x86_64-linux/include"; do
      [ -z "$inc" ] && [ -f "$d/$header" ] && inc=$d
    done
    for d in "$root/lib64" "$root/lib" "$root/lib/x86_64-linux-gnu" "$root/targets/x86_64-linux/lib"; do
      [ -z "$libdir" ] && compgen -G "$d/lib$lib.so*" >/dev/null && libdir=$d
    done
    if [ -n "$inc" ] && [ -n "$libdir" ]; then
      echo "$root $inc $libdir"
      return 0
    fi
  done
  return 1
}

make_prefix() {  # make_prefix NAME INCLUDE_DIR LIB_DIR -> a prefix CMake's find_* understands
  local p=$build_dir/found-$1 f base
  rm -rf "$p" && mkdir -p "$p/lib"
  ln -s "$2" "$p/include"
  for f in "$3"/lib"$1"*.so*; do
    base=$(basename "$f")
    ln -sf "$f" "$p/lib/$base"
    [ -e "$p/lib/${base%%.so*}.so" ] || ln -s "$f" "$p/lib/${base%%.so*}.so"
  done
  echo "$p"
}

version_from_header() {  # version_from_header FILE MAJOR_MACRO MINOR_MACRO PATCH_MACRO
  local f=$1 out="" m v
  for m in "$2" "$3" "$4"; do
    v=$(grep -m1 -E "#define[[:space:]]+${m}[[:space:]]" "$f" 2>/dev/null | awk '{print $3}')
    out=${out:+$out.}${v:-?}
  done
  echo "$out"
}

extra_prefixes=()
cudnn_note="not found" nccl_note="not found"
if found=$(find_cuda_lib cudnn.h cudnn nvidia.cudnn); then
  read -r root inc libdir <<< "$found"
  ver_h=$inc/cudnn_version.h; [ -f "$ver_h" ] || ver_h=$inc/cudnn.h
  ver=$(version_from_header "$ver_h" CUDNN_MAJOR CUDNN_MINOR CUDNN_PATCHLEVEL)
  CUDNN_ROOT=$(make_prefix cudnn "$inc" "$libdir")
  export CUDNN_ROOT CUDNN_INCLUDE_DIR=$inc CUDNN_LIBRARY_DIR=$libdir
  extra_prefixes+=("$CUDNN_ROOT")
  export LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  cudnn_note="$ver in $root"
fi
if found=$(find_cuda_lib nccl.h nccl nvidia.nccl); then
  read -r root inc libdir <<< "$found"
  ver=$(version_from_header "$inc/nccl.h" NCCL_MAJOR NCCL_MINOR NCCL_PATCH)
  NCCL_ROOT=$(make_prefix nccl "$inc" "$libdir")
  export NCCL_ROOT NCCL_INCLUDE_DIR=$inc NCCL_LIBRARY_DIR=$libdir
  extra_prefixes+=("$NCCL_ROOT")
  export LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  nccl_note="$ver in $root"
fi

torch_note="no python3"
if [ -n "$py" ]; then
  torch_note=$(timeout 120 "$py" -c '
import torch
cuda = torch.cuda.is_available()
print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, GPU seen: {cuda}"
      + (f", cuDNN {torch.backends.cudnn.version()}, NCCL {\".\".join(map(str, torch.cuda.nccl.version()))}" if cuda else ""))
' 2>/dev/null || echo "python3 has no usable torch")
fi

{
  echo
  echo "\$ nvcc --version"; { [ -n "$nvcc" ] && "$nvcc" --version; } || echo "nvcc: not found"
  echo; echo "\$ c++ --version"; c++ --version 2>&1 | head -1
  echo; echo "\$ cmake --version"; cmake --version 2>&1 | head -1
  echo; echo "\$ ninja --version"; ninja --version 2>&1
  echo; echo "compute-sanitizer: ${sanitizer:-not found}"
  [ -n "$sanitizer" ] && "$sanitizer" --version 2>&1 | tail -n 2
  echo; echo "cuDNN: $cudnn_note"
  [ -n "${CUDNN_ROOT:-}" ] && echo "  CUDNN_ROOT=$CUDNN_ROOT -> include $CUDNN_INCLUDE_DIR, lib $CUDNN_LIBRARY_DIR: $(cd "$CUDNN_LIBRARY_DIR" && echo libcudnn.so*)"
  echo "NCCL: $nccl_note"
  [ -n "${NCCL_ROOT:-}" ] && echo "  NCCL_ROOT=$NCCL_ROOT -> include $NCCL_INCLUDE_DIR, lib $NCCL_LIBRARY_DIR: $(cd "$NCCL_LIBRARY_DIR" && echo libnccl.so*)"
  echo "python3: ${py:-not found}; $torch_note"
  echo; echo "build dependencies: ${deps:-the system packages (no --deps folder)}"
  [ -n "$deps" ] && cat "$deps/PACKAGES.txt" 2>/dev/null
  echo; echo "cores: $(nproc); memory: $(free -g 2>/dev/null | awk '/Mem:/ {print $2 " GiB"}'); $(uname -sr)"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
} >> "$env_log" 2>&1

header_lines+=("GPU: ${gpu_list:-none found (nvidia-smi $(command -v nvidia-smi >/dev/null && echo 'lists no GPU' || echo 'not installed'))}")
header_lines+=("nvcc: $([ -n "$nvcc" ] && "$nvcc" --version | grep -o 'release [0-9.]*' || echo 'not found')   compute-sanitizer: $([ -n "$sanitizer" ] && echo found || echo 'not found')   cuDNN: $cudnn_note   NCCL: $nccl_note")
header_lines+=("python3: $torch_note")
section "environment"
cat "$env_log" >> "$details"
record environment ok $(($(date +%s) - t0)) "GPU: $([ $have_gpu = 1 ] && echo "${gpu_list%%,*}" || echo none); nvcc: $([ -n "$nvcc" ] && echo yes || echo no)"
if [ $have_gpu = 0 ]; then
  say "no GPU: the CUDA tests, memcheck and benchmarks will be skipped; CUDA code is still built when nvcc is here"
fi

# ---- stage 2: configure -----------------------------------------------------------------
prefix_path=$(IFS=';'; echo "${deps:+$deps/usr;}${extra_prefixes[*]}")
cmake_args=(-S "$repo" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release
  -DEMBER_CUDA_ARCHS=90 -DEMBER_BUILD_BENCH=ON -DEMBER_BUILD_EXAMPLES=ON -DEMBER_BUILD_TESTS=ON
  "-DCMAKE_PREFIX_PATH=$prefix_path")
if [ -n "$nvcc" ]; then
  cmake_args+=(-DEMBER_CUDA=ON "-DCMAKE_CUDA_COMPILER=$nvcc")
else
  cmake_args+=(-DEMBER_CUDA=OFF)
fi
section "configure"
echo "\$ cmake ${cmake_args[*]}" >> "$details"
configured=0
say "configure (CUDA $([ -n "$nvcc" ] && echo "on, sm_90" || echo "off: no nvcc"))"
run_logged "$(stage_limit 120 360)" "$logs/configure.log" cmake "${cmake_args[@]}"
attach_log "$logs/configure.log" 60
if [ $run_rc = 0 ]; then
  configured=1
  found_in=$(grep -E '^(Eigen3_DIR|doctest_DIR|benchmark_DIR|ZLIB_INCLUDE_DIR):' "$build_dir/CMakeCache.txt" | sed 's/:[A-Z]*=/=/' | paste -sd' ')
  echo "found: $found_in" >> "$details"
  with_cuda=$(grep -o 'ember: CUDA backend [A-Z]*' "$logs/configure.log" | awk '{print $4}')
  record configure ok "$run_secs" "CUDA backend ${with_cuda:-?}; benchmarks $(grep -q 'Google Benchmark not found' "$logs/configure.log" && echo 'NOT found' || echo found)"
else
  record configure "$([ $run_rc = 124 ] && echo TIMEOUT || echo FAIL)" "$run_secs" "rc $run_rc (see details)"
fi

# ---- stages 3-4: build: the CUDA targets first (and the trainer), so that a slow or broken
# build elsewhere still leaves the CUDA tests, benchmarks and trainer to run; then everything
# (-k 0: all that can) ----
warnings_in() { grep -c -E 'warning[: #]' "$1" 2>/dev/null || true; }
errors_in() { grep -c -E '(error|Error)[: ]' "$1" 2>/dev/null || true; }
build_stage() {  # build_stage NAME LOG MAX_SECONDS targets...
  local name=$1 log=$2 max=$3 limit status
  shift 3
  limit=$(stage_limit "$max" 210)
  section "$name"
  if [ "$limit" -lt 20 ]; then
    record "$name" skip 0 "no time left"
    return
  fi
  local target_args=()
  [ $# -gt 0 ] && target_args=(--target "$@")
  say "$name: cmake --build -j$jobs ${target_args[*]} (limit ${limit}s)"
  run_logged "$limit" "$log" cmake --build "$build_dir" -j "$jobs" "${target_args[@]}" -- -k 0
  {
    grep -E 'warning[: #]|error[: ]|Error [0-9]|FAILED:' "$log" | head -n 80
    echo "(last lines of the build log)"
    tail -n 15 "$log"
  } >> "$details"
  case $run_rc in 0) status=ok ;; 124) status=TIMEOUT ;; *) status=FAIL ;; esac
  record "$name" "$status" "$run_secs" "$(warnings_in "$log") warning lines, $(grep -c '^FAILED:' "$log") failed steps"
}
if [ $configured = 1 ]; then
  if [ -n "$nvcc" ]; then
    cuda_targets=()
    for t in ember ember_cuda_tests bench_cuda fashion_mnist ember-run; do
      ninja -C "$build_dir" -t query "$t" >/dev/null 2>&1 && cuda_targets+=("$t")
    done
    build_stage "build (CUDA targets)" "$logs/build_cuda.log" 330 "${cuda_targets[@]}"
  fi
  build_stage "build (all)" "$logs/build_all.log" 330
else
  record build skip 0 "not configured"
fi

cuda_test_bin=$build_dir/tests/cuda/ember_cuda_tests
bench_bin=$build_dir/bench/bench_cuda

# ---- stage 5: the whole ctest suite -------------------------------------------------------
# Counts from ctest's per-test lines: "  3/97 Test  #3: core.test_x ....   Passed  0.1 sec".
count_tests() {  # count_tests LOG REGEX_ON_NAME -> "passed failed skipped total"
  awk -v re="$2" '
    / Test +#[0-9]+: / {
      name = $0; sub(/.*#[0-9]+: /, "", name); sub(/ .*/, "", name)
      if (name !~ re) next
      total++
      if ($0 ~ /\*\*\*Skipped|Not Run \(Disabled\)/) skipped++  # "Not Run" alone: no executable
      else if ($0 ~ / Passed /) passed++
      else failed++
    }
    END { printf "%d %d %d %d\n", passed, failed, skipped, total }' "$1"
}
if [ -x "$build_dir/tests/ember_tests" ] || [ -x "$cuda_test_bin" ]; then
  limit=$(stage_limit 150 200)
  section "ctest (all)"
  # The examples' tests (smoke, --amp) train on the CPU for minutes when the data is there: only with --examples.
  exclude=()
  [ $examples_smoke = 1 ] || exclude=(-E '^examples[.]')
  say "ctest: the whole suite, -j8 ${exclude[*]} (limit ${limit}s)"
  # OMP_NUM_THREADS: eight test processes at once share the cores.
  OMP_NUM_THREADS=2 run_logged "$limit" "$logs/ctest.log" ctest --test-dir "$build_dir" --output-on-failure -j8 \
    --timeout $((120 * budget / 540)) "${exclude[@]}"
  attach_log "$logs/ctest.log" 200
  read -r p f s n <<< "$(count_tests "$logs/ctest.log" '.')"
  read -r cp cf cs cn <<< "$(count_tests "$logs/ctest.log" '^cuda[.]')"
  note="$p passed, $f failed, $s skipped of $n; CUDA entries (cuda.*): $cp passed, $cf failed, $cs skipped of $cn"
  if [ $have_gpu = 1 ] && [ "$cn" -gt 0 ] && [ "$cs" = "$cn" ]; then
    note="$note; the GPU is there but every CUDA entry skipped"
    run_rc=1
  elif [ $have_gpu = 0 ] && [ "$cn" -gt 0 ]; then
    note="$note (no GPU: CUDA entries skipped)"
  fi
  case $run_rc in 0) status=ok ;; 124) status=TIMEOUT ;; *) status=FAIL ;; esac
  [ "$f" -gt 0 ] && status=FAIL
  record "ctest (all)" "$status" "$run_secs" "$note"
else
  record "ctest (all)" skip 0 "no test binary was built"
fi

# ---- stage 6: the CUDA benchmarks --------------------------------------------------------
section "CUDA benchmarks (bench/bench_cuda)"
bench_json=$build_dir/bench_cuda.json
rm -f "$bench_json"
if [ ! -x "$bench_bin" ]; then
  record "bench (ember)" skip 0 "bench_cuda was not built$([ -n "$nvcc" ] || echo ' (no CUDA)')"
elif [ $have_gpu = 0 ]; then
  record "bench (ember)" skip 0 "no GPU"
else
  limit=$(stage_limit 120 90)
  say "bench_cuda (limit ${limit}s)"
  run_logged "$limit" "$logs/bench.log" "$bench_bin" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
    --benchmark_min_time=0.2 "--benchmark_out=$bench_json" --benchmark_out_format=json
  attach_log "$logs/bench.log" 80
  errors=$(grep 'ERROR OCCURRED' "$logs/bench.log" | awk '{print $1}' | sort -u | wc -l)
  case $run_rc in 0) status=ok ;; 124) status=TIMEOUT ;; *) status=FAIL ;; esac
  [ "$errors" -gt 0 ] && status=FAIL
  record "bench (ember)" "$status" "$run_secs" "$errors benchmarks with errors; table below"
fi

# ---- stage 7: the same workloads in PyTorch, side by side ---------------------------------
section "CUDA benchmarks: ember and PyTorch"
if [ $have_gpu = 0 ] || [ -z "$py" ]; then
  record "bench (PyTorch)" skip 0 "$([ $have_gpu = 0 ] && echo 'no GPU' || echo 'no python3')"
else
  limit=$(stage_limit 90 45)
  if [ "$limit" -lt 20 ]; then
    record "bench (PyTorch)" skip 0 "no time left"
  else
    say "PyTorch's side (limit ${limit}s)"
    ember_json_arg=()
    [ -f "$bench_json" ] && ember_json_arg=(--ember-json "$bench_json")
    LD_LIBRARY_PATH=$orig_ld_library_path PYTHONUNBUFFERED=1 run_logged "$limit" "$logs/bench_torch.log" \
      "$py" scripts/gpu_bench_torch.py "${ember_json_arg[@]}" --json "$build_dir/bench_torch.json"
    cat "$logs/bench_torch.log" >> "$details"
    case $run_rc in 0) status=ok ;; 77) status=skip ;; 124) status=TIMEOUT ;; *) status=FAIL ;; esac
    record "bench (PyTorch)" "$status" "$run_secs" "$(grep -m1 '^ember: ' "$logs/bench_torch.log" | sed 's/^ember: bench\/bench_cuda; //')"
    # The table goes into the summary too.
    bench_table=$(sed -n '/^CUDA benchmarks: /,$p' "$logs/bench_torch.log")
  fi
fi

# ---- stages 8-9: the Fashion-MNIST trainer, one epoch on the GPU, then on the CPU ------------
# The whole example program (data loading, the CNN, AdamW with its one-cycle schedule,
# evaluation, checkpoints) with --device cuda; then the same epoch (same seed, so the same
# initial weights, split and batch order) with --device cpu, and the two test accuracies side
# by side: they must agree within 2 points (dropout masks and summation orders differ between
# the devices, so not to the digit). The GPU machine has no network and no dataset package:
# scripts/prepare_gpu_deps.sh unpacks the package into the deps folder, which travels with it.
find_fashion_mnist() {
  local d
  for d in ${FASHION_MNIST_DIR:+"$FASHION_MNIST_DIR"} /usr/share/datasets/fashion-mnist \
    ${deps:+"$deps/usr/share/datasets/fashion-mnist"}; do
    if compgen -G "$d/train-images-idx3-ubyte*" >/dev/null && compgen -G "$d/t10k-labels-idx1-ubyte*" >/dev/null; then
      echo "$d"
      return 0
    fi
  done
  return 1
}
trainer_bin=$build_dir/examples/fashion_mnist
test_accuracy() { sed -n 's/^test accuracy \([0-9.]*\)%.*/\1/p' "$1" | tail -n 1; }
epoch_seconds() { sed -n 's/^epoch 1\/1 .*| \([0-9.]*\) s$/\1/p' "$1" | tail -n 1; }
trainer_run() {  # trainer_run NAME LIMIT DEVICE [args...]: one epoch, log in trainer_NAME.log and the details
  local name=$1 limit=$2 device=$3 log=$logs/trainer_$1.log
  shift 3
  local args=(--epochs 1 --data-dir "$fmnist_dir" --workers 2 --seed 0 --device "$device" --out-dir "$build_dir/trainer-$name" "$@")
  echo "\$ examples/fashion_mnist ${args[*]}" >> "$details"
  say "trainer, 1 epoch, --device $device $* (limit ${limit}s)"
  run_logged "$limit" "$log" "$trainer_bin" "${args[@]}"
  tail -n 40 "$log" >> "$details"
}
# Appends "<label>: D points (at most 2)" to the stage's note and fails the stage when the two
# test accuracies are more than 2 points apart, or when the run gave no accuracy at all.
compare_accuracy() {
  local reference=$1 accuracy=$2 label=$3 diff
  if [ -z "$accuracy" ]; then
    [ "$status" = ok ] && status=FAIL
    return 0
  fi
  diff=$(awk -v a="$reference" -v b="$accuracy" 'BEGIN { d = a - b; if (d < 0) d = -d; printf "%.2f", d }')
  note="$note; $label: $diff points (at most 2)"
  if awk -v d="$diff" 'BEGIN { exit !(d > 2) }'; then status=FAIL; fi
}
section "Fashion-MNIST trainer, 1 epoch on the GPU and on the CPU"
fmnist_dir=$(find_fashion_mnist || true)
if [ ! -x "$trainer_bin" ]; then
  record "trainer (GPU, 1 epoch)" skip 0 "examples/fashion_mnist was not built"
elif [ $have_gpu = 0 ]; then
  record "trainer (GPU, 1 epoch)" skip 0 "no GPU"
elif [ -z "$fmnist_dir" ]; then
  msg="no Fashion-MNIST data (looked in \$FASHION_MNIST_DIR, /usr/share/datasets/fashion-mnist and <deps>/usr/share/datasets/fashion-mnist; scripts/prepare_gpu_deps.sh puts it in the deps folder)"
  echo "$msg" >> "$details"
  record "trainer (GPU, 1 epoch)" skip 0 "$msg"
else
  limit=$(stage_limit 90 20)
  if [ "$limit" -lt 20 ]; then
    record "trainer (GPU, 1 epoch)" skip 0 "no time left"
  else
    trainer_run cuda "$limit" cuda
    cuda_acc=$(test_accuracy "$logs/trainer_cuda.log")
    case $run_rc in 0) status=ok ;; 124) status=TIMEOUT ;; *) status=FAIL ;; esac
    [ $status = ok ] && [ -z "$cuda_acc" ] && status=FAIL
    record "trainer (GPU, 1 epoch)" "$status" "$run_secs" \
      "test accuracy ${cuda_acc:-?}%, epoch $(epoch_seconds "$logs/trainer_cuda.log" || true) s; data $fmnist_dir; rc $run_rc"
    limit=$(stage_limit 60 20)
    if [ -z "$cuda_acc" ]; then
      record "trainer (CPU, 1 epoch)" skip 0 "the GPU run gave no accuracy to compare with"
    elif [ "$limit" -lt 30 ]; then
      record "trainer (CPU, 1 epoch)" skip 0 "no time left"
    else
      trainer_run cpu "$limit" cpu
      cpu_acc=$(test_accuracy "$logs/trainer_cpu.log")
      case $run_rc in 0) status=ok ;; 124) status=TIMEOUT ;; *) status=FAIL ;; esac
      note="test accuracy ${cpu_acc:-?}%, epoch $(epoch_seconds "$logs/trainer_cpu.log" || true) s"
      compare_accuracy "$cuda_acc" "$cpu_acc" "GPU - CPU"
      record "trainer (CPU, 1 epoch)" "$status" "$run_secs" "$note"
    fi
  fi
fi

# ---- stages 10-11: the trainer with mixed precision on the GPU ------------------------------
# The same epoch (same seed, data and schedule) with --amp fp16 (float16 autocast and a
# GradScaler) and --amp bf16 (bfloat16 autocast, no scaler), each against the float32 GPU
# epoch's test accuracy: within 2 points (rounding changes the trajectory, as dropout and
# summation order do between devices). The fp16 note has the GradScaler's final scale and
# its skipped steps (some are normal while the scale, 65536 at first, backs off to its level).
section "Fashion-MNIST trainer, 1 epoch on the GPU with --amp fp16 and --amp bf16"
for amp in fp16 bf16; do
  name="trainer (GPU, $amp)"
  if [ $have_gpu = 0 ] || [ ! -x "$trainer_bin" ]; then
    record "$name" skip 0 "$([ $have_gpu = 0 ] && echo 'no GPU' || echo 'examples/fashion_mnist was not built')"
    continue
  fi
  if [ -z "${cuda_acc:-}" ]; then
    record "$name" skip 0 "no float32 GPU accuracy to compare with"
    continue
  fi
  limit=$(stage_limit 60 20)
  if [ "$limit" -lt 20 ]; then
    record "$name" skip 0 "no time left"
    continue
  fi
  trainer_run "cuda_$amp" "$limit" cuda --amp "$amp"
  log=$logs/trainer_cuda_$amp.log
  amp_acc=$(test_accuracy "$log")
  case $run_rc in 0) status=ok ;; 124) status=TIMEOUT ;; *) status=FAIL ;; esac
  note="test accuracy ${amp_acc:-?}%, epoch $(epoch_seconds "$log" || true) s"
  grep -q "mixed precision $amp" "$log" || { note="$note; the run's header does not say mixed precision $amp"; status=FAIL; }
  scaler_line=$(sed -n 's/^ *GradScaler: //p' "$log" | tail -n 1)
  [ -n "$scaler_line" ] && note="$note; GradScaler: $scaler_line"
  compare_accuracy "$cuda_acc" "$amp_acc" "float32 - $amp"
  record "$name" "$status" "$run_secs" "$note"
done

# ---- stage 12: DistributedDataParallel over NCCL, one GPU (world size 1) --------------------
# The trainer under the launcher with --dist nccl: ProcessGroupNCCL's unique-id exchange
# through the store, its stream ordered against the compute stream, DDP's bucket allreduces
# on it, for a short epoch; the test accuracy must be within 2 points of the plain GPU epoch's
# (a 10000-image subset: fewer steps, so a lower accuracy than stage 8's; compared with a run
# on the same subset without --dist).
section "DistributedDataParallel over NCCL on one GPU (ember-run --nproc-per-node 1, --dist nccl)"
name="DDP NCCL (1 GPU)"
launcher_bin=$build_dir/ember-run
if [ $have_gpu = 0 ] || [ ! -x "$trainer_bin" ] || [ ! -x "$launcher_bin" ] || [ -z "${fmnist_dir:-}" ]; then
  record "$name" skip 0 "$([ $have_gpu = 0 ] && echo 'no GPU' || echo 'trainer, ember-run or data missing')"
elif ! grep -q '^EMBER_NCCL_LIBRARY:FILEPATH=/' "$build_dir/CMakeCache.txt" 2>/dev/null; then
  record "$name" skip 0 "ember was built without NCCL (no nccl.h/libnccl found at configure)"
else
  limit=$(stage_limit 60 20)
  if [ "$limit" -lt 30 ]; then
    record "$name" skip 0 "no time left"
  else
    subset=(--limit-train 10000 --limit-test 2000)
    trainer_run cuda_subset "$((limit / 2))" cuda "${subset[@]}"
    plain_acc=$(test_accuracy "$logs/trainer_cuda_subset.log")
    log=$logs/trainer_ddp_nccl.log
    args=(--epochs 1 --data-dir "$fmnist_dir" --workers 2 --seed 0 --dist nccl --out-dir "$build_dir/trainer-ddp-nccl" "${subset[@]}")
    echo "\$ ember-run --nproc-per-node 1 --standalone examples/fashion_mnist ${args[*]}" >> "$details"
    run_logged "$((limit / 2))" "$log" "$launcher_bin" --nproc-per-node 1 --standalone "$trainer_bin" "${args[@]}"
    tail -n 40 "$log" >> "$details"
    ddp_acc=$(sed -n 's/^\[default0\]:test accuracy \([0-9.]*\)%.*/\1/p' "$log" | tail -n 1)
    case $run_rc in 0) status=ok ;; 124) status=TIMEOUT ;; *) status=FAIL ;; esac
    note="test accuracy ${ddp_acc:-?}% (without --dist: ${plain_acc:-?}%), rc $run_rc"
    grep -q 'data-parallel over 1 ranks (nccl)' "$log" || { note="$note; the header does not say nccl"; status=FAIL; }
    if [ -n "$plain_acc" ]; then compare_accuracy "$plain_acc" "$ddp_acc" "plain - DDP"; else status=FAIL; fi
    record "$name" "$status" "$run_secs" "$note"
  fi
fi

# ---- stage 13: the CUDA tests under compute-sanitizer memcheck (last: it takes what is left) --
# The doctest binary runs every CUDA case in one process; memcheck reports bad device memory
# accesses and CUDA API errors. EMBER_NO_ALLOCATOR_CACHE=1 asks the allocators not to cache,
# so an access past a tensor's end cannot land in a cached neighbour unnoticed.
section "CUDA tests under compute-sanitizer memcheck"
if [ ! -x "$cuda_test_bin" ]; then
  record "memcheck (CUDA tests)" skip 0 "ember_cuda_tests was not built"
elif [ $have_gpu = 0 ]; then
  "$cuda_test_bin" > "$logs/cuda_tests.log" 2>&1
  cat "$logs/cuda_tests.log" >> "$details"
  record "memcheck (CUDA tests)" skip 0 "no GPU: $(sed -n 's/.*test cases passing the current filters: \([0-9]*\).*/\1/p' "$logs/cuda_tests.log" | head -n 1) CUDA test cases skipped"
else
  limit=$(stage_limit 180 0)
  if [ -n "$sanitizer" ]; then
    cmd=("$sanitizer" --tool memcheck --error-exitcode 86 --print-limit 30 "$cuda_test_bin" --duration=true)
    name="memcheck (CUDA tests)"
  else
    cmd=("$cuda_test_bin" --duration=true)
    name="CUDA tests (no sanitizer)"
  fi
  echo "\$ EMBER_NO_ALLOCATOR_CACHE=1 ${cmd[*]}" >> "$details"
  say "$name (limit ${limit}s)"
  EMBER_NO_ALLOCATOR_CACHE=1 run_logged "$limit" "$logs/memcheck.log" "${cmd[@]}"
  attach_log "$logs/memcheck.log" 120
  doctest_line=$(grep -E '^\[doctest\] test cases:' "$logs/memcheck.log" | tail -1 | sed 's/^\[doctest\] //; s/  */ /g')
  san_line=$(grep -E 'ERROR SUMMARY: [0-9]+ error' "$logs/memcheck.log" | tail -1 | sed 's/^=* *//')
  case $run_rc in 0) status=ok ;; 124) status=TIMEOUT ;; *) status=FAIL ;; esac  # 86: memcheck found errors
  grep -q 'Device not supported' "$logs/memcheck.log" && san_line="compute-sanitizer does not support this device"
  record "$name" "$status" "$run_secs" "${doctest_line:-no doctest summary}${san_line:+; $san_line}; rc $run_rc"
fi

write_report
[ -n "${OUT:-}" ] && [ -f "$bench_json" ] && cp "$bench_json" "$OUT/" 2>/dev/null
say "done in $(elapsed) s; report: $report"
echo
sed -n '1,/^status: ok = passed/p' "$report"
grep -q -E '^ember GPU check: PASS' "$report"
