// Planted cases for the GPU check's dry run (scripts/gpu_check_dry.sh): run only under
// EMBER_GPU_CHECK_DRY=1 (tests/cuda/main.cpp), GPU or not. One of each outcome the check must
// tell apart and report: a pass, a failure with its message, a case that hangs past the
// per-case timeout, a device fault that ends the process, and a pass after each of those
// (which only runs when the check reruns the file without the case that stopped it).
#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include "cuda/gpu_check_dry.h"

TEST_SUITE("gpu_check_dry") {
  TEST_CASE("dry: a case that passes") { CHECK(1 + 1 == 2); }

  TEST_CASE("dry: a case that fails, with a message") {
    const int planted = 3;
    CHECK_MESSAGE(planted == 4, "planted failure");
  }

  TEST_CASE("dry: a case that hangs past the per-case timeout") {
    std::this_thread::sleep_for(std::chrono::seconds(600));  // the watchdog ends the process first
  }

  TEST_CASE("dry: a case after the hang") { CHECK(true); }

  TEST_CASE("dry: a case that leaves a device fault") { ember::test::dry::plant_fault(); }

  TEST_CASE("dry: a case after the fault") { CHECK(true); }
}
