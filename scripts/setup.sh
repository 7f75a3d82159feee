#!/usr/bin/env bash
# Sets up a Debian 12 machine for ember and builds it: installs the Debian packages the build
# needs (only those missing), configures a Release build in build/ and compiles the main job's
# targets (the library and the Fashion-MNIST trainer); --all compiles everything (the tests,
# benchmarks and other examples too), as the test command needs.
# Usage: scripts/setup.sh [--all] [extra cmake -D options...]
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(g++ python3 cmake ninja-build ccache doctest-dev libbenchmark-dev zlib1g-dev liblapack-dev dataset-fashion-mnist libgloo-dev libprotobuf-dev protobuf-compiler fortunes graphviz clang libclang-rt-14-dev libomp-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

targets=(--target ember fashion_mnist)
if [ "${1:-}" = "--all" ]; then
  targets=()
  shift
fi
build_dir=${EMBER_BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$build_dir" -j2 "${targets[@]}"
