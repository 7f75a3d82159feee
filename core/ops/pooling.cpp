// Pooling ops. Average and adaptive-average pooling are separable linear maps (Note
// [Separable maps] in separable_map.h); max pooling shares their per-axis windows (AxisMap
// taps) but keeps its own kernel (core/cpu/pooling.cpp on the CPU), which records the argmax
// so that backward scatters the gradient into it (MaxPoolScatter), and that scatter's
// backward is a gather.
#include "ember/core/ops/pooling.h"

#include <cmath>
#include <type_traits>

#include "ember/core/cpu/pooling.h"
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
      cpu::max_planes<T>(x.data_ptr<T>(), out[0].data_ptr<T>(), ip, planes, *h, *w);
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
