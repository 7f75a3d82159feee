// Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11).
#include "ember/core/generator.h"

#include <cstring>

#include "ember/core/error.h"

namespace ember {

void Generator::set_current_seed(uint64_t seed) {
  seed_ = seed;
  offset_ = 0;
}

uint64_t Generator::reserve(uint64_t n) {
  uint64_t start = offset_;
  offset_ += n;
  return start;
}

std::vector<uint8_t> Generator::get_state() const {
  std::vector<uint8_t> s(16);
  std::memcpy(s.data(), &seed_, 8);
  std::memcpy(s.data() + 8, &offset_, 8);
  return s;
}

void Generator::set_state(const std::vector<uint8_t>& state) {
  EMBER_CHECK(state.size() == 16, "RNG state must be 16 bytes (seed, offset), got ", state.size());
  std::memcpy(&seed_, state.data(), 8);
  std::memcpy(&offset_, state.data() + 8, 8);
}

Generator& default_cpu_generator() {
  static Generator g;
  return g;
}

void manual_seed(uint64_t seed) {
  Generator& g = default_cpu_generator();
  std::lock_guard<std::mutex> lock(g.mutex());
  g.set_current_seed(seed);
}

namespace philox {

void block(uint64_t key, uint64_t counter, uint32_t out[4]) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  uint32_t c0 = static_cast<uint32_t>(counter), c1 = static_cast<uint32_t>(counter >> 32);
  uint32_t c2 = 0, c3 = 0;
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int r = 0; r < 10; ++r) {
    uint64_t p0 = static_cast<uint64_t>(kM0) * c0;
    uint64_t p1 = static_cast<uint64_t>(kM1) * c2;
    uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
    uint32_t n1 = static_cast<uint32_t>(p1);
    uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    uint32_t n3 = static_cast<uint32_t>(p0);
    c0 = n0; c1 = n1; c2 = n2; c3 = n3;
    k0 += kW0;
    k1 += kW1;
  }
  out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
}

}  // namespace philox
}  // namespace ember
