// Generator: the random number source of one device. ember::manual_seed(s) seeds all of
// them; the same seed gives the same numbers. The CPU generator is a Philox-4x32-10
// counter-based generator, so a tensor's numbers can be drawn in parallel chunks and still
// not depend on the thread count.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

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
/// Seeds every device's default generator (torch::manual_seed).
void manual_seed(uint64_t seed);

namespace philox {
/// Four uniformly distributed 32-bit words for (key, counter): Philox-4x32 with 10 rounds.
void block(uint64_t key, uint64_t counter, uint32_t out[4]);
/// A float in [0, 1) from 24 random bits, a double from 53.
inline float to_float01(uint32_t x) { return static_cast<float>(x >> 8) * (1.0f / 16777216.0f); }
inline double to_double01(uint32_t hi, uint32_t lo) {
  uint64_t v = (static_cast<uint64_t>(hi) << 21) ^ (lo >> 11);
  return static_cast<double>(v & ((uint64_t{1} << 53) - 1)) * (1.0 / 9007199254740992.0);
}
}  // namespace philox

}  // namespace ember
