// Convolution kernels. The output columns of a convolution (one per output pixel) are cut
// into tiles of whole output rows (several images per tile when images are small), so the
// column matrix of a tile fits in L2 and no call materialises the whole batch's columns:
//   forward:      out_tile = w * im2col(tile) (+ bias), one cpu::gemm per image and group,
//                 or a direct small-K loop when each output sums few inputs (one input channel);
//   input grad:   for unit stride, the convolution of g with the flipped, transposed weight
//                 (the same forward path, no scatter); otherwise col = w^T g, col2im scatter-add;
//   weight grad:  sum over images and tiles of g_tile * im2col(tile)^T, in fixed batch chunks.
// Tiles run in parallel, each thread reusing one column buffer from the caching allocator;
// the tile sizes never depend on the thread count, so neither do the results. The direct
// loops that serve as the tests' oracle are in conv_reference.cpp.
#include "ember/core/cpu/conv.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "ember/core/allocator.h"
#include "ember/core/cpu/gemm.h"
#include "ember/core/dtype.h"
#include "ember/core/ops/creation.h"
#include "ember/core/tensor_iter.h"

namespace ember::cpu {
namespace {

/// Multiply-adds a parallel chunk of tiles should hold at least: below it, thread start-up
/// costs more than it saves and small convolutions stay on the calling thread.
constexpr int64_t kParallelWork = int64_t{1} << 20;
/// The weight gradient sums the batch in at most this many fixed chunks (partial sums added
/// in order), so its rounding never depends on the thread count.
constexpr int64_t kWeightChunks = 8;
/// Elements of one tile's column matrix (at most; a single output row may need more): about
/// half of a 1 MiB L2 in float, so the GEMM's packing reads it from cache.
constexpr int64_t kColBudget = int64_t{1} << 17;
/// Receptive fields of at most this many elements (cg * KH * KW) take the direct small-K
/// loops instead of a GEMM, whose packing would cost more than the product.
constexpr int64_t kSmallK = 16;

/// Scratch memory from the caching allocator (no page faults per call), freed at scope end.
template <class T>
class Scratch {
 public:
  explicit Scratch(int64_t n) : bytes_(static_cast<size_t>(std::max<int64_t>(n, 0)) * sizeof(T)) {
    if (bytes_ > 0) p_ = static_cast<T*>(cpu_allocator()->allocate(bytes_));
  }
  ~Scratch() {
    if (p_) cpu_allocator()->deallocate(p_, bytes_);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  T* get() const { return p_; }

 private:
  size_t bytes_;
  T* p_ = nullptr;
};

/// Sizes of one group's product: out_g (og x l) = w_g (og x k) * col (k x l).
struct Dims {
  int64_t cg, og, k, l, plane;
  explicit Dims(const ConvShape& s)
      : cg(s.in_channels / s.groups),
        og(s.out_channels / s.groups),
        k(cg * s.kernel_h * s.kernel_w),
        l(s.out_h * s.out_w),
        plane(s.in_h * s.in_w) {}
};

/// A 1x1 kernel with unit stride and no padding reads the input as its own column matrix.
bool is_pointwise(const ConvShape& s) {
  return s.kernel_h == 1 && s.kernel_w == 1 && s.stride_h == 1 && s.stride_w == 1 && s.pad_h == 0 &&
         s.pad_w == 0;
}

/// How output columns are cut into tiles: `images` whole images per tile, or (images == 1)
/// `rows` output rows of one image per tile. Tile t covers images [first_image, +images)
/// clipped to the batch, rows [first_row, +rows) clipped to out_h.
struct Tiling {
  int64_t images = 1, rows = 1, row_tiles = 1, count = 0;
  Tiling(const ConvShape& s, const Dims& d, bool whole_images) {
    const int64_t per_row = std::max<int64_t>(1, d.k * s.out_w), per_image = per_row * std::max<int64_t>(1, s.out_h);
    if (whole_images || per_image <= kColBudget) {
      rows = std::max<int64_t>(1, s.out_h);
      images = whole_images ? 1 : std::max<int64_t>(1, kColBudget / per_image);
    } else {
      rows = std::clamp<int64_t>(kColBudget / per_row, 1, s.out_h);
    }
    row_tiles = (std::max<int64_t>(1, s.out_h) + rows - 1) / rows;
    count = images > 1 ? (s.batch + images - 1) / images : s.batch * row_tiles;
  }
  /// Columns of the widest tile.
  int64_t max_width(const ConvShape& s) const { return images * rows * s.out_w; }
};

/// One tile: images [n0, n1), output rows [r0, r1) of each; `span` columns per image,
/// `width` columns in all (the column matrix's leading dimension).
struct Tile {
  int64_t n0, n1, r0, r1, span, width;
};
Tile tile_at(const Tiling& t, const ConvShape& s, int64_t i, int64_t batch_end) {
  Tile r{};
  if (t.images > 1) {
    r.n0 = i * t.images, r.n1 = std::min(batch_end, r.n0 + t.images), r.r0 = 0, r.r1 = s.out_h;
  } else {
    r.n0 = i / t.row_tiles, r.n1 = r.n0 + 1;
    r.r0 = (i % t.row_tiles) * t.rows, r.r1 = std::min(s.out_h, r.r0 + t.rows);
  }
  r.span = (r.r1 - r.r0) * s.out_w;
  r.width = r.span * (r.n1 - r.n0);
  return r;
}

/// Output columns [lo, hi) whose input column ow * stride + start lies in [0, width).
struct ColRange {
  int64_t lo, hi;
};
ColRange valid_cols(int64_t start, int64_t stride, int64_t width, int64_t out) {
  auto first_reaching = [&](int64_t bound) {  // smallest ow >= 0 with ow * stride + start >= bound
    const int64_t need = bound - start;
    return need <= 0 ? int64_t{0} : std::min(out, (need + stride - 1) / stride);
  };
  const int64_t lo = first_reaching(0), hi = first_reaching(width);
  return {lo, std::max(lo, hi)};
}

template <class T>
inline void add_into(T& dst, T v) {
  dst = static_cast<T>(static_cast<opmath_t<T>>(dst) + static_cast<opmath_t<T>>(v));
}

/// Visits the col matrix (row stride ld) of one image's `channels` channels and output rows
/// [r0, r1) row by row: for each (c, i, j) row and each output row oh, calls
/// f(col_segment, input_row offset or -1, range, start) where the segment's valid columns ow
/// in range read input_row[ow * stride_w + start].
template <class T, class F>
void for_each_col_row(T* col, int64_t ld, const ConvShape& s, int64_t channels, int64_t r0, int64_t r1, F&& f) {
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t i = 0; i < s.kernel_h; ++i)
      for (int64_t j = 0; j < s.kernel_w; ++j) {
        T* row = col + ((c * s.kernel_h + i) * s.kernel_w + j) * ld;
        const int64_t start = j * s.dilation_w - s.pad_w;
        const ColRange r = valid_cols(start, s.stride_w, s.in_w, s.out_w);
        for (int64_t oh = r0; oh < r1; ++oh) {
          const int64_t ih = oh * s.stride_h - s.pad_h + i * s.dilation_h;
          const bool inside = ih >= 0 && ih < s.in_h;
          f(row + (oh - r0) * s.out_w, inside ? (c * s.in_h + ih) * s.in_w : int64_t{-1}, r, start);
        }
      }
}

/// col (cg * KH * KW rows of stride ld, (r1 - r0) * OW columns) = the receptive fields of
/// output rows [r0, r1) of x (cg, H, W); padding reads as zeros.
template <class T>
void im2col(const T* x, T* col, int64_t ld, const ConvShape& s, int64_t channels, int64_t r0, int64_t r1) {
  const T zero = static_cast<T>(0);
  for_each_col_row(col, ld, s, channels, r0, r1, [&](T* dst, int64_t row_off, ColRange r, int64_t start) {
    if (row_off < 0) {
      std::fill(dst, dst + s.out_w, zero);
      return;
    }
    const T* src = x + row_off;  // column ow reads src[ow * stride_w + start], in bounds for ow in r
    std::fill(dst, dst + r.lo, zero);
    if (s.stride_w == 1)
      std::copy(src + r.lo + start, src + r.hi + start, dst + r.lo);
    else
      for (int64_t ow = r.lo; ow < r.hi; ++ow) dst[ow] = src[ow * s.stride_w + start];
    std::fill(dst + r.hi, dst + s.out_w, zero);
  });
}

/// Unit stride with output rows as wide as input rows ("same" width, e.g. 3x3 padding 1):
/// for each (c, i, j), the row of col over output rows [r0, r1) is one contiguous run of x
/// shifted by j * dilation - pad, so it is copied in one go; the columns that ran into the
/// neighbouring row (|shift| at each edge) and the rows outside the image are then zeroed.
bool is_shift_copy(const ConvShape& s) {
  return s.stride_h == 1 && s.stride_w == 1 && s.out_w == s.in_w && s.pad_w < s.in_w;
}

template <class T>
void im2col_shift(const T* x, T* col, int64_t ld, const ConvShape& s, int64_t channels, int64_t r0, int64_t r1) {
  const T zero = static_cast<T>(0);
  const int64_t w = s.in_w;
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t i = 0; i < s.kernel_h; ++i) {
      // Output rows oh in [lo, hi) read input rows ih = oh - pad_h + i * dilation_h inside [0, H).
      const int64_t off = i * s.dilation_h - s.pad_h;
      const int64_t lo = std::clamp(-off, r0, r1), hi = std::clamp(s.in_h - off, lo, r1);
      for (int64_t j = 0; j < s.kernel_w; ++j) {
        T* row = col + ((c * s.kernel_h + i) * s.kernel_w + j) * ld;
        const int64_t shift = j * s.dilation_w - s.pad_w;  // column ow reads input column ow + shift
        std::fill(row, row + (lo - r0) * w, zero);
        std::fill(row + (hi - r0) * w, row + (r1 - r0) * w, zero);
        if (lo == hi) continue;
        // Elements [a, b) of the run stay inside the plane of channel c.
        T* dst = row + (lo - r0) * w;
        const T* src = x + (c * s.in_h + lo + off) * w + shift;
        const int64_t n = (hi - lo) * w, a = std::max<int64_t>(0, -shift), b = n - std::max<int64_t>(0, shift);
        std::copy(src + a, src + b, dst + a);
        // Zero the |shift| edge columns of each row (stores, not memset calls: usually one element).
        const int64_t e0 = shift < 0 ? 0 : w - shift, e1 = shift < 0 ? -shift : w;
        for (int64_t r = 0; r < hi - lo; ++r)
          for (int64_t q = e0; q < e1; ++q) dst[r * w + q] = zero;
      }
    }
}

/// The columns of a whole tile: each of its images' im2col side by side.
template <class T>
void im2col_tile(const T* x_group, int64_t image_stride, T* col, const Tile& t, const ConvShape& s, int64_t channels) {
  const bool shift = is_shift_copy(s);
  for (int64_t n = t.n0; n < t.n1; ++n) {
    if (shift)
      im2col_shift(x_group + n * image_stride, col + (n - t.n0) * t.span, t.width, s, channels, t.r0, t.r1);
    else
      im2col(x_group + n * image_stride, col + (n - t.n0) * t.span, t.width, s, channels, t.r0, t.r1);
  }
}

/// x (cg, H, W) += the columns of col (output rows [r0, r1), row stride ld) scattered back to
/// where im2col read them.
template <class T>
void col2im_add(T* col, int64_t ld, T* x, const ConvShape& s, int64_t channels, int64_t r0, int64_t r1) {
  for_each_col_row(col, ld, s, channels, r0, r1, [&](T* src, int64_t row_off, ColRange r, int64_t start) {
    if (row_off < 0) return;
    T* dst = x + row_off;
    for (int64_t ow = r.lo; ow < r.hi; ++ow) add_into(dst[ow * s.stride_w + start], src[ow]);
  });
}

/// Adds bias[c] to `n` elements of each of `channels` rows of stride ld at out.
template <class T>
void add_bias(T* out, int64_t ld, const T* bias, int64_t channels, int64_t n) {
  for (int64_t c = 0; c < channels; ++c) {
    const auto b = static_cast<opmath_t<T>>(bias[c]);
    T* p = out + c * ld;
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(static_cast<opmath_t<T>>(p[i]) + b);
  }
}

template <class T>
constexpr bool kDirectSmallK = std::is_same_v<T, float> || std::is_same_v<T, double>;

/// 32-byte vectors (AVX2, the build's baseline) for the small-K loops, with unaligned
/// loads and stores.
template <class T>
struct Vec;
template <>
struct Vec<float> {
  typedef float type __attribute__((vector_size(32)));
};
template <>
struct Vec<double> {
  typedef double type __attribute__((vector_size(32)));
};
template <class T>
using vec_t = typename Vec<T>::type;
template <class T>
inline vec_t<T> load(const T* p) {
  vec_t<T> v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class T>
inline void store(T* p, vec_t<T> v) {
  std::memcpy(p, &v, sizeof v);
}
template <class T>
inline vec_t<T> splat(T x) {
  return vec_t<T>{} + x;
}

/// out (m x n, row stride ldc) = w (m x k, contiguous) * col (k x n, row stride ldb) + bias
/// (per row; null for none), for small k: one pass over the output, the column rows staying
/// in L1; 2 output rows x 4 vectors of columns accumulate in registers.
template <class T>
void small_k_forward(int64_t m, int64_t n, int64_t k, const T* w, const T* col, int64_t ldb, T* out, int64_t ldc,
                     const T* bias) {
  using V = vec_t<T>;
  constexpr int64_t L = sizeof(V) / sizeof(T);
  auto row_bias = [&](int64_t i) { return bias ? bias[i] : T(0); };
  int64_t j0 = 0;
  for (; j0 + 4 * L <= n; j0 += 4 * L) {
    int64_t i = 0;
    for (; i + 2 <= m; i += 2) {
      V a0 = splat(row_bias(i)), a1 = a0, a2 = a0, a3 = a0;
      V b0 = splat(row_bias(i + 1)), b1 = b0, b2 = b0, b3 = b0;
      for (int64_t p = 0; p < k; ++p) {
        const T* c = col + p * ldb + j0;
        const V c0 = load(c), c1 = load(c + L), c2 = load(c + 2 * L), c3 = load(c + 3 * L);
        const V wa = splat(w[i * k + p]), wb = splat(w[(i + 1) * k + p]);
        a0 += wa * c0, a1 += wa * c1, a2 += wa * c2, a3 += wa * c3;
        b0 += wb * c0, b1 += wb * c1, b2 += wb * c2, b3 += wb * c3;
      }
      T* o = out + i * ldc + j0;
      store(o, a0), store(o + L, a1), store(o + 2 * L, a2), store(o + 3 * L, a3);
      o += ldc;
      store(o, b0), store(o + L, b1), store(o + 2 * L, b2), store(o + 3 * L, b3);
    }
    for (; i < m; ++i) {
      V a0 = splat(row_bias(i)), a1 = a0, a2 = a0, a3 = a0;
      for (int64_t p = 0; p < k; ++p) {
        const T* c = col + p * ldb + j0;
        const V wa = splat(w[i * k + p]);
        a0 += wa * load(c), a1 += wa * load(c + L), a2 += wa * load(c + 2 * L), a3 += wa * load(c + 3 * L);
      }
      T* o = out + i * ldc + j0;
      store(o, a0), store(o + L, a1), store(o + 2 * L, a2), store(o + 3 * L, a3);
    }
  }
  for (; j0 + L <= n; j0 += L)
    for (int64_t i = 0; i < m; ++i) {
      V a = splat(row_bias(i));
      for (int64_t p = 0; p < k; ++p) a += splat(w[i * k + p]) * load(col + p * ldb + j0);
      store(out + i * ldc + j0, a);
    }
  for (; j0 < n; ++j0)
    for (int64_t i = 0; i < m; ++i) {
      T a = row_bias(i);
      for (int64_t p = 0; p < k; ++p) a += w[i * k + p] * col[p * ldb + j0];
      out[i * ldc + j0] = a;
    }
}

/// Sum of a vector's lanes in a fixed order.
template <class T>
inline T lane_sum(vec_t<T> v) {
  constexpr int64_t L = sizeof(vec_t<T>) / sizeof(T);
  T s = 0;
  for (int64_t q = 0; q < L; ++q) s += v[q];
  return s;
}

/// acc (m x k, contiguous) (+)= g (m x n, row stride ldg) * col^T (col: k x n, row stride
/// ldb), overwriting when `first`: dot products of g rows with col rows, 2 x 4 of them at a
/// time in vector registers, each summed in a fixed order.
template <class T>
void small_k_weight(int64_t m, int64_t n, int64_t k, const T* g, int64_t ldg, const T* col, int64_t ldb, T* acc,
                    bool first) {
  using V = vec_t<T>;
  constexpr int64_t L = sizeof(V) / sizeof(T);
  const int64_t nv = n / L * L;
  auto put = [&](int64_t i, int64_t p, T v) { acc[i * k + p] = first ? v : acc[i * k + p] + v; };
  auto tail = [&](int64_t i, int64_t p) {
    T t = 0;
    for (int64_t j = nv; j < n; ++j) t += g[i * ldg + j] * col[p * ldb + j];
    return t;
  };
  int64_t i = 0;
  for (; i + 2 <= m; i += 2) {
    const T *g0 = g + i * ldg, *g1 = g0 + ldg;
    int64_t p = 0;
    for (; p + 4 <= k; p += 4) {
      const T* c = col + p * ldb;
      V a[2][4] = {};
      for (int64_t j = 0; j < nv; j += L) {
        const V x0 = load(g0 + j), x1 = load(g1 + j);
        for (int64_t q = 0; q < 4; ++q) {
          const V cv = load(c + q * ldb + j);
          a[0][q] += x0 * cv, a[1][q] += x1 * cv;
        }
      }
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t q = 0; q < 4; ++q) put(i + r, p + q, lane_sum<T>(a[r][q]) + tail(i + r, p + q));
    }
    for (; p < k; ++p) {
      const T* c = col + p * ldb;
      V a0{}, a1{};
      for (int64_t j = 0; j < nv; j += L) {
        const V cv = load(c + j);
        a0 += load(g0 + j) * cv, a1 += load(g1 + j) * cv;
      }
      put(i, p, lane_sum<T>(a0) + tail(i, p));
      put(i + 1, p, lane_sum<T>(a1) + tail(i + 1, p));
    }
  }
  for (; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) {
      V a{};
      for (int64_t j = 0; j < nv; j += L) a += load(g + i * ldg + j) * load(col + p * ldb + j);
      put(i, p, lane_sum<T>(a) + tail(i, p));
    }
}

/// Tiles per parallel chunk given the multiply-adds of one tile.
int64_t tile_grain(int64_t work_per_tile) {
  return std::max<int64_t>(1, kParallelWork / std::max<int64_t>(1, work_per_tile));
}

template <class T>
void forward_raw(const T* xp, const T* wp, const T* bp, T* op, const ConvShape& s) {
  const Dims d(s);
  const bool pointwise = is_pointwise(s);
  const bool small = kDirectSmallK<T> && d.k <= kSmallK;
  const Tiling tiling(s, d, pointwise);
  const int64_t ld_k = std::max<int64_t>(1, d.k), ld_l = std::max<int64_t>(1, d.l);
  const int64_t tile_work = s.out_channels * d.k * tiling.max_width(s);
  parallel_for(tiling.count, tile_grain(tile_work), [&](int64_t first, int64_t last) {
    Scratch<T> col(pointwise ? 0 : d.k * tiling.max_width(s));
    for (int64_t ti = first; ti < last; ++ti) {
      const Tile t = tile_at(tiling, s, ti, s.batch);
      for (int64_t g = 0; g < s.groups; ++g) {
        const T* xg = xp + g * d.cg * d.plane;
        if (!pointwise) im2col_tile(xg, s.in_channels * d.plane, col.get(), t, s, d.cg);
        for (int64_t n = t.n0; n < t.n1; ++n) {
          T* o = op + (n * s.out_channels + g * d.og) * d.l + t.r0 * s.out_w;
          const T* b = pointwise ? xg + n * s.in_channels * d.plane : col.get() + (n - t.n0) * t.span;
          const int64_t ldb = pointwise ? ld_l : t.width;
          if constexpr (kDirectSmallK<T>)
            if (small) {
              small_k_forward(d.og, t.span, d.k, wp + g * d.og * d.k, b, ldb, o, ld_l, bp ? bp + g * d.og : nullptr);
              continue;
            }
          gemm<T>(false, false, d.og, t.span, d.k, 1, wp + g * d.og * d.k, ld_k, b, ldb, 0, o, ld_l);
          if (bp) add_bias(o, ld_l, bp + g * d.og, d.og, t.span);
        }
      }
    }
  });
}

template <class T>
void forward_impl(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& out, const ConvShape& s) {
  forward_raw(x.data_ptr<T>(), w.data_ptr<T>(), bias.defined() ? bias.data_ptr<T>() : nullptr, out.data_ptr<T>(), s);
}

/// A unit-stride convolution's input gradient is itself a unit-stride convolution of g,
/// with the kernel flipped and its channel roles swapped, and padding d(k-1) - p (which must
/// not be negative).
bool input_grad_as_forward(const ConvShape& s) {
  return s.stride_h == 1 && s.stride_w == 1 && s.pad_h <= s.dilation_h * (s.kernel_h - 1) &&
         s.pad_w <= s.dilation_w * (s.kernel_w - 1);
}

template <class T>
void input_grad_impl(const Tensor& g, const Tensor& w, const Tensor& bias, Tensor& gi, const ConvShape& s) {
  const Dims d(s);
  const T* gp = g.data_ptr<T>();
  const T* wp = w.data_ptr<T>();
  const T* bp = bias.defined() ? bias.data_ptr<T>() : nullptr;
  T* ip = gi.data_ptr<T>();
  if (input_grad_as_forward(s)) {
    // w (O, cg, KH, KW) -> wf (C, og, KH, KW): wf[grp*cg + c][o][i][j] = w[grp*og + o][c][KH-1-i][KW-1-j].
    const int64_t khw = s.kernel_h * s.kernel_w;
    Scratch<T> wf(s.out_channels * d.k);
    for (int64_t grp = 0; grp < s.groups; ++grp)
      for (int64_t o = 0; o < d.og; ++o)
        for (int64_t c = 0; c < d.cg; ++c)
          for (int64_t q = 0; q < khw; ++q)
            wf.get()[((grp * d.cg + c) * d.og + o) * khw + q] = wp[((grp * d.og + o) * d.cg + c) * khw + khw - 1 - q];
    ConvShape f = s;
    f.in_channels = s.out_channels, f.in_h = s.out_h, f.in_w = s.out_w;
    f.out_channels = s.in_channels, f.out_h = s.in_h, f.out_w = s.in_w;
    f.pad_h = s.dilation_h * (s.kernel_h - 1) - s.pad_h, f.pad_w = s.dilation_w * (s.kernel_w - 1) - s.pad_w;
    forward_raw(gp, wf.get(), bp, ip, f);
    return;
  }
  // General case, per image: col (k x span) = w_g^T (k x og) * g (og x span) for tiles of
  // output rows, scattered back with col2im (tiles of one image overlap, so they run in order).
  const Tiling tiling(s, d, false);
  const int64_t rows = tiling.images > 1 ? s.out_h : tiling.rows;
  const int64_t ld_k = std::max<int64_t>(1, d.k), ld_l = std::max<int64_t>(1, d.l);
  parallel_for(s.batch, tile_grain(s.out_channels * d.k * d.l), [&](int64_t first, int64_t last) {
    Scratch<T> col(d.k * rows * s.out_w);
    for (int64_t n = first; n < last; ++n) {
      std::fill(ip + n * s.in_channels * d.plane, ip + (n + 1) * s.in_channels * d.plane, static_cast<T>(0));
      for (int64_t grp = 0; grp < s.groups; ++grp) {
        T* ig = ip + (n * s.in_channels + grp * d.cg) * d.plane;
        const T* wg = wp + grp * d.og * d.k;
        for (int64_t r0 = 0; r0 < s.out_h; r0 += rows) {
          const int64_t r1 = std::min(s.out_h, r0 + rows), span = (r1 - r0) * s.out_w;
          const T* gg = gp + (n * s.out_channels + grp * d.og) * d.l + r0 * s.out_w;
          gemm<T>(true, false, d.k, span, d.og, 1, wg, ld_k, gg, ld_l, 0, col.get(), std::max<int64_t>(1, span));
          col2im_add(col.get(), std::max<int64_t>(1, span), ig, s, d.cg, r0, r1);
        }
      }
      if (bp) add_bias(ip + n * s.in_channels * d.plane, d.plane, bp, s.in_channels, d.plane);
    }
  });
}

template <class T>
void weight_grad_impl(const Tensor& x, const Tensor& g, Tensor& gw, const ConvShape& s) {
  const Dims d(s);
  const T* xp = x.data_ptr<T>();
  const T* gp = g.data_ptr<T>();
  T* wp = gw.data_ptr<T>();
  const int64_t wsize = s.out_channels * d.k;
  if (s.batch == 0 || d.l == 0) {
    std::fill(wp, wp + wsize, static_cast<T>(0));
    return;
  }
  const bool pointwise = is_pointwise(s);
  const bool small = kDirectSmallK<T> && d.k <= kSmallK;
  const Tiling tiling(s, d, pointwise);
  const int64_t ld_k = std::max<int64_t>(1, d.k), ld_l = std::max<int64_t>(1, d.l);
  const int64_t chunks = std::min(s.batch, kWeightChunks);
  auto chunk_begin = [&](int64_t c) { return c * s.batch / chunks; };
  // Chunk 0 accumulates into gw itself, the others into partial sums added afterwards.
  Scratch<T> partial((chunks - 1) * wsize);
  const int64_t chunk_work = s.out_channels * d.k * d.l * (s.batch / chunks);
  parallel_for(chunks, tile_grain(chunk_work), [&](int64_t first, int64_t last) {
    Scratch<T> col(pointwise ? 0 : d.k * tiling.max_width(s));
    for (int64_t c = first; c < last; ++c) {
      T* acc = c == 0 ? wp : partial.get() + (c - 1) * wsize;
      const int64_t b0 = chunk_begin(c), b1 = chunk_begin(c + 1);
      // Tiles of this chunk: images [b0, b1) in groups of tiling.images, or row tiles.
      const int64_t ntiles = tiling.images > 1 ? (b1 - b0 + tiling.images - 1) / tiling.images
                                               : (b1 - b0) * tiling.row_tiles;
      for (int64_t ti = 0; ti < ntiles; ++ti) {
        Tile t = tile_at(tiling, s, ti, b1 - b0);
        t.n0 += b0, t.n1 += b0;
        for (int64_t grp = 0; grp < s.groups; ++grp) {
          const T* xg = xp + grp * d.cg * d.plane;
          if (!pointwise) im2col_tile(xg, s.in_channels * d.plane, col.get(), t, s, d.cg);
          for (int64_t n = t.n0; n < t.n1; ++n) {
            const T* gg = gp + (n * s.out_channels + grp * d.og) * d.l + t.r0 * s.out_w;
            const T* b = pointwise ? xg + n * s.in_channels * d.plane : col.get() + (n - t.n0) * t.span;
            const int64_t ldb = pointwise ? ld_l : t.width;
            T* a = acc + grp * d.og * d.k;
            const bool fresh = ti == 0 && n == t.n0;
            // acc_g (og x k) += g (og x span) * col^T (span x k)
            if constexpr (kDirectSmallK<T>)
              if (small) {
                small_k_weight(d.og, t.span, d.k, gg, ld_l, b, ldb, a, fresh);
                continue;
              }
            gemm<T>(false, true, d.og, d.k, t.span, 1, gg, ld_l, b, ldb, fresh ? 0 : 1, a, ld_k);
          }
        }
      }
    }
  });
  for (int64_t c = 1; c < chunks; ++c) {
    const T* p = partial.get() + (c - 1) * wsize;
    for (int64_t i = 0; i < wsize; ++i) add_into(wp[i], p[i]);
  }
}

/// Runs kernel<T> for the dtypes the kernels are built for (the op rejects bool with
/// PyTorch's message first; Half and BFloat16 arrive here already widened to float).
template <class F>
void visit_conv_dtype(ScalarType t, F&& f) {
  visit_dtype(t, [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
      detail::throw_error(detail::str_cat("\"slow_conv2d_cpu\" not implemented for '", scalar_type_name(t), "'"));
    else
      f.template operator()<T>();
  });
}

/// Half and BFloat16 convolve in float, as PyTorch's CPU convolution does: the operands are
/// widened once, the float kernels accumulate every sum (over the receptive field, the batch
/// and the col2im overlaps) in float, and the result is rounded once into `out`.
bool is_reduced_float(ScalarType t) { return t == kHalf || t == kBFloat16; }
Tensor widen(const Tensor& t) { return t.defined() ? t.to(kFloat) : t; }
template <class Run>
void in_float(Tensor& out, Run&& run) {
  Tensor wide = empty(out.sizes(), kFloat);
  run(wide);
  out.copy_(wide);
}

}  // namespace

void conv2d_forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& out, const ConvShape& s) {
  if (is_reduced_float(x.dtype()))
    return in_float(out, [&](Tensor& o) { conv2d_forward(widen(x), widen(w), widen(bias), o, s); });
  visit_conv_dtype(x.dtype(), [&]<typename T>() { forward_impl<T>(x, w, bias, out, s); });
}

void conv2d_backward_input(const Tensor& g, const Tensor& w, const Tensor& bias, Tensor& grad_input,
                           const ConvShape& s) {
  if (is_reduced_float(g.dtype()))
    return in_float(grad_input, [&](Tensor& o) { conv2d_backward_input(widen(g), widen(w), widen(bias), o, s); });
  visit_conv_dtype(g.dtype(), [&]<typename T>() { input_grad_impl<T>(g, w, bias, grad_input, s); });
}

void conv2d_backward_weight(const Tensor& x, const Tensor& g, Tensor& grad_weight, const ConvShape& s) {
  if (is_reduced_float(x.dtype()))
    return in_float(grad_weight, [&](Tensor& o) { conv2d_backward_weight(widen(x), widen(g), o, s); });
  visit_conv_dtype(x.dtype(), [&]<typename T>() { weight_grad_impl<T>(x, g, grad_weight, s); });
}

}  // namespace ember::cpu
