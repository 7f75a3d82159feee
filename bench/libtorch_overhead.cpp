// bench_overhead.cpp built against libtorch (PyTorch's own from a pip install, or Debian's
// libtorch-dev), for the side-by-side per-op overhead figure in bench/README.md. Not part of
// the CMake build: run bench/run_libtorch_overhead.sh.
#define EMBER_BENCH_LIBTORCH
#include "bench_overhead.cpp"
