// Random sampling into CUDA tensors, called by core/ops/random.cpp. Each kernel draws element k
// of a contiguous output from Philox block (draw.offset + k) under key draw.seed, with the same
// maps from random bits to values as the CPU (core/philox.h): the same generator state gives
// the same numbers on both devices (normal samples to within a few ulp of double).
// Plain C++ declarations, defined in cuda/random.cu (or cuda/no_cuda.cpp without CUDA).
#pragma once

#include <cstdint>

namespace ember {
class Tensor;
}

namespace ember::cuda {

/// Where a draw starts in its device's Philox stream: the generator's seed and the first
/// block reserved for it.
struct PhiloxDraw {
  uint64_t seed;
  uint64_t offset;
};

/// The distributions drawn by sample().
enum class Distribution {
  kUniform,    // a + (b - a) * u, u uniform in [0, 1) on the grid of out's mantissa (floating out)
  kNormal,     // a + b * z, z standard normal (floating out)
  kBernoulli,  // 1 where u < a, else 0 (any out dtype)
};

/// Fills a contiguous CUDA tensor with samples of `dist` (parameters a, b as listed above).
void sample(Distribution dist, const Tensor& out, PhiloxDraw draw, double a, double b = 0);
/// out[k] = from + (64 random bits mod range), for random_ and randint (any out dtype).
void random_int(const Tensor& out, PhiloxDraw draw, int64_t from, uint64_t range);
/// out[k] = 1 where u < p[k], else 0: bernoulli with a tensor of probabilities (contiguous,
/// floating, out's shape). Probabilities outside [0, 1] act as clamped: checking them would
/// need a host synchronisation (PyTorch raises a device-side assert instead).
void bernoulli_tensor(const Tensor& out, const Tensor& p, PhiloxDraw draw);

}  // namespace ember::cuda
