// Generator: the random number source of one device. ember::manual_seed(s) seeds all of
// them; the same seed gives the same numbers. Every generator is a (seed, offset) pair for
// the Philox-4x32-10 counter-based generator (core/philox.h): a draw reserves blocks, so a
// tensor's numbers can be drawn in parallel chunks and still not depend on the thread count
// or launch configuration, and CPU and CUDA give the same numbers for the same state.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "ember/core/device.h"
#include "ember/core/philox.h"

namespace ember {

class Generator {
 public:
  explicit Generator(uint64_t seed = 67280421310721ULL) { set_current_seed(seed); }
  void set_current_seed(uint64_t seed);
  uint64_t current_seed() const { return seed_; }
  /// Reserves `n` 128-bit Philox blocks and returns the first counter value.
  uint64_t reserve(uint64_t n);
  uint64_t offset() const { return offset_; }
  void set_offset(uint64_t o) { offset_ = o; }
  /// Serialized state (seed, offset) for checkpoints.
  std::vector<uint8_t> get_state() const;
  void set_state(const std::vector<uint8_t>& state);
  std::mutex& mutex() { return mu_; }

 private:
  uint64_t seed_ = 0;
  uint64_t offset_ = 0;
  std::mutex mu_;
};

/// The default generator of the CPU.
Generator& default_cpu_generator();
/// The default generator of CUDA device `device` (the current one when -1), one per device
/// (at::cuda::detail::getDefaultCUDAGenerator). It starts with the CPU's default seed, so a
/// fresh process draws the same numbers on either device.
Generator& default_cuda_generator(int device = -1);
/// The default generator of a CPU or CUDA device.
Generator& default_generator(Device device);
/// Seeds every device's default generator (torch::manual_seed).
void manual_seed(uint64_t seed);

namespace cuda {
/// Seeds the current CUDA device's generator (torch::cuda::manual_seed).
void manual_seed(uint64_t seed);
/// Seeds every CUDA device's generator (torch::cuda::manual_seed_all).
void manual_seed_all(uint64_t seed);
}  // namespace cuda

}  // namespace ember
