#!/usr/bin/env bash
# Builds the GPU bundle here, on a machine with the CUDA toolkit and no GPU: everything the GPU
# check (scripts/gpu_check.sh --bundle DIR) runs on a GPU machine, prebuilt, so the device's few
# minutes go to running rather than compiling. The folder (ignored by git; at most 48 MiB, the
# check refuses a larger one) travels with the working tree:
#
#   lib/   libember.so (sm_90 machine code only, -lineinfo, compressed fatbins, stripped) and the
#          non-CUDA shared libraries the programs need beyond glibc and libstdc++ (libgomp,
#          libbenchmark, libz); CUDA's own (cuBLAS, cuDNN, NCCL) are the GPU machine's
#   bin/   ember_cuda_tests, ember_gpu_probe, bench_cuda, fashion_mnist, ember-run (stripped)
#   data/fashion-mnist/   the first 15000 training and 2000 test images of Fashion-MNIST
#   deps/  the build inputs the GPU machine lacks (doctest, Google Benchmark, zlib headers),
#          for the check's fallback build when a carried program cannot load there
#   cases.txt       the CUDA test cases, file TAB name (from the test binary's own list)
#   manifest.json   what it was built from and against: commit, CMake options, CUDA runtime,
#                   cuBLAS, cuDNN and NCCL versions, file sizes, and the CPU reference: one
#                   epoch of the trainer on the subset here, whose test accuracy the GPU
#                   epochs are held to
#
# No protobuf and no gloo are linked (TensorBoard and ProcessGroupGloo off): the GPU machine
# has neither. The compile commands are CI's release build's (same flags, same include link),
# so ccache serves one build's objects to the other.
#
# Usage: scripts/gpu_bundle.sh [DIR]        (default: gpu-bundle)
# Environment: EMBER_BUNDLE_BUILD_DIR (default build-gpu-bundle), EMBER_BUNDLE_JOBS (default nproc)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
out=${1:-gpu-bundle}
build=${EMBER_BUNDLE_BUILD_DIR:-build-gpu-bundle}
jobs=${EMBER_BUNDLE_JOBS:-$(nproc)}
max_mib=48
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$repo} CCACHE_NOHASHDIR=1
t0=$(date +%s)
say() { echo "[gpu_bundle $(printf '%3d' $(($(date +%s) - t0)))s] $*"; }

# The CUDA options of CI's release build (.ci/run); both must stay the same for ccache.
cuda_flags=(-DEMBER_CUDA=ON -DEMBER_CUDA_ARCHS=90-real -DEMBER_CUDA_LINEINFO=ON -DEMBER_CUDA_COMPRESS=size)
say "configure $build (CUDA sm_90 only, no TensorBoard, no gloo)"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEMBER_WERROR=ON \
  -DEMBER_BUILD_INCLUDE_DIR="$repo/build-include" "${cuda_flags[@]}" \
  -DEMBER_TENSORBOARD=OFF -DCMAKE_DISABLE_FIND_PACKAGE_Gloo=ON >/dev/null
targets=(ember ember_cuda_tests ember_gpu_probe bench_cuda fashion_mnist ember-run)
say "build ${targets[*]}"
cmake --build "$build" -j "$jobs" --target "${targets[@]}"

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/data/fashion-mnist" "$out/deps"
out=$(cd "$out" && pwd)
libember=$(readlink -f "$build/libember.so")
cp "$libember" "$out/lib/$(basename "$libember")"
ln -s "$(basename "$libember")" "$out/lib/libember.so.0"
programs=("$build/tests/cuda/ember_cuda_tests" "$build/tests/cuda/ember_gpu_probe" "$build/bench/bench_cuda"
  "$build/examples/fashion_mnist" "$build/ember-run")
for p in "${programs[@]}"; do cp "$p" "$out/bin/"; done
strip --strip-unneeded "$out/lib/$(basename "$libember")" "$out"/bin/*

# The libraries to carry: what the programs load, less the C/C++ runtime every Linux has and
# CUDA's libraries, which the GPU machine must provide in versions matching its driver.
skip='^(linux-vdso|ld-linux|libc\.|libm\.|libdl\.|librt\.|libpthread\.|libstdc\+\+\.|libgcc_s\.|libember\.|libcuda\.|libcudart\.|libcublas|libcudnn|libnccl)'
for f in "$out"/bin/* "$out/lib/$(basename "$libember")"; do
  LD_LIBRARY_PATH=$out/lib ldd "$f" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
  if ! [[ $name =~ $skip ]]; then cp -L "$path" "$out/lib/$name"; fi
done
for forbidden in libprotobuf libgloo; do
  if compgen -G "$out/lib/$forbidden*" >/dev/null; then
    echo "gpu_bundle: $forbidden is linked, but the GPU machine has none" >&2
    exit 1
  fi
done

# The fallback build's inputs: the files of the Debian packages it needs, as installed here.
for pkg in doctest-dev libbenchmark-dev libbenchmark1debian zlib1g-dev zlib1g; do
  dpkg -L "$pkg" | while read -r f; do
    if [ -f "$f" ] && [[ $f != /usr/share/doc/* && $f != /usr/share/man/* ]]; then
      mkdir -p "$out/deps$(dirname "$f")" && cp -P "$f" "$out/deps$f"
    fi
  done
done

say "Fashion-MNIST subset"
python3 scripts/gpu_bundle.py data /usr/share/datasets/fashion-mnist "$out/data/fashion-mnist" 15000 2000

say "the CUDA test cases"
"$out/bin/ember_cuda_tests" --list-test-cases --reporters=xml > "$build/cases.xml" 2>/dev/null || true
python3 - "$build/cases.xml" "$out/cases.txt" <<'EOF'
import sys, xml.etree.ElementTree as ET
cases = [(c.get("filename"), c.get("name")) for c in ET.parse(sys.argv[1]).getroot().iter("TestCase")]
with open(sys.argv[2], "w") as f:
    for file, name in cases:
        f.write(f"{file}\t{name}\n")
print(f"{len(cases)} CUDA test cases in {len({c[0] for c in cases})} files")
EOF

say "CPU reference: one epoch of the trainer on the subset"
ref_dir=$build/cpu-reference
rm -rf "$ref_dir"
ref_t0=$(date +%s%N)
LD_LIBRARY_PATH=$out/lib "$out/bin/fashion_mnist" --epochs 1 --seed 0 --workers 2 --device cpu \
  --data-dir "$out/data/fashion-mnist" --out-dir "$ref_dir" > "$build/cpu-reference.log" 2>&1
ref_ms=$((($(date +%s%N) - ref_t0) / 1000000))
ref_secs=$((ref_ms / 1000)).$(printf '%03d' $((ref_ms % 1000)))
accuracy=$(sed -n 's/^test accuracy \([0-9.]*\)%.*/\1/p' "$build/cpu-reference.log" | tail -n 1)
[ -n "$accuracy" ] || { cat "$build/cpu-reference.log" >&2; echo "gpu_bundle: the CPU epoch gave no accuracy" >&2; exit 1; }

say "manifest"
LD_LIBRARY_PATH=$out/lib "$out/bin/ember_gpu_probe" --built-against > "$build/built-against.txt"
nccl_h=$(grep -m1 '^EMBER_NCCL_INCLUDE_DIR:' "$build/CMakeCache.txt" | sed 's/.*=//')/nccl.h
nccl_built=$(awk '/#define NCCL_(MAJOR|MINOR|PATCH) / {v = v (v ? "." : "") $3} END {print v}' "$nccl_h" 2>/dev/null || true)
python3 scripts/gpu_bundle.py manifest "$out" \
  --commit "$(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo '+changes')" \
  "--cmake=${cuda_flags[*]} -DEMBER_TENSORBOARD=OFF -DCMAKE_DISABLE_FIND_PACKAGE_Gloo=ON" \
  --built-against "$build/built-against.txt" --nccl-built "${nccl_built:-not found}" \
  --cpu-accuracy "$accuracy" --cpu-seconds "$ref_secs" "--cpu-args=--epochs 1 --seed 0 --workers 2 --device cpu"

size_kib=$(du -sk "$out" | cut -f1)
say "bundle $out: $((size_kib / 1024)) MiB ($size_kib KiB), CPU reference accuracy $accuracy% in ${ref_secs%.*} s"
if [ "$size_kib" -gt $((max_mib * 1024)) ]; then
  echo "gpu_bundle: the bundle is $((size_kib / 1024)) MiB, over its $max_mib MiB limit" >&2
  exit 1
fi
