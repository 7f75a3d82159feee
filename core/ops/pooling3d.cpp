// The 3-d poolings, max unpooling and fractional max pooling, as composites of the 2-d
// pooling ops (pooling.cpp) and of gather / scatter, so they run on both devices and
// differentiate through those ops' backwards.
//
// Max, average and adaptive pooling are separable: a window is a product of per-axis
// windows, the average's divisor is a product of per-axis counts (with or without padding),
// and the max over a box is the max over D of the maxes over (H, W). So the 3-d forms run a
// 2-d pooling over (H, W) of the (N, C * D, H, W) view and then a 2-d pooling with a
// (K, 1) window over (D, oH * oW). Max indices are recombined: the depth pass's index
// t * (oH oW) + j picks the (H, W) pass's index at that same position, and the volume index
// is t * H W + that. The argmax is the first maximum in (d, h, w) order, as PyTorch's.
// Cost: one intermediate of size N C D oH oW.
#include <algorithm>
#include <string>
#include <vector>

#include "ember/core/ops/creation.h"
#include "ember/core/ops/pooling.h"
#include "ember/core/ops/scatter.h"
#include "ember/core/ops/shape.h"

namespace ember {
namespace {

/// One value per axis from 1 or 3 given.
int64_t pick(IntArrayRef a, size_t i) { return a.size() == 1 ? a[0] : a[i]; }

struct Pool3d {
  int64_t k[3], s[3], p[3], d[3];
};

/// Pool.h's pool3d_shape_check, in its order and words (the non-batch-dimension message
/// prints the empty dimension's size, as PyTorch's does).
void pool3d_shape_check(const Tensor& input, const Pool3d& q, const int64_t out[3], const char* fn,
                        bool check_input_size) {
  const int64_t ndim = input.dim();
  EMBER_CHECK(q.k[0] > 0 && q.k[1] > 0 && q.k[2] > 0,
              "kernel size should be greater than zero, but got kT: ", q.k[0], " kH: ", q.k[1],
              " kW: ", q.k[2]);
  EMBER_CHECK(q.s[0] > 0 && q.s[1] > 0 && q.s[2] > 0,
              "stride should be greater than zero, but got dT: ", q.s[0], " dH: ", q.s[1], " dW: ", q.s[2]);
  EMBER_CHECK(q.d[0] > 0 && q.d[1] > 0 && q.d[2] > 0,
              "dilation should be greater than zero, but got dilationT: ", q.d[0], " dilationH: ", q.d[1],
              " dilationW: ", q.d[2]);
  EMBER_CHECK(ndim == 4 || ndim == 5, fn, ": Expected 4D or 5D tensor for input, but got: ", input.sizes());
  for (int64_t i = 0; i < ndim; ++i) {
    if (ndim == 5 && i == 0) continue;  // the batch may be empty
    EMBER_CHECK(input.size(i) > 0, fn,
                ": Expected input's non-batch dimensions to have positive length, but input has a shape of ",
                input.sizes(), " and non-batch dimension ", input.size(i), " has length zero!");
  }
  const int64_t T = input.size(-3), H = input.size(-2), W = input.size(-1);
  if (check_input_size)
    EMBER_CHECK(T >= q.k[0] && H >= q.k[1] && W >= q.k[2], "input image (T: ", T, " H: ", H, " W: ", W,
                ") smaller than kernel size (kT: ", q.k[0], " kH: ", q.k[1], " kW: ", q.k[2], ")");
  EMBER_CHECK(q.k[0] / 2 >= q.p[0] && q.k[2] / 2 >= q.p[2] && q.k[1] / 2 >= q.p[1],
              "pad should be smaller than or equal to half of kernel size, but got kT: ", q.k[0],
              " kW: ", q.k[2], " kH: ", q.k[1], " padT: ", q.p[0], " padW: ", q.p[2], " padH: ", q.p[1]);
  EMBER_CHECK(out[0] >= 1 && out[1] >= 1 && out[2] >= 1, "Given input size: (", input.size(-4), "x", T, "x",
              H, "x", W, "). Calculated output size: (", input.size(-4), "x", out[0], "x", out[1], "x",
              out[2], "). Output size is too small");
}

/// (N, C, D, H, W) view of a 4-d or 5-d input.
Tensor batched5(const Tensor& t) { return t.dim() == 4 ? t.unsqueeze(0) : t; }

Tensor unbatch(const Tensor& t, const Tensor& like) { return like.dim() == 4 ? t.squeeze(0) : t; }

/// Recombines a separable max pooling: (v1, i1) from the (H, W) pass of shape (N, C * D, oH,
/// oW) and (v2, i2) from the depth pass of shape (N, C, oD, oH * oW).
std::tuple<Tensor, Tensor> combine_max(const Tensor& x, const Tensor& i1, const Tensor& v2, const Tensor& i2,
                                       int64_t oH, int64_t oW) {
  const int64_t N = x.size(0), C = x.size(1), D = x.size(2), H = x.size(3), W = x.size(4), oD = v2.size(2);
  const int64_t plane = oH * oW;
  Tensor flat2 = i2.reshape({N, C, oD * plane});
  Tensor hw = gather(i1.reshape({N, C, D * plane}), 2, flat2);
  Tensor idx = flat2.div(plane, "floor") * (H * W) + hw;
  return {v2.reshape({N, C, oD, oH, oW}), idx.view({N, C, oD, oH, oW})};
}

}  // namespace

std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& self, IntArrayRef kernel_size,
                                                   IntArrayRef stride, IntArrayRef padding,
                                                   IntArrayRef dilation, bool ceil_mode) {
  EMBER_CHECK(kernel_size.size() == 1 || kernel_size.size() == 3,
              "max_pool3d: kernel_size must either be a single int, or a tuple of three ints");
  EMBER_CHECK(stride.empty() || stride.size() == 1 || stride.size() == 3,
              "max_pool3d: stride must either be omitted, a single int, or a tuple of three ints");
  EMBER_CHECK(padding.size() == 1 || padding.size() == 3,
              "max_pool3d: padding must either be a single int, or a tuple of three ints");
  EMBER_CHECK(dilation.size() == 1 || dilation.size() == 3,
              "max_pool3d: dilation must be either a single int, or a tuple of three ints");
  EMBER_CHECK(self.dim() == 4 || self.dim() == 5,
              "non-empty 4D or 5D (batch mode) tensor expected for input");
  Pool3d q;
  int64_t out[3];
  for (size_t i = 0; i < 3; ++i) {
    q.k[i] = pick(kernel_size, i);
    q.s[i] = stride.empty() ? q.k[i] : pick(stride, i);
    q.p[i] = pick(padding, i);
    q.d[i] = pick(dilation, i);
    out[i] = pooling_output_shape(self.size(static_cast<int64_t>(i) - 3), q.k[i], q.p[i], q.s[i], q.d[i],
                                  ceil_mode);
  }
  pool3d_shape_check(self, q, out, "max_pool3d_with_indices_out_cpu_template()", false);
  EMBER_CHECK(self.dtype() != kBool, "\"max_pool3d\" not implemented for 'Bool'");
  Tensor x = batched5(self);
  const int64_t N = x.size(0), C = x.size(1), D = x.size(2), H = x.size(3), W = x.size(4);
  auto [v1, i1] = max_pool2d_with_indices(x.reshape({N, C * D, H, W}), {q.k[1], q.k[2]}, {q.s[1], q.s[2]},
                                          {q.p[1], q.p[2]}, {q.d[1], q.d[2]}, ceil_mode);
  auto [v2, i2] = max_pool2d_with_indices(v1.view({N, C, D, out[1] * out[2]}), {q.k[0], 1}, {q.s[0], 1},
                                          {q.p[0], 0}, {q.d[0], 1}, ceil_mode);
  auto [values, indices] = combine_max(x, i1, v2, i2, out[1], out[2]);
  return {unbatch(values, self), unbatch(indices, self)};
}

Tensor max_pool3d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  return std::get<0>(max_pool3d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode));
}

Tensor avg_pool3d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
  EMBER_CHECK(kernel_size.size() == 1 || kernel_size.size() == 3,
              "avg_pool3d: kernel_size must be a single int, or a tuple of three ints");
  EMBER_CHECK(stride.empty() || stride.size() == 1 || stride.size() == 3,
              "avg_pool3d: stride must be omitted, a single int, or a tuple of three ints");
  EMBER_CHECK(padding.size() == 1 || padding.size() == 3,
              "avg_pool3d: padding must be a single int, or a tuple of three ints");
  EMBER_CHECK(self.dim() == 4 || self.dim() == 5,
              "non-empty 4D or 5D (batch mode) tensor expected for input");
  EMBER_CHECK(!divisor_override.has_value() || *divisor_override != 0, "divisor must be not zero");
  Pool3d q;
  int64_t out[3];
  for (size_t i = 0; i < 3; ++i) {
    q.k[i] = pick(kernel_size, i);
    q.s[i] = stride.empty() ? q.k[i] : pick(stride, i);
    q.p[i] = pick(padding, i);
    q.d[i] = 1;
    out[i] =
        pooling_output_shape(self.size(static_cast<int64_t>(i) - 3), q.k[i], q.p[i], q.s[i], 1, ceil_mode);
  }
  pool3d_shape_check(self, q, out, "avg_pool3d()", true);
  Tensor x = batched5(self);
  const int64_t N = x.size(0), C = x.size(1), D = x.size(2), H = x.size(3), W = x.size(4);
  // With divisor_override the (H, W) pass sums and the depth pass divides by the override.
  std::optional<int64_t> sum_only;
  if (divisor_override) sum_only = 1;
  Tensor v1 = avg_pool2d(x.reshape({N, C * D, H, W}), {q.k[1], q.k[2]}, {q.s[1], q.s[2]}, {q.p[1], q.p[2]},
                         ceil_mode, count_include_pad, sum_only);
  Tensor v2 = avg_pool2d(v1.view({N, C, D, out[1] * out[2]}), {q.k[0], 1}, {q.s[0], 1}, {q.p[0], 0},
                         ceil_mode, count_include_pad, divisor_override);
  return unbatch(v2.view({N, C, out[0], out[1], out[2]}), self);
}

namespace {

/// The adaptive 3-d checks shared by the average and the max (text differs by `fn`).
void check_adaptive3d(const Tensor& self, const char* fn, const char* got) {
  const int64_t ndim = self.dim();
  EMBER_CHECK(ndim == 4 || ndim == 5, fn, "(): Expected 4D or 5D tensor, but got", got, self.sizes());
  for (int64_t i = 1; i < ndim; ++i)
    EMBER_CHECK(self.size(i) > 0, fn,
                "(): Expected input to have non-zero size for non-batch dimensions, but input has sizes ",
                self.sizes(), " with dimension ", i, " being empty");
}

DimVector adaptive_out_sizes(const Tensor& x, IntArrayRef output_size) {
  return DimVector{x.size(0), x.size(1), output_size[0], output_size[1], output_size[2]};
}

}  // namespace

Tensor adaptive_avg_pool3d(const Tensor& self, IntArrayRef output_size) {
  EMBER_CHECK(output_size.size() == 3, "adaptive_avg_pool3d: output_size must be 3");
  EMBER_CHECK(
      output_size[0] >= 0 && output_size[1] >= 0 && output_size[2] >= 0,
      "adaptive_avg_pool3d: elements of output_size must be greater than or equal to 0 but received {",
      output_size[0], ", ", output_size[1], ",", output_size[2], "}");
  check_adaptive3d(self, "adaptive_avg_pool3d", " ");
  Tensor x = batched5(self);
  const int64_t N = x.size(0), C = x.size(1), D = x.size(2), H = x.size(3), W = x.size(4);
  const int64_t oD = output_size[0], oH = output_size[1], oW = output_size[2];
  if (oD * oH * oW == 0) return unbatch(zeros(adaptive_out_sizes(x, output_size), x.options()), self);
  Tensor v1 = adaptive_avg_pool2d(x.reshape({N, C * D, H, W}), {oH, oW});
  Tensor v2 = adaptive_avg_pool2d(v1.view({N, C, D, oH * oW}), {oD, oH * oW});
  return unbatch(v2.view({N, C, oD, oH, oW}), self);
}

std::tuple<Tensor, Tensor> adaptive_max_pool3d(const Tensor& self, IntArrayRef output_size) {
  check_adaptive3d(self, "adaptive_max_pool3d", ": ");
  EMBER_CHECK(output_size.size() == 3, "adaptive_max_pool3d(): internal error: output_size.size() must be 3");
  Tensor x = batched5(self);
  DimVector out_sizes = adaptive_out_sizes(x, output_size);
  if (self.dim() == 4) out_sizes.erase(0);
  for (int64_t s : output_size)
    EMBER_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", IntArrayRef(out_sizes));
  const int64_t N = x.size(0), C = x.size(1), D = x.size(2), H = x.size(3), W = x.size(4);
  const int64_t oD = output_size[0], oH = output_size[1], oW = output_size[2];
  if (oD * oH * oW == 0) {
    Tensor empty_out = zeros(out_sizes, x.options());
    return {empty_out, zeros(out_sizes, x.options().dtype(kLong))};
  }
  auto [v1, i1] = adaptive_max_pool2d(x.reshape({N, C * D, H, W}), {oH, oW});
  auto [v2, i2] = adaptive_max_pool2d(v1.view({N, C, D, oH * oW}), {oD, oH * oW});
  auto [values, indices] = combine_max(x, i1, v2, i2, oH, oW);
  return {unbatch(values, self), unbatch(indices, self)};
}

// ---- Max unpooling ----------------------------------------------------------------------

namespace {

/// Writes input's values at `indices` into zeros of spatial size `out` (the last out.size()
/// dims), after MaxUnpooling.cpp's index check. The check reads the indices on the host.
Tensor unpool(const Tensor& self, const Tensor& indices, IntArrayRef out, int64_t spatial) {
  const bool batched = self.dim() == spatial + 2;
  Tensor x = batched ? self : self.unsqueeze(0), idx = batched ? indices : indices.unsqueeze(0);
  const int64_t N = x.size(0), C = x.size(1);
  int64_t in_plane = 1, out_plane = 1;
  for (int64_t d = 2; d < x.dim(); ++d) in_plane *= x.size(d);
  for (int64_t s : out) out_plane *= s;
  Tensor host = idx.to(kCPU).contiguous();
  const int64_t* ip = host.data_ptr<int64_t>();
  for (int64_t i = 0, n = host.numel(); i < n; ++i) {
    if (ip[i] >= 0 && ip[i] < out_plane) continue;
    std::string sizes;
    for (size_t d = 0; d < out.size(); ++d) sizes += (d ? "x" : "") + std::to_string(out[d]);
    EMBER_CHECK(false, "Found an invalid max index: ", ip[i], " (output volumes are of size ", sizes);
  }
  Tensor flat = zeros({N, C, out_plane}, x.options())
                    .scatter(2, idx.reshape({N, C, in_plane}), x.reshape({N, C, in_plane}));
  DimVector shape{N, C};
  for (int64_t s : out) shape.push_back(s);
  Tensor y = flat.view(shape);
  return batched ? y : y.squeeze(0);
}

/// The checks max_unpool2d and max_unpool3d share after their own.
void check_unpool_input(const Tensor& self, const Tensor& indices, const char* fn) {
  EMBER_CHECK(self.sizes() == indices.sizes(),
              "Expected shape of indices to be same as that of the input tensor (", self.sizes(),
              ") but got indices tensor with shape: ", indices.sizes());
  for (int64_t i = 1; i < self.dim(); ++i)
    EMBER_CHECK(self.size(i) > 0, fn,
                "(): Expected input to have non-zero size for non-batch dimensions, but got ", self.sizes(),
                " with dimension ", i, " being empty.");
}

}  // namespace

Tensor max_unpool2d(const Tensor& self, const Tensor& indices, IntArrayRef output_size) {
  EMBER_CHECK(indices.dtype() == kLong,
              "elements in indices should be type int64 but got: ", scalar_type_name(indices.dtype()));
  EMBER_CHECK(output_size.size() == 2,
              "There should be exactly two elements (height, width) in output_size, but got ",
              output_size.size(), " elements.");
  EMBER_CHECK(self.dim() == 3 || self.dim() == 4,
              "Input to max_unpooling2d should be a 3d or 4d Tensor, but got a tensor with ", self.dim(),
              " dimensions.");
  check_unpool_input(self, indices, "max_unpooling2d_forward_out_cpu");
  return unpool(self, indices, output_size, 2);
}

Tensor max_unpool3d(const Tensor& self, const Tensor& indices, IntArrayRef output_size, IntArrayRef stride,
                    IntArrayRef padding) {
  EMBER_CHECK(indices.dtype() == kLong, "elements in indices should be type int64");
  EMBER_CHECK(self.dim() == 4 || self.dim() == 5,
              "Input to max_unpooling3d should be a 4d or 5d Tensor, but got a tensor with ", self.dim(),
              " dimensions.");
  EMBER_CHECK(output_size.size() == 3,
              "There should be exactly three elements (depth, height, width) in output_size, but got ",
              output_size.size(), " elements.");
  EMBER_CHECK(stride.size() == 3,
              "There should be exactly three elements (depth, height, width) in stride, but got: ",
              stride.size(), " elements.");
  EMBER_CHECK(padding.size() == 3,
              "There should be exactly three elements (depth, height, width) in padding, but got: ",
              padding.size(), " elements.");
  check_unpool_input(self, indices, "max_unpooling3d_forward_out_cpu");
  EMBER_CHECK(stride[0] > 0 && stride[1] > 0 && stride[2] > 0,
              "strides should be greater than zero, but got stride: ", stride);
  return unpool(self, indices, output_size, 3);
}

// ---- Fractional max pooling -------------------------------------------------------------

namespace {

/// FractionalMaxPool2d.cpp's generate_intervals: window starts for one axis, computed in
/// the samples' precision T so that a given sample picks PyTorch's windows.
template <class T>
std::vector<int64_t> fractional_intervals(T sample, int64_t in, int64_t out, int64_t pool) {
  std::vector<int64_t> seq(static_cast<size_t>(out), 0);
  if (out > 1) {
    const T alpha = static_cast<T>(in - pool) / static_cast<T>(out - 1);
    for (int64_t i = 0; i < out - 1; ++i)
      seq[i] = static_cast<int>((static_cast<T>(i) + sample) * alpha) - static_cast<int>(sample * alpha);
  }
  if (out > 0) seq[out - 1] = in - pool;
  return seq;
}

/// Fractional max pooling over the last `dims` (2 or 3) dimensions of a batched input x:
/// every output gathers its window's elements (flat positions built on the host from the
/// samples), and max over them picks the value and, through the same positions, its index.
/// Cost: a gathered temporary of kernel-volume times the output's size.
std::tuple<Tensor, Tensor> fractional_pool(const Tensor& x, IntArrayRef kernel, IntArrayRef out,
                                           const Tensor& samples, size_t dims) {
  const int64_t N = x.size(0), C = x.size(1), planes = N * C;
  std::vector<int64_t> in(dims);
  int64_t in_volume = 1, out_volume = 1, window = 1;
  for (size_t i = 0; i < dims; ++i) {
    in[i] = x.size(static_cast<int64_t>(i) + 2);
    in_volume *= in[i];
    out_volume *= out[i];
    window *= kernel[i];
  }
  DimVector out_shape{N, C};
  for (size_t i = 0; i < dims; ++i) out_shape.push_back(out[i]);
  if (planes * out_volume == 0)
    return {zeros(out_shape, x.options()), zeros(out_shape, x.options().dtype(kLong))};
  const bool dbl = samples.dtype() == kDouble;
  Tensor host = samples.to(kCPU).to(dbl ? kDouble : kFloat).contiguous();
  std::vector<int64_t> positions(static_cast<size_t>(planes * out_volume * window));
  std::vector<std::vector<int64_t>> starts(dims);
  for (int64_t p = 0; p < planes; ++p) {
    const int64_t n = p / C, c = p % C;
    for (size_t i = 0; i < dims; ++i) {
      // 2-d samples are (width, height); 3-d ones (depth, height, width).
      const int64_t slot = static_cast<int64_t>(dims == 2 ? 1 - i : i);
      const int64_t at = (n * C + c) * static_cast<int64_t>(dims) + slot;
      starts[i] = dbl ? fractional_intervals<double>(host.data_ptr<double>()[at], in[i], out[i], kernel[i])
                      : fractional_intervals<float>(host.data_ptr<float>()[at], in[i], out[i], kernel[i]);
    }
    int64_t* dst = positions.data() + p * out_volume * window;
    for (int64_t o = 0; o < out_volume; ++o) {
      for (int64_t k = 0; k < window; ++k) {
        // Decompose o and k into per-axis coordinates, last axis fastest.
        int64_t ro = o, rk = k, flat = 0, stride = 1;
        for (size_t j = dims; j-- > 0;) {
          const int64_t oc = ro % out[j], kc = rk % kernel[j];
          ro /= out[j];
          rk /= kernel[j];
          flat += (starts[j][oc] + kc) * stride;
          stride *= in[j];
        }
        *dst++ = flat;
      }
    }
  }
  Tensor index = tensor(positions).view({planes, out_volume * window}).to(x.device());
  Tensor picked = gather(x.reshape({planes, in_volume}), 1, index).view({planes, out_volume, window});
  auto [values, which] = picked.max(2);
  Tensor indices = gather(index.view({planes, out_volume, window}), 2, which.unsqueeze(2)).squeeze(2);
  return {values.view(out_shape), indices.view(out_shape)};
}

/// The samples' checks, in PyTorch's words.
void check_samples(const Tensor& input, const Tensor& samples, int64_t N, int64_t C, int64_t dims) {
  EMBER_CHECK(samples.dtype() == input.dtype(), "Expect _random_samples to have the same dtype as input");
  EMBER_CHECK(samples.dim() == 3, "Expect _random_samples to have 3 dimensions, got ", samples.dim());
  EMBER_CHECK(samples.size(0) >= N, "Expect _random_samples.size(0) no less then input batch size.");
  EMBER_CHECK(samples.size(1) == C, "Expect _random_samples.size(1) equals to input channel size.");
  EMBER_CHECK(samples.size(2) == dims, "Expect _random_samples.size(2) equals to ", dims, "; got ",
              samples.size(2), ".");
}

}  // namespace

std::tuple<Tensor, Tensor> fractional_max_pool2d(const Tensor& self, IntArrayRef kernel_size,
                                                 IntArrayRef output_size, const Tensor& random_samples) {
  EMBER_CHECK(kernel_size.size() == 2,
              "fractional_max_pool2d: kernel_size must either be a single Int or tuple of Ints");
  EMBER_CHECK(output_size.size() == 2,
              "fractional_max_pool2d: output_size must either be a single Int or tuple of Ints");
  const int64_t ndim = self.dim();
  EMBER_CHECK(ndim == 3 || ndim == 4,
              "fractional_max_pool2d(): Expected 3D or 4D tensor, but got: ", self.sizes());
  for (int64_t i = 1; i < ndim; ++i)
    EMBER_CHECK(
        self.size(i) > 0,
        "fractional_max_pool2d(): Expected input to have non-zero size for non-batch dimensions, but got",
        self.sizes(), " with dimension ", i, " being empty.");
  const int64_t H = self.size(-2), W = self.size(-1);
  EMBER_CHECK(output_size[0] + kernel_size[0] - 1 <= H, "fractional_max_pool2d(): pool height ",
              kernel_size[0], " too large relative to input height ", H);
  EMBER_CHECK(output_size[1] + kernel_size[1] - 1 <= W, "fractional_max_pool2d(): pool width ",
              kernel_size[1], " too large relative to input width ", W);
  Tensor x = ndim == 3 ? self.unsqueeze(0) : self;
  check_samples(self, random_samples, x.size(0), x.size(1), 2);
  auto [values, indices] = fractional_pool(x, kernel_size, output_size, random_samples, 2);
  if (ndim == 3) return {values.squeeze(0), indices.squeeze(0)};
  return {values, indices};
}

std::tuple<Tensor, Tensor> fractional_max_pool3d(const Tensor& self, IntArrayRef kernel_size,
                                                 IntArrayRef output_size, const Tensor& random_samples) {
  EMBER_CHECK(kernel_size.size() == 3,
              "fractional_max_pool3d: kernel_size must either be a single Int or tuple of three Ints");
  EMBER_CHECK(output_size.size() == 3,
              "fractional_max_pool3d: output_size must either be a single Int or tuple of three Ints");
  const int64_t ndim = self.dim();
  EMBER_CHECK(ndim == 4 || ndim == 5,
              "fractional_max_pool3d_out(): Expected 4D or 5D tensor, but got: ", self.sizes());
  for (int64_t i = 1; i < ndim; ++i)
    EMBER_CHECK(
        self.size(i) > 0,
        "fractional_max_pool3d_out(): Expected input to have non-zero size for non-batch dimensions, but got",
        self.sizes(), " with dimension ", i, " being empty.");
  const int64_t T = self.size(-3), H = self.size(-2), W = self.size(-1);
  EMBER_CHECK(output_size[0] + kernel_size[0] - 1 <= T, "fractional_max_pool3d_out(): pool time ",
              kernel_size[0], " too large relative to input time ", T);
  EMBER_CHECK(output_size[1] + kernel_size[1] - 1 <= H, "fractional_max_pool3d_out(): pool height ",
              kernel_size[1], " too large relative to input height ", H);
  EMBER_CHECK(output_size[2] + kernel_size[2] - 1 <= W, "fractional_max_pool3d_out(): pool width ",
              kernel_size[2], " too large relative to input width ", W);
  Tensor x = ndim == 4 ? self.unsqueeze(0) : self;
  check_samples(self, random_samples, x.size(0), x.size(1), 3);
  auto [values, indices] = fractional_pool(x, kernel_size, output_size, random_samples, 3);
  if (ndim == 4) return {values.squeeze(0), indices.squeeze(0)};
  return {values, indices};
}

}  // namespace ember
