// Convolution kernels: im2col (unfold one image's group of channels into a matrix whose
// columns are the receptive fields) turns a convolution into one GEMM per image and group;
// col2im (scatter-add back) does the same for the input gradient. Images run in parallel
// above a work threshold, each thread reusing one column buffer from the caching allocator;
// a single large image leaves the parallelism to the GEMM. Beside them, direct loops that
// serve as the tests' oracle.
#include "ember/core/cpu/conv.h"

#include <algorithm>
#include <type_traits>

#include "ember/autograd/grad_mode.h"
#include "ember/core/allocator.h"
#include "ember/core/cpu/gemm.h"
#include "ember/core/dtype.h"
#include "ember/core/ops/creation.h"
#include "ember/core/tensor_iter.h"

namespace ember::cpu {
namespace {

/// Multiply-adds a parallel chunk of images should hold at least: below it, thread start-up
/// costs more than it saves and small convolutions stay on the calling thread.
constexpr int64_t kParallelWork = int64_t{1} << 20;
/// The weight gradient sums the batch in at most this many fixed chunks (partial sums added
/// in order), so its rounding never depends on the thread count.
constexpr int64_t kWeightChunks = 8;

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

/// Visits the col matrix of one image's `channels` channels row by row: for each (c, i, j)
/// row and each output row oh, calls f(col_segment, input_row or nullptr, range, start)
/// where the segment's valid columns ow in range read input_row[ow * stride_w + start].
template <class T, class F>
void for_each_col_row(T* col, const ConvShape& s, int64_t channels, F&& f) {
  const int64_t l = s.out_h * s.out_w;
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t i = 0; i < s.kernel_h; ++i)
      for (int64_t j = 0; j < s.kernel_w; ++j) {
        T* row = col + ((c * s.kernel_h + i) * s.kernel_w + j) * l;
        const int64_t start = j * s.dilation_w - s.pad_w;
        const ColRange r = valid_cols(start, s.stride_w, s.in_w, s.out_w);
        for (int64_t oh = 0; oh < s.out_h; ++oh) {
          const int64_t ih = oh * s.stride_h - s.pad_h + i * s.dilation_h;
          const bool inside = ih >= 0 && ih < s.in_h;
          f(row + oh * s.out_w, inside ? (c * s.in_h + ih) * s.in_w : int64_t{-1}, r, start);
        }
      }
}

/// col (cg * KH * KW rows, OH * OW columns) = the receptive fields of x (cg, H, W); padding
/// reads as zeros.
template <class T>
void im2col(const T* x, T* col, const ConvShape& s, int64_t channels) {
  const T zero = static_cast<T>(0);
  for_each_col_row(col, s, channels, [&](T* dst, int64_t row_off, ColRange r, int64_t start) {
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

/// x (cg, H, W) += the columns of col scattered back to where im2col read them.
template <class T>
void col2im_add(T* col, T* x, const ConvShape& s, int64_t channels) {
  for_each_col_row(col, s, channels, [&](T* src, int64_t row_off, ColRange r, int64_t start) {
    if (row_off < 0) return;
    T* dst = x + row_off;
    for (int64_t ow = r.lo; ow < r.hi; ++ow) add_into(dst[ow * s.stride_w + start], src[ow]);
  });
}

/// Adds bias[c] to every element of the `channels` planes of size `plane` at out.
template <class T>
void add_bias(T* out, const T* bias, int64_t channels, int64_t plane) {
  for (int64_t c = 0; c < channels; ++c) {
    const auto b = static_cast<opmath_t<T>>(bias[c]);
    T* p = out + c * plane;
    for (int64_t i = 0; i < plane; ++i) p[i] = static_cast<T>(static_cast<opmath_t<T>>(p[i]) + b);
  }
}

/// Images per parallel chunk given the multiply-adds of one image.
int64_t image_grain(int64_t work_per_image) {
  return std::max<int64_t>(1, kParallelWork / std::max<int64_t>(1, work_per_image));
}

template <class T>
void forward_impl(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& out, const ConvShape& s) {
  const Dims d(s);
  const T* xp = x.data_ptr<T>();
  const T* wp = w.data_ptr<T>();
  const T* bp = bias.defined() ? bias.data_ptr<T>() : nullptr;
  T* op = out.data_ptr<T>();
  const bool pointwise = is_pointwise(s);
  const int64_t ld_k = std::max<int64_t>(1, d.k), ld_l = std::max<int64_t>(1, d.l);
  parallel_for(s.batch, image_grain(s.out_channels * d.k * d.l), [&](int64_t first, int64_t last) {
    Scratch<T> col(pointwise ? 0 : d.k * d.l);
    for (int64_t n = first; n < last; ++n) {
      for (int64_t g = 0; g < s.groups; ++g) {
        const T* xg = xp + (n * s.in_channels + g * d.cg) * d.plane;
        if (!pointwise) im2col(xg, col.get(), s, d.cg);
        gemm<T>(false, false, d.og, d.l, d.k, 1, wp + g * d.og * d.k, ld_k, pointwise ? xg : col.get(), ld_l, 0,
                op + (n * s.out_channels + g * d.og) * d.l, ld_l);
      }
      if (bp) add_bias(op + n * s.out_channels * d.l, bp, s.out_channels, d.l);
    }
  });
}

template <class T>
void input_grad_impl(const Tensor& g, const Tensor& w, const Tensor& bias, Tensor& gi, const ConvShape& s) {
  const Dims d(s);
  const T* gp = g.data_ptr<T>();
  const T* wp = w.data_ptr<T>();
  const T* bp = bias.defined() ? bias.data_ptr<T>() : nullptr;
  T* ip = gi.data_ptr<T>();
  const bool pointwise = is_pointwise(s);
  const int64_t ld_k = std::max<int64_t>(1, d.k), ld_l = std::max<int64_t>(1, d.l);
  parallel_for(s.batch, image_grain(s.out_channels * d.k * d.l), [&](int64_t first, int64_t last) {
    Scratch<T> col(pointwise ? 0 : d.k * d.l);
    for (int64_t n = first; n < last; ++n) {
      for (int64_t grp = 0; grp < s.groups; ++grp) {
        T* ig = ip + (n * s.in_channels + grp * d.cg) * d.plane;
        const T* wg = wp + grp * d.og * d.k;
        const T* gg = gp + (n * s.out_channels + grp * d.og) * d.l;
        // col (k x l) = w_g^T (k x og) * g (og x l); pointwise writes the plane directly.
        if (pointwise) {
          gemm<T>(true, false, d.k, d.l, d.og, 1, wg, ld_k, gg, ld_l, 0, ig, ld_l);
          continue;
        }
        gemm<T>(true, false, d.k, d.l, d.og, 1, wg, ld_k, gg, ld_l, 0, col.get(), ld_l);
        std::fill(ig, ig + d.cg * d.plane, static_cast<T>(0));
        col2im_add(col.get(), ig, s, d.cg);
      }
      if (bp) add_bias(ip + n * s.in_channels * d.plane, bp, s.in_channels, d.plane);
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
  if (s.batch == 0) {
    std::fill(wp, wp + wsize, static_cast<T>(0));
    return;
  }
  const bool pointwise = is_pointwise(s);
  const int64_t ld_k = std::max<int64_t>(1, d.k), ld_l = std::max<int64_t>(1, d.l);
  const int64_t chunks = std::min(s.batch, kWeightChunks);
  auto chunk_begin = [&](int64_t c) { return c * s.batch / chunks; };
  // Chunk 0 accumulates into gw itself, the others into partial sums added afterwards.
  Scratch<T> partial((chunks - 1) * wsize);
  const int64_t chunk_work = s.out_channels * d.k * d.l * (s.batch / chunks);
  parallel_for(chunks, image_grain(chunk_work), [&](int64_t first, int64_t last) {
    Scratch<T> col(pointwise ? 0 : d.k * d.l);
    for (int64_t c = first; c < last; ++c) {
      T* acc = c == 0 ? wp : partial.get() + (c - 1) * wsize;
      for (int64_t n = chunk_begin(c); n < chunk_begin(c + 1); ++n)
        for (int64_t grp = 0; grp < s.groups; ++grp) {
          const T* xg = xp + (n * s.in_channels + grp * d.cg) * d.plane;
          if (!pointwise) im2col(xg, col.get(), s, d.cg);
          // acc_g (og x k) += g (og x l) * col^T (l x k)
          gemm<T>(false, true, d.og, d.k, d.l, 1, gp + (n * s.out_channels + grp * d.og) * d.l, ld_l,
                  pointwise ? xg : col.get(), ld_l, n == chunk_begin(c) ? 0 : 1, acc + grp * d.og * d.k, ld_k);
        }
    }
  });
  for (int64_t c = 1; c < chunks; ++c) {
    const T* p = partial.get() + (c - 1) * wsize;
    for (int64_t i = 0; i < wsize; ++i) add_into(wp[i], p[i]);
  }
}

/// Runs kernel<T> for the dtypes PyTorch's CPU convolution has (the op rejects the others
/// with PyTorch's message first).
template <class F>
void visit_conv_dtype(ScalarType t, F&& f) {
  visit_dtype(t, [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, Half>)
      detail::throw_error(detail::str_cat("\"slow_conv2d_cpu\" not implemented for '", scalar_type_name(t), "'"));
    else
      f.template operator()<T>();
  });
}

}  // namespace

void conv2d_forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& out, const ConvShape& s) {
  visit_conv_dtype(x.dtype(), [&]<typename T>() { forward_impl<T>(x, w, bias, out, s); });
}

void conv2d_backward_input(const Tensor& g, const Tensor& w, const Tensor& bias, Tensor& grad_input,
                           const ConvShape& s) {
  visit_conv_dtype(g.dtype(), [&]<typename T>() { input_grad_impl<T>(g, w, bias, grad_input, s); });
}

void conv2d_backward_weight(const Tensor& x, const Tensor& g, Tensor& grad_weight, const ConvShape& s) {
  visit_conv_dtype(x.dtype(), [&]<typename T>() { weight_grad_impl<T>(x, g, grad_weight, s); });
}

// ---- Reference loops (the oracle) -------------------------------------------------------

namespace {

/// Reads element (a, b, c, d) of a contiguous 4-d double tensor.
struct View4 {
  const double* p;
  int64_t s1, s2, s3;
  explicit View4(const Tensor& t)
      : p(t.data_ptr<double>()), s1(t.size(1) * t.size(2) * t.size(3)), s2(t.size(2) * t.size(3)), s3(t.size(3)) {}
  double operator()(int64_t a, int64_t b, int64_t c, int64_t d) const { return p[a * s1 + b * s2 + c * s3 + d]; }
};

Tensor as_double(const Tensor& t) { return t.defined() ? t.detach().to(kDouble).contiguous() : t; }

}  // namespace

Tensor conv2d_reference(const Tensor& x_, const Tensor& w_, const Tensor& bias_, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  NoGradGuard no_grad;
  Tensor x = as_double(x_), w = as_double(w_), bias = as_double(bias_);
  const int64_t n_ = x.size(0), c_ = x.size(1), h = x.size(2), wd = x.size(3);
  const int64_t o_ = w.size(0), cg = w.size(1), kh = w.size(2), kw = w.size(3), og = o_ / groups;
  const int64_t oh_ = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) / stride[0] + 1;
  const int64_t ow_ = (wd + 2 * padding[1] - dilation[1] * (kw - 1) - 1) / stride[1] + 1;
  (void)c_;
  Tensor out = zeros({n_, o_, oh_, ow_}, kDouble);
  double* op = out.data_ptr<double>();
  View4 X(x), W(w);
  for (int64_t n = 0; n < n_; ++n)
    for (int64_t o = 0; o < o_; ++o)
      for (int64_t y = 0; y < oh_; ++y)
        for (int64_t z = 0; z < ow_; ++z) {
          double acc = bias.defined() ? bias.data_ptr<double>()[o] : 0.0;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                const int64_t ih = y * stride[0] - padding[0] + i * dilation[0];
                const int64_t iw = z * stride[1] - padding[1] + j * dilation[1];
                if (ih < 0 || ih >= h || iw < 0 || iw >= wd) continue;
                acc += X(n, (o / og) * cg + c, ih, iw) * W(o, c, i, j);
              }
          op[((n * o_ + o) * oh_ + y) * ow_ + z] = acc;
        }
  return out.to(x_.dtype());
}

Tensor conv_transpose2d_reference(const Tensor& x_, const Tensor& w_, const Tensor& bias_, IntArrayRef stride,
                                  IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                                  IntArrayRef dilation) {
  NoGradGuard no_grad;
  Tensor x = as_double(x_), w = as_double(w_), bias = as_double(bias_);
  const int64_t n_ = x.size(0), ci_ = x.size(1), h = x.size(2), wd = x.size(3);
  const int64_t cog = w.size(1), kh = w.size(2), kw = w.size(3), cig = ci_ / groups, co_ = cog * groups;
  const int64_t oh_ = (h - 1) * stride[0] - 2 * padding[0] + dilation[0] * (kh - 1) + output_padding[0] + 1;
  const int64_t ow_ = (wd - 1) * stride[1] - 2 * padding[1] + dilation[1] * (kw - 1) + output_padding[1] + 1;
  Tensor out = zeros({n_, co_, oh_, ow_}, kDouble);
  double* op = out.data_ptr<double>();
  View4 X(x), W(w);
  // Scatter form: input pixel (y, z) of channel ci adds x * w to every output it reaches.
  for (int64_t n = 0; n < n_; ++n)
    for (int64_t ci = 0; ci < ci_; ++ci)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t z = 0; z < wd; ++z)
          for (int64_t c = 0; c < cog; ++c)
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                const int64_t oy = y * stride[0] - padding[0] + i * dilation[0];
                const int64_t oz = z * stride[1] - padding[1] + j * dilation[1];
                if (oy < 0 || oy >= oh_ || oz < 0 || oz >= ow_) continue;
                const int64_t co = (ci / cig) * cog + c;
                op[((n * co_ + co) * oh_ + oy) * ow_ + oz] += X(n, ci, y, z) * W(ci, c, i, j);
              }
  if (bias.defined())
    for (int64_t n = 0; n < n_; ++n)
      for (int64_t co = 0; co < co_; ++co)
        for (int64_t p = 0; p < oh_ * ow_; ++p) op[(n * co_ + co) * oh_ * ow_ + p] += bias.data_ptr<double>()[co];
  return out.to(x_.dtype());
}

}  // namespace ember::cpu
