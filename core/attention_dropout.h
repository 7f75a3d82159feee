// The dropout of the fused scaled-dot-product attention kernels (core/cpu/attention.cpp,
// cuda/attention.cu), flash-attention style: whether element (b, h, i, j) of the [B, H, L, S]
// attention matrix is kept is a pure function of (seed, offset, its linear index), so the
// backward regenerates the forward's mask instead of storing it. Header-only and host/device
// (EMBER_HOST_DEVICE): the CUDA kernels and the tests' oracle loop call `kept`, the CPU kernel
// kept4 (and an AVX2 form that draws eight blocks at once, which the tests hold to kept4 bit
// for bit), so the masks of both devices and the oracle are one mask for one (seed, offset).
//
// Element n = ((b * H + h) * L + i) * S + j uses word n % 4 of Philox block offset + n / 4
// (four decisions per 128-bit block); a call reserves blocks_for(B * H * L * S) blocks of its
// device's generator. It is kept iff word < threshold with threshold = ceil((1 - p) 2^32), i.e.
// iff word / 2^32 < 1 - p: kept with probability 1 - p to within 2^-32.
#pragma once

#include <cstdint>

#include "ember/core/host_device.h"
#include "ember/core/philox.h"

namespace ember {

/// The dropout of one fused attention call: p = 0 is no dropout. seed and offset are the
/// Philox key and first block reserved from the generator by the forward and kept on the
/// autograd node for the backward.
struct AttnDropout {
  double p = 0;
  uint64_t seed = 0, offset = 0;
  EMBER_HOST_DEVICE bool enabled() const { return p > 0; }
};

namespace attn_dropout {

/// The 33-bit bound a block's word must stay below to be kept: ceil((1 - p) 2^32), exact in
/// double for p in [0, 1]; 0 for p = 1 (nothing kept).
EMBER_HOST_DEVICE inline uint64_t keep_threshold(double p) {
  const double t = (1.0 - p) * 4294967296.0;
  const uint64_t floor_t = static_cast<uint64_t>(t);
  return static_cast<double>(floor_t) == t ? floor_t : floor_t + 1;
}

/// 1 / (1 - p), the factor of a kept element; 0 for p = 1 (every element dropped, the output
/// 0 as PyTorch's dropout gives, rather than 0 * inf).
EMBER_HOST_DEVICE inline double keep_scale(double p) { return p < 1.0 ? 1.0 / (1.0 - p) : 0.0; }

/// The Philox blocks a call over `elements` attention elements reserves.
EMBER_HOST_DEVICE inline uint64_t blocks_for(uint64_t elements) { return (elements + 3) / 4; }

/// The four decisions of block `group` (elements 4 group .. 4 group + 3) as bits 0..3.
EMBER_HOST_DEVICE inline uint32_t kept4(uint64_t seed, uint64_t offset, uint64_t group, uint64_t threshold) {
  uint32_t w[4];
  philox::block(seed, offset + group, w);
  return static_cast<uint32_t>(w[0] < threshold) | static_cast<uint32_t>(w[1] < threshold) << 1 |
         static_cast<uint32_t>(w[2] < threshold) << 2 | static_cast<uint32_t>(w[3] < threshold) << 3;
}

/// Whether attention element `index` (its linear index in [B, H, L, S]) is kept.
EMBER_HOST_DEVICE inline bool kept(uint64_t seed, uint64_t offset, uint64_t index, uint64_t threshold) {
  return (kept4(seed, offset, index / 4, threshold) >> (index % 4)) & 1u;
}

}  // namespace attn_dropout
}  // namespace ember
