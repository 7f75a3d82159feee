#!/bin/sh
# Builds bench_overhead.cpp against Debian's libtorch (libtorch-dev, libbenchmark-dev) and runs
# it, so its numbers can be set beside ember's (bench/README.md). Manual; not run in CI.
# Usage: bench/run_libtorch_overhead.sh [benchmark flags, e.g. --benchmark_min_time=0.2]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
torch_include=${TORCH_INCLUDE:-/usr/include/torch/csrc/api/include}
torch_lib=${TORCH_LIB:-/usr/lib/x86_64-linux-gnu}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
g++ -std=c++17 -O2 -DNDEBUG -I"$torch_include" "$here/libtorch_overhead.cpp" -o "$work/libtorch_overhead" \
    -L"$torch_lib" -ltorch -ltorch_cpu -lc10 -lbenchmark -lpthread
"$work/libtorch_overhead" "$@"
