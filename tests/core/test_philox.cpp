// core/philox.h, the Philox-4x32-10 generator and sample maps that the CPU loops and the CUDA
// kernels share (so what is checked here is what the GPU computes), and the per-device default
// generators of core/generator.h.
#include <cstdint>

#include "op_check.h"

using namespace ember;
using ember::test::check_error;
using ember::test::values;

TEST_CASE("test_philox: Random123's known-answer vectors") {
  struct Kat {
    uint32_t ctr[4], key[2], out[4];
  };
  const Kat kats[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}},
      {{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
       {0xffffffffu, 0xffffffffu},
       {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}},
      {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
       {0xa4093822u, 0x299f31d0u},
       {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}},
  };
  for (const Kat& k : kats) {
    uint32_t out[4];
    philox::philox4x32_10(k.ctr, k.key, out);
    for (int i = 0; i < 4; ++i) CHECK(out[i] == k.out[i]);
  }
}

TEST_CASE("test_philox: block is the 4x32 function with a 64-bit counter and key") {
  uint64_t key = 0x0123456789abcdefULL, counter = 0xfedcba9876543210ULL;
  uint32_t a[4], b[4];
  philox::block(key, counter, a);
  const uint32_t ctr[4] = {0x76543210u, 0xfedcba98u, 0, 0}, k[2] = {0x89abcdefu, 0x01234567u};
  philox::philox4x32_10(ctr, k, b);
  for (int i = 0; i < 4; ++i) CHECK(a[i] == b[i]);
  CHECK(philox::bits64(key, counter) == ((uint64_t{a[0]} << 32) | a[1]));
}

TEST_CASE("test_philox: uniform maps stay in [0, 1) on their type's grid") {
  for (int digits : {53, 24, 11, 8}) {
    double scale = static_cast<double>(uint64_t{1} << digits);
    for (uint64_t c = 0; c < 200; ++c) {
      double u = philox::uniform01_grid(7, c, digits);
      CHECK(u >= 0.0);
      CHECK(u < 1.0);
      CHECK(u * scale == static_cast<double>(static_cast<uint64_t>(u * scale)));  // k / 2^digits
    }
  }
  CHECK(philox::mantissa_digits<double>() == 53);
  CHECK(philox::mantissa_digits<float>() == 24);
  CHECK(philox::mantissa_digits<Half>() == 11);
  CHECK(philox::mantissa_digits<BFloat16>() == 8);
  for (uint64_t c = 0; c < 200; ++c) {
    double u = philox::uniform01(3, c);
    CHECK(u >= 0.0);
    CHECK(u < 1.0);
  }
  // The extremes of the word-to-double maps.
  CHECK(philox::to_double01(0, 0) == 0.0);
  CHECK(philox::to_double01(0xffffffffu, 0xffffffffu) < 1.0);
  CHECK(philox::to_float01(0xffffffffu) < 1.0f);
}

TEST_CASE("test_philox: samplers draw element k from block offset + k") {
  // The contract the CUDA kernels rely on: rand/randn/randint of a fresh seed are these maps.
  manual_seed(11);
  std::vector<double> u = values(rand({5}, kDouble));
  std::vector<double> f = values(rand({5}, kFloat));  // blocks 5..9
  std::vector<double> z = values(randn({5}, kDouble));  // blocks 10..14
  std::vector<double> r = values(randint(-4, 9, {5}));  // blocks 15..19
  for (uint64_t k = 0; k < 5; ++k) {
    CHECK(u[k] == philox::uniform01_grid(11, k, 53));
    CHECK(f[k] == static_cast<double>(static_cast<float>(philox::uniform01_grid(11, 5 + k, 24))));
    CHECK(z[k] == philox::normal01(11, 10 + k));
    CHECK(r[k] == static_cast<double>(-4 + static_cast<int64_t>(philox::bits64(11, 15 + k) % 13)));
  }
  CHECK(default_cpu_generator().offset() == 20);
  CHECK(philox::mul_add(3.0, 0.1, 1.0) == 3.0 * 0.1 + 1.0);
}

TEST_CASE("test_philox: default generators per device") {
  CHECK(&default_generator(kCPU) == &default_cpu_generator());
  if (!cuda::is_available()) {
    // No device: seeding every CUDA generator is a no-op, asking for one an error.
    cuda::manual_seed_all(5);
    cuda::manual_seed(5);
    check_error([] { (void)default_cuda_generator(0); }, "Invalid device index 0: 0 CUDA devices are visible");
    return;
  }
  manual_seed(42);
  for (int d = 0; d < cuda::device_count(); ++d) {
    CHECK(default_cuda_generator(d).current_seed() == 42);
    CHECK(&default_generator(Device(kCUDA, static_cast<int8_t>(d))) == &default_cuda_generator(d));
  }
  cuda::manual_seed_all(7);
  CHECK(default_cuda_generator(0).current_seed() == 7);
  CHECK(default_cpu_generator().current_seed() == 42);
}
