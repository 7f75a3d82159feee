// The direct convolution loops the tests use as the oracle of the kernels in conv.cpp: seven
// nested loops accumulating in double, with nothing of the kernels' tiling or im2col. In a
// file of their own so that conv.cpp holds only what the ops run.
#include "ember/autograd/grad_mode.h"
#include "ember/core/cpu/conv.h"
#include "ember/core/ops/creation.h"

namespace ember::cpu {

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
