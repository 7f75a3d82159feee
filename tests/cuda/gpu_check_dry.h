// The hook between tests/cuda/main.cpp and the planted cases of test_gpu_check_dry.cpp: a case
// plants a "fault" that the main's after-case device check then finds, as it would a sticky
// CUDA error, so the GPU check's fault handling runs on a machine without a GPU.
#pragma once

#include <atomic>

namespace ember::test::dry {

inline std::atomic<bool>& planted_fault() {
  static std::atomic<bool> flag{false};
  return flag;
}
inline void plant_fault() { planted_fault() = true; }
/// Whether a fault was planted since the last call (and clears it).
inline bool take_planted_fault() { return planted_fault().exchange(false); }

}  // namespace ember::test::dry
