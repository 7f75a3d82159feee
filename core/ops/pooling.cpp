// Pooling ops. Average and adaptive-average pooling are separable linear maps (Note
// [Separable maps] in separable_map.h); max pooling shares their per-axis windows (AxisMap
// taps) but keeps its own kernel, which records the argmax so that backward scatters the
// gradient into it (MaxPoolScatter), and that scatter's backward is a gather.
#include "ember/core/ops/pooling.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "ember/core/dtype.h"
#include "ember/core/op.h"
#include "ember/core/ops/index.h"
#include "ember/core/ops/scatter.h"
#include "ember/core/ops/separable_map.h"
#include "ember/core/ops/shape.h"
#include "ember/core/ops/views.h"
#include "ember/core/tensor_iter.h"
#include "ember/cuda/pooling.h"

namespace ember {

using resample::AxisMap;
using resample::AxisMapPtr;

namespace {

/// Division rounding toward negative infinity (ATen's div_rtn).
int64_t div_rtn(int64_t a, int64_t b) {
  int64_t q = a / b, r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
}

int64_t planes_of(const Tensor& t) {
  int64_t n = 1;
  for (int64_t d = 0; d < t.dim() - 2; ++d) n *= t.size(d);
  return n;
}

DimVector with_last_two(const Tensor& t, int64_t h, int64_t w) {
  DimVector s(t.sizes());
  s[s.size() - 2] = h;
  s[s.size() - 1] = w;
  return s;
}

/// Kernel, stride, padding and dilation of a 2-d pooling, expanded from 1 or 2 values.
struct Pool2d {
  int64_t kH, kW, dH, dW, padH, padW, dilH = 1, dilW = 1;
};

int64_t second(IntArrayRef a) { return a.size() == 1 ? a[0] : a[1]; }

Pool2d parse_pool2d(const char* op, IntArrayRef kernel, IntArrayRef stride, IntArrayRef padding,
                    IntArrayRef dilation) {
  EMBER_CHECK(kernel.size() == 1 || kernel.size() == 2, op,
              ": kernel_size must either be a single int, or a tuple of two ints");
  EMBER_CHECK(stride.empty() || stride.size() == 1 || stride.size() == 2, op,
              ": stride must either be omitted, a single int, or a tuple of two ints");
  EMBER_CHECK(padding.size() == 1 || padding.size() == 2, op,
              ": padding must either be a single int, or a tuple of two ints");
  EMBER_CHECK(dilation.size() == 1 || dilation.size() == 2, op,
              ": dilation must be either a single int, or a tuple of two ints");
  Pool2d p;
  p.kH = kernel[0];
  p.kW = second(kernel);
  p.dH = stride.empty() ? p.kH : stride[0];
  p.dW = stride.empty() ? p.kW : second(stride);
  p.padH = padding[0];
  p.padW = second(padding);
  p.dilH = dilation[0];
  p.dilW = second(dilation);
  return p;
}

/// Pool.h's pool2d_shape_check: positive kernel/stride/dilation, a 3-d or 4-d input whose
/// non-batch dims are non-empty, and an output of at least one element per plane.
void pool2d_shape_check(const Tensor& input, const Pool2d& p, int64_t oH, int64_t oW) {
  EMBER_CHECK(p.kW > 0 && p.kH > 0, "kernel size should be greater than zero, but got kH: ", p.kH, " kW: ", p.kW);
  EMBER_CHECK(p.dW > 0 && p.dH > 0, "stride should be greater than zero, but got dH: ", p.dH, " dW: ", p.dW);
  EMBER_CHECK(p.dilH > 0 && p.dilW > 0, "dilation should be greater than zero, but got dilationH: ", p.dilH,
              " dilationW: ", p.dilW);
  const int64_t ndim = input.dim();
  bool valid_dims = input.size(1) != 0 && input.size(2) != 0;
  EMBER_CHECK((ndim == 3 && input.size(0) != 0 && valid_dims) || (ndim == 4 && valid_dims && input.size(3) != 0),
              "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:",
              input.sizes());
  const int64_t planes = input.size(-3), H = input.size(-2), W = input.size(-1);
  EMBER_CHECK(oW >= 1 && oH >= 1, "Given input size: (", planes, "x", H, "x", W, "). Calculated output size: (",
              planes, "x", oH, "x", oW, "). Output size is too small");
}

/// Window taps of one axis of a strided pooling: output o covers o*s - pad + j*dil, j < k,
/// restricted to the input.
AxisMapPtr window_axis(int64_t in, int64_t out, int64_t k, int64_t s, int64_t pad, int64_t dil) {
  auto m = std::make_shared<AxisMap>(in);
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t j = 0; j < k; ++j) {
      int64_t i = o * s - pad + j * dil;
      if (i >= 0 && i < in) m->add(i);
    }
    m->close();
  }
  return m;
}

/// Average-pool taps: window [o*s - pad, min(o*s - pad + k, in + pad)) clipped to the input;
/// the divisor counts the padded positions or not (PyTorch's avg_pool2d). A window lying
/// wholly in the padding gets divisor 1 and outputs 0.
AxisMapPtr avg_axis(int64_t in, int64_t out, int64_t k, int64_t s, int64_t pad, bool count_include_pad) {
  auto m = std::make_shared<AxisMap>(in);
  for (int64_t o = 0; o < out; ++o) {
    int64_t start = o * s - pad;
    int64_t end = std::min(start + k, in + pad);
    int64_t pool = end - start;
    start = std::max<int64_t>(start, 0);
    end = std::min(end, in);
    for (int64_t i = start; i < end; ++i) m->add(i);
    int64_t div = count_include_pad ? pool : end - start;
    m->close(end > start ? static_cast<double>(div) : 1.0);
  }
  return m;
}

/// Adaptive taps: output o covers [floor(o in / out), ceil((o + 1) in / out)).
AxisMapPtr adaptive_axis(int64_t in, int64_t out, bool average) {
  auto m = std::make_shared<AxisMap>(in);
  for (int64_t o = 0; o < out; ++o) {
    int64_t start = (o * in) / out;
    int64_t end = ((o + 1) * in + out - 1) / out;
    for (int64_t i = start; i < end; ++i) m->add(i);
    m->close(average ? static_cast<double>(end - start) : 1.0);
  }
  return m;
}

/// take ? a : b through a bit mask for floating types: GCC compiles the plain ?: on floats to
/// a branch, which mispredicts about half the time on activations.
template <class M>
M select(bool take, M a, M b) {
  if constexpr (std::is_floating_point_v<M>) {
    using U = std::conditional_t<sizeof(M) == 4, uint32_t, uint64_t>;
    U ua, ub;
    std::memcpy(&ua, &a, sizeof(M));
    std::memcpy(&ub, &b, sizeof(M));
    const U mask = U(0) - static_cast<U>(take);
    ua = (ua & mask) | (ub & ~mask);
    std::memcpy(&a, &ua, sizeof(M));
    return a;
  } else {
    return take ? a : b;
  }
}

/// Whether output o of an axis covers exactly inputs 2o and 2o + 1 for every o: kernel 2,
/// stride 2, no padding, dilation 1 and no partial last window (ceil_mode on odd sizes).
bool is_pairs(const AxisMap& m) {
  const int64_t n = m.out_size();
  if (static_cast<int64_t>(m.index.size()) != 2 * n) return false;
  for (int64_t o = 0; o < n; ++o)
    if (m.start[o] != 2 * o || m.index[2 * o] != 2 * o || m.index[2 * o + 1] != 2 * o + 1) return false;
  return true;
}

/// One row of 2x2 windows (inputs r0[2o], r0[2o + 1], r1[2o], r1[2o + 1] for output o < n):
/// maxima into y and, per window, the winner's place in scan order (0 top-left, 1 top-right,
/// 2 bottom-left, 3 bottom-right) into code. The same rule as max_planes in the same order,
/// in straight-line selects that GCC vectorizes for float (codes as wide as the values).
/// The window's first element starts the scan: max_planes's first step (-inf, or the lowest
/// integer, against it) always ends with that element and its position.
template <class T, class M, class C>
void max_row_2x2(const T* __restrict__ r0, const T* __restrict__ r1, T* __restrict__ y, C* __restrict__ code,
                 int64_t n) {
  auto step = [](M v, C place, M& best, C& at) {
    bool take = v > best;
    if constexpr (is_float_v<T>) take = take | (v != v);  // NaN wins, even over an earlier NaN
    best = take ? v : best;
    at = take ? place : at;
  };
  for (int64_t o = 0; o < n; ++o) {
    M best = static_cast<M>(r0[2 * o]);
    C at = 0;
    step(static_cast<M>(r0[2 * o + 1]), 1, best, at);
    step(static_cast<M>(r1[2 * o]), 2, best, at);
    step(static_cast<M>(r1[2 * o + 1]), 3, best, at);
    y[o] = static_cast<T>(best);
    code[o] = at;
  }
}

/// max_planes for 2x2 windows at stride 2 (is_pairs on both axes): the CNN's pooling, ~10%
/// of a training step through the general loop. Rows are done in chunks: maxima and codes
/// first (max_row_2x2), then the codes become plane indices.
template <class T>
void max_planes_2x2(const T* x, T* y, int64_t* idx, int64_t planes, int64_t H, int64_t W, int64_t Ho,
                    int64_t Wo) {
  using M = opmath_t<T>;
  using C = std::conditional_t<sizeof(M) == 4, uint32_t, uint64_t>;
  constexpr int64_t kChunk = 256;
  parallel_for(planes, resample::plane_grain(Ho * Wo * 5), [&](int64_t b, int64_t e) {
    C code[kChunk];
    for (int64_t p = b; p < e; ++p)
      for (int64_t oh = 0; oh < Ho; ++oh) {
        const T* r0 = x + p * H * W + 2 * oh * W;
        const int64_t out_row = (p * Ho + oh) * Wo;
        for (int64_t o0 = 0; o0 < Wo; o0 += kChunk) {
          const int64_t n = std::min(kChunk, Wo - o0);
          max_row_2x2<T, M, C>(r0 + 2 * o0, r0 + W + 2 * o0, y + out_row + o0, code, n);
          // place 0..3 -> row offset 0 or W, column offset 0 or 1 from the window's corner.
          const int64_t corner = 2 * oh * W + 2 * o0;
          int64_t* io = idx + out_row + o0;
          for (int64_t o = 0; o < n; ++o) {
            const uint64_t c = code[o];
            io[o] = corner + 2 * o + static_cast<int64_t>(c & 1u) + (-static_cast<int64_t>(c >> 1) & W);
          }
        }
      }
  });
}

#if defined(__AVX2__)
/// max_row_2x2 and the index arithmetic of max_planes_2x2 for float, eight windows per step in
/// AVX2 registers: outputs o < n (n <= 8) of a row whose top-left inputs are r0[2o] and whose
/// bottom row is r1 = r0 + W; `corner` is r0's index in the plane. Short tails load and store
/// through lane masks, so rows of any length (the CNN's have 14 and 7 windows) stay
/// branch-free. The scan is max_planes's: start at the top-left element, take v when v > best
/// or v is NaN, in the order top-left, top-right, bottom-left, bottom-right.
inline void max8_2x2_avx2(const float* r0, const float* r1, float* y, int64_t* idx, int64_t corner, int64_t W,
                          int n) {
  __m256 a0, a1, b0, b1;
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  if (n == 8) {
    a0 = _mm256_loadu_ps(r0);
    a1 = _mm256_loadu_ps(r0 + 8);
    b0 = _mm256_loadu_ps(r1);
    b1 = _mm256_loadu_ps(r1 + 8);
  } else {
    const __m256i two_n = _mm256_set1_epi32(2 * n);
    const __m256i m0 = _mm256_cmpgt_epi32(two_n, lane);
    const __m256i m1 = _mm256_cmpgt_epi32(two_n, _mm256_add_epi32(lane, _mm256_set1_epi32(8)));
    a0 = _mm256_maskload_ps(r0, m0);
    a1 = _mm256_maskload_ps(r0 + 8, m1);
    b0 = _mm256_maskload_ps(r1, m0);
    b1 = _mm256_maskload_ps(r1 + 8, m1);
  }
  // Even / odd elements of each row pair, in window order (shuffle, then fix the 128-bit halves).
  auto even = [](__m256 lo, __m256 hi) {
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(lo, hi, 0x88)), 0xD8));
  };
  auto odd = [](__m256 lo, __m256 hi) {
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(lo, hi, 0xDD)), 0xD8));
  };
  __m256 best = even(a0, a1);
  __m256i code = _mm256_setzero_si256();
  auto step = [&](__m256 v, int place) {
    __m256 take = _mm256_or_ps(_mm256_cmp_ps(v, best, _CMP_GT_OQ), _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    best = _mm256_blendv_ps(best, v, take);
    code = _mm256_castps_si256(
        _mm256_blendv_ps(_mm256_castsi256_ps(code), _mm256_castsi256_ps(_mm256_set1_epi32(place)), take));
  };
  step(odd(a0, a1), 1);
  step(even(b0, b1), 2);
  step(odd(b0, b1), 3);
  // Index of the winner: corner + 2 o + (code & 1) + (code >> 1) W, in 64-bit lanes.
  const __m256i one = _mm256_set1_epi32(1);
  const __m256i col = _mm256_and_si256(code, one);
  const __m256i row = _mm256_cmpeq_epi32(_mm256_srli_epi32(code, 1), one);  // all ones for the bottom row
  const __m256i w64 = _mm256_set1_epi64x(W), base = _mm256_set1_epi64x(corner);
  const __m256i step_lo = _mm256_setr_epi64x(0, 2, 4, 6), step_hi = _mm256_setr_epi64x(8, 10, 12, 14);
  __m256i i_lo = _mm256_add_epi64(_mm256_add_epi64(base, step_lo), _mm256_cvtepu32_epi64(_mm256_castsi256_si128(col)));
  __m256i i_hi =
      _mm256_add_epi64(_mm256_add_epi64(base, step_hi), _mm256_cvtepu32_epi64(_mm256_extracti128_si256(col, 1)));
  i_lo = _mm256_add_epi64(i_lo, _mm256_and_si256(_mm256_cvtepi32_epi64(_mm256_castsi256_si128(row)), w64));
  i_hi = _mm256_add_epi64(i_hi, _mm256_and_si256(_mm256_cvtepi32_epi64(_mm256_extracti128_si256(row, 1)), w64));
  if (n == 8) {
    _mm256_storeu_ps(y, best);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(idx), i_lo);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(idx + 4), i_hi);
  } else {
    // Through a buffer: masked stores are slow on some CPUs (microcoded on AMD Zen).
    alignas(32) float yb[8];
    alignas(32) int64_t ib[8];
    _mm256_store_ps(yb, best);
    _mm256_store_si256(reinterpret_cast<__m256i*>(ib), i_lo);
    _mm256_store_si256(reinterpret_cast<__m256i*>(ib + 4), i_hi);
    for (int o = 0; o < n; ++o) {
      y[o] = yb[o];
      idx[o] = ib[o];
    }
  }
}

/// max_planes_2x2 for float with max8_2x2_avx2.
void max_planes_2x2_avx2(const float* x, float* y, int64_t* idx, int64_t planes, int64_t H, int64_t W, int64_t Ho,
                         int64_t Wo) {
  parallel_for(planes, resample::plane_grain(Ho * Wo * 5), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p)
      for (int64_t oh = 0; oh < Ho; ++oh) {
        const float* r0 = x + p * H * W + 2 * oh * W;
        const int64_t out_row = (p * Ho + oh) * Wo;
        for (int64_t o0 = 0; o0 < Wo; o0 += 8)
          max8_2x2_avx2(r0 + 2 * o0, r0 + W + 2 * o0, y + out_row + o0, idx + out_row + o0, 2 * oh * W + 2 * o0, W,
                        static_cast<int>(std::min<int64_t>(8, Wo - o0)));
      }
  });
}
#endif

/// Max over each window; ties keep the first position, NaN wins (PyTorch's CPU kernel).
template <class T>
void max_planes(const T* x, T* y, int64_t* idx, int64_t planes, const AxisMap& h, const AxisMap& w) {
  using M = opmath_t<T>;
  const int64_t W = w.in_size, HW = h.in_size * W, Ho = h.out_size(), Wo = w.out_size();
  const int64_t taps = static_cast<int64_t>(h.index.size() * w.index.size()) / std::max<int64_t>(1, Ho * Wo);
  if (is_pairs(h) && is_pairs(w)) {
#if defined(__AVX2__)
    if constexpr (std::is_same_v<T, float>) {
      max_planes_2x2_avx2(x, y, idx, planes, h.in_size, W, Ho, Wo);
      return;
    }
#endif
    max_planes_2x2(x, y, idx, planes, h.in_size, W, Ho, Wo);
    return;
  }
  const M lowest = std::numeric_limits<M>::has_infinity ? -std::numeric_limits<M>::infinity()
                                                        : std::numeric_limits<M>::lowest();
  // Local copies of the tap tables: the stores to idx (int64_t) could alias the vectors' data.
  const int64_t *hs = h.start.data(), *hi = h.index.data(), *ws = w.start.data(), *wi = w.index.data();
  parallel_for(planes, resample::plane_grain(Ho * Wo * (taps + 1)), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const T* xp = x + p * HW;
      for (int64_t oh = 0; oh < Ho; ++oh) {
        const int64_t h0 = hs[oh], h1 = hs[oh + 1];
        for (int64_t ow = 0; ow < Wo; ++ow) {
          const int64_t w0 = ws[ow], w1 = ws[ow + 1];
          // PyTorch's rule: start at -inf on the window's first position, take v when v > best
          // or v is NaN (so NaN propagates and ties keep the first maximum). Selects, not
          // branches: on real activations the comparison is a coin toss the CPU mispredicts.
          M best = lowest;
          int64_t at = h0 < h1 && w0 < w1 ? hi[h0] * W + wi[w0] : 0;
          for (int64_t a = h0; a < h1; ++a) {
            const int64_t row = hi[a] * W;
            for (int64_t c = w0; c < w1; ++c) {
              const int64_t i = row + wi[c];
              const M v = static_cast<M>(xp[i]);
              bool take = v > best;
              if constexpr (is_float_v<T>) take = take | (v != v);  // |, not ||: no branch
              best = select(take, v, best);
              at ^= (at ^ i) & -static_cast<int64_t>(take);
            }
          }
          const int64_t o = p * Ho * Wo + oh * Wo + ow;
          y[o] = static_cast<T>(best);
          idx[o] = at;
        }
      }
    }
  });
}

/// grad_input[p, idx] += grad[p, o]: the gradient of max pooling. Its own gradient (w.r.t.
/// grad) gathers at the same indices, so double backward works. It keeps the pooling's
/// windows: the CUDA kernel has each input gather from the windows that cover it.
struct MaxPoolScatter final : Op {
  AxisMapPtr h, w;
  int64_t H, W;
  std::string node_stem;
  MaxPoolScatter(AxisMapPtr h_, AxisMapPtr w_, std::string stem)
      : h(std::move(h_)), w(std::move(w_)), H(h->in_size), W(w->in_size), node_stem(std::move(stem)) {}
  const char* name() const override { return "max_pool2d_with_indices_backward"; }
  std::string node_name() const override { return node_stem + "BackwardBackward0"; }
  void cpu(const TensorList& in, TensorList& out) const override {
    Tensor g = in[0].contiguous(), idx = in[1].contiguous();
    const int64_t planes = planes_of(g), per_out = g.size(-2) * g.size(-1), per_in = H * W;
    const int64_t* ip = idx.data_ptr<int64_t>();
    visit_float_dtype(g.dtype(), name(), [&]<typename T>() {
      const T* gp = g.data_ptr<T>();
      T* op = out[0].data_ptr<T>();
      parallel_for(planes, resample::plane_grain(per_out + per_in), [&](int64_t b, int64_t e) {
        for (int64_t p = b; p < e; ++p) {
          T* plane = op + p * per_in;
          std::fill(plane, plane + per_in, T(0));
          for (int64_t o = 0; o < per_out; ++o)
            plane[ip[p * per_out + o]] = static_cast<T>(static_cast<opmath_t<T>>(plane[ip[p * per_out + o]]) +
                                                        static_cast<opmath_t<T>>(gp[p * per_out + o]));
        }
      });
    });
  }
  void cuda(const TensorList& in, TensorList& out) const override {
    cuda::max_pool_scatter(in[0].contiguous(), in[1].contiguous(), out[0], *h, *w);
  }
  // d(scatter)/d(grad) is the gather at the same indices.
  TensorList backward(const SavedTensors& s, const TensorList& grads) const override {
    if (!s.needs_grad(0)) return {Tensor(), Tensor()};
    Tensor idx = s.input(1);
    const int64_t planes = planes_of(idx);
    Tensor gg = grads[0].reshape({planes, H * W});
    Tensor picked = gather(gg, 1, idx.reshape({planes, idx.size(-2) * idx.size(-1)}));
    return {picked.view(idx.sizes()), Tensor()};
  }
};

Tensor max_pool_scatter(const Tensor& grad, const Tensor& indices, const AxisMapPtr& h, const AxisMapPtr& w,
                        const std::string& stem) {
  DimVector sizes = with_last_two(grad, h->in_size, w->in_size);
  return run_op(MaxPoolScatter(h, w, stem), {grad, indices}, OutSpec{sizes, grad.dtype()});
}

/// Max pooling over given windows: outputs (values, indices into each input plane).
struct MaxPool final : Op {
  AxisMapPtr h, w;
  std::string op_name, node_stem;
  MaxPool(AxisMapPtr h_, AxisMapPtr w_, std::string op, std::string stem)
      : h(std::move(h_)), w(std::move(w_)), op_name(std::move(op)), node_stem(std::move(stem)) {}
  const char* name() const override { return op_name.c_str(); }
  std::string node_name() const override { return node_stem + "Backward0"; }
  Save saves() const override { return Save::kOutputs; }
  void cpu(const TensorList& in, TensorList& out) const override {
    Tensor x = in[0].contiguous();
    const int64_t planes = planes_of(x);
    int64_t* ip = out[1].data_ptr<int64_t>();
    visit_dtype(x.dtype(), [&]<typename T>() {
      EMBER_CHECK((!std::is_same_v<T, bool>), "\"", op_name, "\" not implemented for 'Bool'");
      max_planes<T>(x.data_ptr<T>(), out[0].data_ptr<T>(), ip, planes, *h, *w);
    });
  }
  void cuda(const TensorList& in, TensorList& out) const override {
    EMBER_CHECK(in[0].dtype() != kBool, "\"", op_name, "\" not implemented for 'Bool'");
    cuda::max_pool(in[0].contiguous(), out[0], out[1], *h, *w);
  }
  // The gradient flows to each window's argmax: scatter grad into the saved indices.
  TensorList backward(const SavedTensors& s, const TensorList& grads) const override {
    return {max_pool_scatter(grads[0], s.output(1), h, w, node_stem)};
  }
};

std::tuple<Tensor, Tensor> run_max_pool(const Tensor& x, AxisMapPtr h, AxisMapPtr w, const char* op,
                                        const char* stem) {
  DimVector sizes = with_last_two(x, h->out_size(), w->out_size());
  TensorList out = run_op(MaxPool(std::move(h), std::move(w), op, stem), {x},
                          std::vector<OutSpec>{{sizes, x.dtype()}, {sizes, kLong}});
  return {out[0], out[1]};
}

}  // namespace

int64_t pooling_output_shape(int64_t input_size, int64_t kernel_size, int64_t pad, int64_t stride,
                             int64_t dilation, bool ceil_mode) {
  EMBER_CHECK(stride != 0, "stride should not be zero");
  EMBER_CHECK(pad >= 0, "pad must be non-negative, but got pad: ", pad);
  EMBER_CHECK(pad <= ((kernel_size - 1) * dilation + 1) / 2,
              "pad should be at most half of effective kernel size, but got pad=", pad,
              ", kernel_size=", kernel_size, " and dilation=", dilation);
  int64_t out = div_rtn(input_size + 2 * pad - dilation * (kernel_size - 1) - 1 + (ceil_mode ? stride - 1 : 0),
                        stride) + 1;
  // With ceil_mode, the last window must start inside the input or its left padding.
  if (ceil_mode && (out - 1) * stride >= input_size + pad) --out;
  return out;
}

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                                                   IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  Pool2d p = parse_pool2d("max_pool2d", kernel_size, stride, padding, dilation);
  EMBER_CHECK(self.dim() == 3 || self.dim() == 4, "non-empty 3D or 4D (batch mode) tensor expected for input");
  const int64_t H = self.size(-2), W = self.size(-1);
  const int64_t oH = pooling_output_shape(H, p.kH, p.padH, p.dH, p.dilH, ceil_mode);
  const int64_t oW = pooling_output_shape(W, p.kW, p.padW, p.dW, p.dilW, ceil_mode);
  pool2d_shape_check(self, p, oH, oW);
  return run_max_pool(self, window_axis(H, oH, p.kH, p.dH, p.padH, p.dilH),
                      window_axis(W, oW, p.kW, p.dW, p.padW, p.dilW), "max_pool2d_with_indices",
                      "MaxPool2DWithIndices");
}

Tensor max_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  return std::get<0>(max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode));
}

namespace {

/// MaxPooling.cpp's max_pool1d argument checks, in its order and words.
void check_max_pool1d(const Tensor& self, IntArrayRef kernel, IntArrayRef stride, IntArrayRef padding,
                      IntArrayRef dilation, bool ceil_mode) {
  const int64_t ndim = self.dim();
  EMBER_CHECK((ndim == 2 && self.size(0) != 0 && self.size(1) != 0) ||
                  (ndim == 3 && self.size(1) != 0 && self.size(2) != 0),
              "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but got:",
              self.sizes());
  EMBER_CHECK(kernel.size() == 1,
              "max_pool1d() kernel_size must be an int, list of ints or tuple of ints of size 1 but got size ",
              kernel.size());
  EMBER_CHECK(stride.empty() || stride.size() == 1,
              "max_pool1d() stride must be None, an int, list of ints, or tuple of ints of size 1 but got size ",
              stride.size());
  EMBER_CHECK(padding.size() == 1,
              "max_pool1d() padding must be an int, list of ints, or tuple of ints of size 1 but got size ",
              padding.size());
  EMBER_CHECK(dilation.size() == 1,
              "max_pool1d() dilation must be an int, list of ints or tuple of ints of size 1 but got size ",
              dilation.size());
  const int64_t k = kernel[0], s = stride.empty() ? k : stride[0], pad = padding[0], d = dilation[0];
  EMBER_CHECK(k > 0, "max_pool1d() kernel_size must be greater than zero, but got ", k);
  EMBER_CHECK(s > 0, "max_pool1d() stride must be greater than zero, but got ", s);
  EMBER_CHECK(pad >= 0, "max_pool1d() padding must be non-negative, but got ", pad);
  EMBER_CHECK(pad <= k / 2, "max_pool1d() padding should be at most half of kernel size, but got padding=", pad,
              " and kernel_size=", k);
  EMBER_CHECK(d > 0, "max_pool1d() dilation must be greater than zero, but got ", d);
  const int64_t out = pooling_output_shape(self.size(-1), k, pad, s, d, ceil_mode);
  EMBER_CHECK(out > 0, "max_pool1d() Invalid computed output size: ", out);
}

void check1d(const char* op, const char* arg, IntArrayRef x) {
  EMBER_CHECK(x.size() == 1, op, "() argument '", arg, "' should contain one int (got ", x.size(), ")");
}

}  // namespace

std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                                                   IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  check_max_pool1d(self, kernel_size, stride, padding, dilation, ceil_mode);
  // A 1-d pooling is the 2-d one over a height-1 plane (as PyTorch computes it).
  const int64_t s = stride.empty() ? kernel_size[0] : stride[0];
  auto [out, idx] = max_pool2d_with_indices(self.unsqueeze(-2), {1, kernel_size[0]}, {1, s}, {0, padding[0]},
                                            {1, dilation[0]}, ceil_mode);
  return {out.squeeze(-2), idx.squeeze(-2)};
}

Tensor max_pool1d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  return std::get<0>(max_pool1d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode));
}

Tensor avg_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
  Pool2d p = parse_pool2d("avg_pool2d", kernel_size, stride, padding, 1);
  EMBER_CHECK(!divisor_override.has_value() || *divisor_override != 0, "divisor must be not zero");
  EMBER_CHECK(self.dim() == 3 || self.dim() == 4, "non-empty 3D or 4D (batch mode) tensor expected for input");
  const int64_t H = self.size(-2), W = self.size(-1);
  const int64_t oH = pooling_output_shape(H, p.kH, p.padH, p.dH, 1, ceil_mode);
  const int64_t oW = pooling_output_shape(W, p.kW, p.padW, p.dW, 1, ceil_mode);
  pool2d_shape_check(self, p, oH, oW);
  AxisMapPtr h = avg_axis(H, oH, p.kH, p.dH, p.padH, count_include_pad);
  AxisMapPtr w = avg_axis(W, oW, p.kW, p.dW, p.padW, count_include_pad);
  if (divisor_override) {
    // One divisor for every window: put it on the height axis, 1 on the width axis.
    auto hd = std::make_shared<AxisMap>(*h), wd = std::make_shared<AxisMap>(*w);
    std::fill(hd->divisor.begin(), hd->divisor.end(), static_cast<double>(*divisor_override));
    std::fill(wd->divisor.begin(), wd->divisor.end(), 1.0);
    h = hd;
    w = wd;
  }
  return resample::apply_map(self, h, w, {"avg_pool2d", "AvgPool2D"});
}

Tensor avg_pool1d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  bool ceil_mode, bool count_include_pad) {
  EMBER_CHECK(self.dim() == 2 || self.dim() == 3, "avg_pool1d() Expected 2D or 3D input tensor, but got ",
              self.sizes());
  check1d("avg_pool1d", "kernel_size", kernel_size);
  if (!stride.empty()) check1d("avg_pool1d", "stride", stride);
  check1d("avg_pool1d", "padding", padding);
  const int64_t s = stride.empty() ? kernel_size[0] : stride[0];
  return avg_pool2d(self.unsqueeze(-2), {1, kernel_size[0]}, {1, s}, {0, padding[0]}, ceil_mode,
                    count_include_pad)
      .squeeze(-2);
}

Tensor adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size) {
  EMBER_CHECK(output_size.size() == 2, "adaptive_avg_pool2d: output_size must be 2");
  EMBER_CHECK(output_size[0] >= 0 && output_size[1] >= 0,
              "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but received {",
              output_size[0], ", ", output_size[1], "}");
  const int64_t ndim = self.dim();
  EMBER_CHECK(ndim == 3 || ndim == 4, "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got ", self.sizes());
  for (int64_t i : {-2, -1})
    EMBER_CHECK(self.size(i) > 0,
                "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch dimensions, but input "
                "has sizes ",
                self.sizes(), " with dimension ", i + ndim, " being empty");
  return resample::apply_map(self, adaptive_axis(self.size(-2), output_size[0], true),
                             adaptive_axis(self.size(-1), output_size[1], true),
                             {"adaptive_avg_pool2d", "AdaptiveAvgPool2D"});
}

std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& self, IntArrayRef output_size) {
  const int64_t ndim = self.dim();
  EMBER_CHECK(ndim == 3 || ndim == 4, "adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: ", self.sizes());
  for (int64_t i = 1; i < ndim; ++i)
    EMBER_CHECK(self.size(i) > 0,
                "adaptive_max_pool2d(): Expected input to have non-zero size for non-batch dimensions, but input "
                "has sizes ",
                self.sizes(), " with dimension ", i, " being empty");
  EMBER_CHECK(output_size.size() == 2, "adaptive_max_pool2d(): internal error: output_size.size() must be 2");
  EMBER_CHECK(output_size[0] >= 0 && output_size[1] >= 0,
              "adaptive_max_pool2d: elements of output_size must be greater than or equal to 0 but received {",
              output_size[0], ", ", output_size[1], "}");
  return run_max_pool(self, adaptive_axis(self.size(-2), output_size[0], false),
                      adaptive_axis(self.size(-1), output_size[1], false), "adaptive_max_pool2d",
                      "AdaptiveMaxPool2D");
}

Tensor adaptive_avg_pool1d(const Tensor& self, IntArrayRef output_size) {
  check1d("adaptive_avg_pool1d", "output_size", output_size);
  EMBER_CHECK(self.dim() == 2 || self.dim() == 3, "adaptive_avg_pool1d(): Expected 2D or 3D tensor, but got ",
              self.sizes());
  return adaptive_avg_pool2d(self.unsqueeze(-2), {1, output_size[0]}).squeeze(-2);
}

std::tuple<Tensor, Tensor> adaptive_max_pool1d(const Tensor& self, IntArrayRef output_size) {
  check1d("adaptive_max_pool1d", "output_size", output_size);
  EMBER_CHECK(self.dim() == 2 || self.dim() == 3, "adaptive_max_pool1d(): Expected 2D or 3D tensor, but got ",
              self.sizes());
  auto [out, idx] = adaptive_max_pool2d(self.unsqueeze(-2), {1, output_size[0]});
  return {out.squeeze(-2), idx.squeeze(-2)};
}

}  // namespace ember
