// The default generators of the CPU and of each CUDA device, and manual_seed. The Philox
// function itself is header-only (core/philox.h), shared with the CUDA kernels.
#include "ember/core/generator.h"

#include <cstring>
#include <memory>

#include "ember/core/error.h"
#include "ember/cuda/runtime/device.h"

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

namespace {
/// One generator per visible CUDA device, made on first use (a CPU-only build has none).
/// Generators hold a mutex, so they live behind pointers that never move.
std::vector<std::unique_ptr<Generator>>& cuda_generators() {
  static std::vector<std::unique_ptr<Generator>> gens = [] {
    std::vector<std::unique_ptr<Generator>> v;
    for (int d = 0; d < cuda::device_count(); ++d) v.push_back(std::make_unique<Generator>());
    return v;
  }();
  return gens;
}

void seed(Generator& g, uint64_t s) {
  std::lock_guard<std::mutex> lock(g.mutex());
  g.set_current_seed(s);
}
}  // namespace

Generator& default_cuda_generator(int device) {
  if (device < 0) device = cuda::current_device();
  auto& gens = cuda_generators();
  EMBER_CHECK(device < static_cast<int>(gens.size()), "Invalid device index ", device, ": ", gens.size(),
              " CUDA devices are visible");
  return *gens[static_cast<size_t>(device)];
}

Generator& default_generator(Device device) {
  return device.is_cuda() ? default_cuda_generator(device.index()) : default_cpu_generator();
}

void manual_seed(uint64_t s) {
  seed(default_cpu_generator(), s);
  cuda::manual_seed_all(s);
}

namespace cuda {
void manual_seed(uint64_t s) {
  if (device_count() > 0) seed(default_cuda_generator(), s);
}
void manual_seed_all(uint64_t s) {
  for (auto& g : cuda_generators()) seed(*g, s);
}
}  // namespace cuda

}  // namespace ember
