// doctest's main for the CUDA test cases. Without a usable GPU (no device, or a build without
// CUDA) it runs nothing, says how many CUDA test cases that skips, and exits with 77, which
// ctest reports as "Skipped".
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <vector>

#include "ember/ember.h"

int main(int argc, char** argv) {
  if (!ember::cuda::is_available()) {
    // doctest's --count lists nothing and runs nothing: it prints how many cases match.
    std::vector<const char*> args(argv, argv + argc);
    args.push_back("--count");
    doctest::Context count(static_cast<int>(args.size()), args.data());
    count.run();
    std::printf("ember_cuda_tests: no CUDA device is available: the CUDA test cases counted above were skipped\n");
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
