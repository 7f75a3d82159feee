#!/bin/sh
# Builds bench_overhead.cpp against libtorch and runs it, so its numbers can be set beside
# ember's (bench/README.md). Manual; not run in CI.
#
# Which libtorch, first match wins:
#   --torch-dir DIR / $TORCH_DIR   a torch package directory (…/site-packages/torch) holding
#                                  include/ and lib/ (PyTorch's own libtorch from a pip install)
#   --python PY / $TORCH_PYTHON    the interpreter whose `import torch` to use
#   /work/torch-venv/bin/python    if present
#   Debian's libtorch-dev          /usr/include/torch, /usr/lib/x86_64-linux-gnu
#                                  ($TORCH_INCLUDE, $TORCH_LIB override those paths)
# The C++ ABI flag (_GLIBCXX_USE_CXX11_ABI) is taken from torch._C when a Python is at hand,
# else read off libc10.so's symbols.
#
# Usage: bench/run_libtorch_overhead.sh [--python PY | --torch-dir DIR] [benchmark flags...]
#   e.g. OMP_NUM_THREADS=1 bench/run_libtorch_overhead.sh --benchmark_filter='overhead/'
# $EMBER_LIBTORCH_BENCH_BIN, if set, keeps the built program at that path (else a temp dir).
set -eu
here=$(cd "$(dirname "$0")" && pwd)

python=${TORCH_PYTHON:-}
torch_dir=${TORCH_DIR:-}
while [ $# -gt 0 ]; do
  case "$1" in
    --python) python=$2; shift 2 ;;
    --python=*) python=${1#--python=}; shift ;;
    --torch-dir) torch_dir=$2; shift 2 ;;
    --torch-dir=*) torch_dir=${1#--torch-dir=}; shift ;;
    *) break ;;
  esac
done
if [ -z "$python" ] && [ -z "$torch_dir" ] && [ -x /work/torch-venv/bin/python ]; then
  python=/work/torch-venv/bin/python
fi

abi=
if [ -n "$python" ] && [ -z "$torch_dir" ]; then
  torch_dir=$("$python" -c 'import os, torch; print(os.path.dirname(torch.__file__))')
fi
if [ -n "$torch_dir" ]; then
  if [ -n "$python" ]; then
    abi=$("$python" -c 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))')
  fi
  includes="-I$torch_dir/include -I$torch_dir/include/torch/csrc/api/include"
  torch_lib=$torch_dir/lib
else
  # Debian's libtorch-dev.
  torch_include=${TORCH_INCLUDE:-/usr/include/torch/csrc/api/include}
  includes="-I$torch_include"
  torch_lib=${TORCH_LIB:-/usr/lib/x86_64-linux-gnu}
fi
if [ ! -e "$torch_lib/libc10.so" ]; then
  echo "run_libtorch_overhead.sh: no libtorch found ($torch_lib/libc10.so missing)" >&2
  exit 1
fi
if [ -z "$abi" ]; then
  if nm -DC "$torch_lib/libc10.so" 2>/dev/null | grep -q '__cxx11::'; then abi=1; else abi=0; fi
fi
if [ "$abi" = 0 ]; then
  # The system's libbenchmark is built with the new ABI; an old-ABI libtorch cannot share it.
  echo "run_libtorch_overhead.sh: note: libtorch uses the pre-C++11 string ABI" >&2
fi

if [ -n "${EMBER_LIBTORCH_BENCH_BIN:-}" ]; then
  bin=$EMBER_LIBTORCH_BENCH_BIN
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  bin=$work/libtorch_overhead
fi
# shellcheck disable=SC2086  # $includes is a list of flags
g++ -std=c++17 -O2 -DNDEBUG -D_GLIBCXX_USE_CXX11_ABI="$abi" $includes \
    "$here/libtorch_overhead.cpp" -o "$bin" \
    -L"$torch_lib" -Wl,-rpath,"$torch_lib" -Wl,--no-as-needed -ltorch -ltorch_cpu -lc10 -Wl,--as-needed \
    -lbenchmark -lpthread
"$bin" "$@"
