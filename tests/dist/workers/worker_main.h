// What every dist test's rank program shares: its rank and world size (from torchrun's RANK
// and WORLD_SIZE), check() that records a failure on stderr (the test prints each rank's
// stderr when it fails), and main's dispatch from the scenario name in argv[1] to a function
// returning the exit code (0: passed; 1: a check failed or an exception escaped; 2: misuse).
#pragma once

#include <cstdlib>
#include <exception>
#include <functional>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

namespace ember::test::worker {

inline int g_rank = -1;
inline int g_size = -1;
inline int g_failures = 0;

inline void check(bool ok, const std::string& what) {
  if (ok) return;
  ++g_failures;
  std::cerr << "rank " << g_rank << ": FAILED: " << what << std::endl;
}

using Scenarios = std::vector<std::pair<std::string, std::function<int()>>>;

/// main() of a rank program named `program`: runs the scenario argv[1] names.
inline int run_scenario(int argc, char** argv, const char* program, const Scenarios& scenarios) {
  const char* rank = std::getenv("RANK");
  const char* size = std::getenv("WORLD_SIZE");
  if (argc != 2 || !rank || !size) {
    std::cerr << "usage: RANK=r WORLD_SIZE=n MASTER_ADDR=a MASTER_PORT=p " << program
              << " <scenario>; scenarios:";
    for (const auto& s : scenarios) std::cerr << " " << s.first;
    std::cerr << "\n";
    return 2;
  }
  g_rank = std::atoi(rank);
  g_size = std::atoi(size);
  const std::string scenario = argv[1];
  for (const auto& [name, run] : scenarios) {
    if (name != scenario) continue;
    try {
      return run();
    } catch (const std::exception& e) {
      std::cerr << "rank " << g_rank << ": FAILED with an exception: " << e.what() << std::endl;
      return 1;
    }
  }
  std::cerr << "unknown scenario " << scenario << "\n";
  return 2;
}

}  // namespace ember::test::worker
