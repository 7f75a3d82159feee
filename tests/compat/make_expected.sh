#!/bin/sh
# Regenerates tests/compat/expected/<name>.txt by building each compat program against
# Debian's libtorch (libtorch-dev 1.13) and running it. Manual: CI only compares against the
# committed files. Usage: tests/compat/make_expected.sh [name ...]   (default: every program)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
torch_include=${TORCH_INCLUDE:-/usr/include/torch/csrc/api/include}
torch_lib=${TORCH_LIB:-/usr/lib/x86_64-linux-gnu}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ $# -eq 0 ]; then
  set --
  for src in "$here"/*.cpp; do
    name=$(basename "$src" .cpp)
    [ "$name" = compare_output ] || set -- "$@" "$name"
  done
fi

mkdir -p "$here/expected"
failed=""
for name in "$@"; do
  echo "libtorch: $name"
  # One thread: the printed values must not depend on how libtorch splits its loops.
  if g++ -std=c++17 -O1 -DEMBER_COMPAT_LIBTORCH -I"$torch_include" "$here/$name.cpp" -o "$work/$name" \
         -L"$torch_lib" -ltorch -ltorch_cpu -lc10 &&
     OMP_NUM_THREADS=1 "$work/$name" > "$work/$name.txt"; then
    mv "$work/$name.txt" "$here/expected/$name.txt"
  else
    failed="$failed $name"
  fi
done
if [ -n "$failed" ]; then
  echo "failed:$failed" >&2
  exit 1
fi
