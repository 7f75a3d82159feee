#!/usr/bin/env bash
# Prepares, on a Debian 12 build machine with network, the folder of build dependencies that
# scripts/gpu_check.sh points CMake at on a GPU machine with no network and no Debian -dev
# packages: the .deb files of Eigen, doctest, Google Benchmark and zlib, unpacked with
# `dpkg -x` (nothing is installed). CMake finds them with -DCMAKE_PREFIX_PATH=<folder>/usr.
# It also unpacks the Fashion-MNIST dataset package (30 MB of gzip'd IDX files, in
# <folder>/usr/share/datasets/fashion-mnist), which gpu_check.sh's trainer stage reads.
#
# Usage: scripts/prepare_gpu_deps.sh [folder]     (default: shared/gpu-deps in the repository)
#
# Then it checks the folder on its own: a throwaway CMake project finds all four packages with
# the system's prefixes (/usr, /) hidden from find_package, builds against them and runs.
#
# What the build needs (every find_package of CMakeLists.txt, tests/, bench/):
#   Eigen3   -> libeigen3-dev   (headers, usr/share/eigen3/cmake/Eigen3Config.cmake)
#   doctest  -> doctest-dev     (header, usr/lib/cmake/doctest/doctestConfig.cmake)
#   benchmark-> libbenchmark-dev + its library libbenchmark1debian
#               (usr/lib/x86_64-linux-gnu/cmake/benchmark/benchmarkConfig.cmake)
#   ZLIB     -> zlib1g-dev + zlib1g: the headers, and libz.so's target to link against (the
#               program then loads the GPU machine's own libz.so.1)
# Not here: OpenMP (comes with g++), CUDAToolkit (the GPU machine's /usr/local/cuda), Threads.
# And not for the build: dataset-fashion-mnist -> the data of examples/fashion_mnist.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(libeigen3-dev doctest-dev libbenchmark-dev libbenchmark1debian zlib1g-dev zlib1g dataset-fashion-mnist)
dest=${1:-shared/gpu-deps}
max_mb=64

mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
debs=$(mktemp -d)
trap 'rm -rf "$debs"' EXIT

echo "prepare_gpu_deps: downloading ${packages[*]}"
# apt-get download writes into the current directory; as root it warns that _apt cannot read
# a mktemp folder (harmless), so that one line is dropped.
(cd "$debs" && { apt-get download "${packages[@]}" 2>&1 | grep -v "Download is performed unsandboxed"; }) || true
for p in "${packages[@]}"; do
  ls "$debs/${p}_"*.deb >/dev/null 2>&1 || { echo "prepare_gpu_deps: $p was not downloaded" >&2; exit 1; }
done

rm -rf "${dest:?}/usr" "${dest:?}/lib"
for deb in "$debs"/*.deb; do
  dpkg -x "$deb" "$dest"
done
# Documentation and manual pages are not needed to build.
rm -rf "$dest/usr/share/doc" "$dest/usr/share/man"

# Debian's symbolic links may be absolute (zlib1g-dev: libz.so -> /lib/x86_64-linux-gnu/...),
# which would point at the GPU machine's own files, or nowhere. Point them into the folder.
while IFS= read -r link; do
  target=$(readlink "$link")
  case $target in
    /*)
      if [ -e "$dest$target" ]; then
        ln -sfn "$(realpath --relative-to="$(dirname "$link")" "$dest$target")" "$link"
      else
        echo "prepare_gpu_deps: warning: $link -> $target has no target in the folder" >&2
      fi
      ;;
  esac
done < <(find "$dest" -type l)

# A record of what is inside, for the report of gpu_check.sh.
{
  # shellcheck disable=SC1091
  echo "# made by scripts/prepare_gpu_deps.sh on $(date -u +%Y-%m-%dT%H:%MZ) ($(. /etc/os-release && echo "$PRETTY_NAME"))"
  # shellcheck disable=SC2016  # dpkg-deb's own ${Field} syntax
  for deb in "$debs"/*.deb; do dpkg-deb --showformat='${Package} ${Version}\n' -W "$deb"; done
} > "$dest/PACKAGES.txt"

# Keep the folder out of commits: the device tool carries it (it is named in `carry`).
repo=$(pwd)
case $dest in
  "$repo"/*)
    rel=/${dest#"$repo"/}/
    exclude=$(git rev-parse --git-path info/exclude 2>/dev/null || true)
    if [ -n "$exclude" ] && ! git check-ignore -q "$dest/PACKAGES.txt" 2>/dev/null; then
      mkdir -p "$(dirname "$exclude")"
      echo "$rel" >> "$exclude"
      echo "prepare_gpu_deps: added $rel to $exclude (not for committing)"
    fi
    ;;
esac

# The check: with /usr and / ignored, every package must come from the folder.
check=$debs/check
mkdir -p "$check"
cat > "$check/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.24)
project(gpu_deps_check CXX)
find_package(Eigen3 3.3 REQUIRED NO_MODULE)
find_package(doctest REQUIRED)
find_package(benchmark REQUIRED)
find_package(ZLIB REQUIRED)
add_executable(gpu_deps_check main.cpp)
target_link_libraries(gpu_deps_check Eigen3::Eigen doctest::doctest benchmark::benchmark ZLIB::ZLIB)
CMAKE
cat > "$check/main.cpp" <<'CPP'
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <Eigen/Core>
#include <benchmark/benchmark.h>
#include <doctest/doctest.h>
#include <zlib.h>
TEST_CASE("the folder's packages work") {
  Eigen::Vector3f v(1, 2, 3);
  CHECK(v.sum() == 6);
  CHECK(zlibVersion()[0] == '1');
  benchmark::Shutdown();
}
CPP
echo "prepare_gpu_deps: checking the folder (a throwaway project, system prefixes hidden)"
if ! cmake -S "$check" -B "$check/build" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_PREFIX_PATH=$dest/usr" \
      "-DCMAKE_IGNORE_PREFIX_PATH=/usr;/" > "$check/log" 2>&1 ||
   ! cmake --build "$check/build" >> "$check/log" 2>&1 ||
   ! "$check/build/gpu_deps_check" >> "$check/log" 2>&1; then
  cat "$check/log" >&2
  echo "prepare_gpu_deps: the check failed" >&2
  exit 1
fi
for var in Eigen3_DIR doctest_DIR benchmark_DIR ZLIB_INCLUDE_DIR ZLIB_LIBRARY_RELEASE; do
  found=$(sed -n "s/^$var:[A-Z]*=//p" "$check/build/CMakeCache.txt")
  case $found in
    "$dest"/*) echo "  $var=${found#"$dest"/}" ;;
    *) echo "prepare_gpu_deps: $var=$found is not in the folder" >&2; exit 1 ;;
  esac
done

# The trainer's data: the four IDX files, where gpu_check.sh looks for them.
for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
  compgen -G "$dest/usr/share/datasets/fashion-mnist/$f*" >/dev/null ||
    { echo "prepare_gpu_deps: Fashion-MNIST's $f is not in usr/share/datasets/fashion-mnist" >&2; exit 1; }
done
echo "  Fashion-MNIST: usr/share/datasets/fashion-mnist"

size_kb=$(du -sk "$dest" | cut -f1)
echo "prepare_gpu_deps: $dest holds $((size_kb / 1024)) MB ($size_kb KB):"
sed 's/^/  /' "$dest/PACKAGES.txt"
if [ "$size_kb" -gt $((max_mb * 1024)) ]; then
  echo "prepare_gpu_deps: larger than $max_mb MB: the device tool carries at most 64 MiB in all" >&2
  exit 1
fi
echo "prepare_gpu_deps: use it with  cmake -DCMAKE_PREFIX_PATH=$dest/usr ..."
