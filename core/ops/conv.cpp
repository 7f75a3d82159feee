// Convolutions as ops. Every public conv function checks its inputs with PyTorch's messages
// and lands in one op, Convolution (node ConvolutionBackward0): a convolution C(x; w) or,
// transposed, its adjoint C^T(x; w) (the input-gradient of C), plus a bias. Its backward is
// built from the same op and from ConvolutionBackwardWeight, whose own backward is built
// from Convolution again, so gradients of any order come from three kernels (core/cpu/conv.h on
// the CPU, cuDNN's forward, backward-data and backward-filter on CUDA: cuda/conv.h).
// 1-d convolutions run as 2-d ones of height 1 inside the kernels; tensors stay 1-d.
// 3-d convolutions are composites of one 2-d convolution each (conv3d_by_2d,
// conv_transpose3d_by_2d below), so they get CPU, CUDA and autograd from the 2-d op.
#include "ember/core/ops/conv.h"

#include <algorithm>
#include <utility>

#include "ember/core/autocast.h"
#include "ember/core/cpu/conv.h"
#include "ember/core/op.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/padding.h"
#include "ember/core/ops/shape.h"
#include "ember/cuda/conv.h"

namespace ember {
namespace {

/// One value per spatial dimension (1 or 2 of them).
struct ConvParams {
  DimVector stride, padding, dilation, output_padding;
  bool transposed = false;
  int64_t groups = 1;
  size_t dims() const { return stride.size(); }
};

/// The kernel's view of the convolution behind p: conv_in is the convolution's input (for a
/// transposed convolution, its output), conv_out its output; a 1-d one has height 1.
cpu::ConvShape make_shape(IntArrayRef conv_in, IntArrayRef w, IntArrayRef conv_out, const ConvParams& p) {
  cpu::ConvShape s;
  s.batch = conv_in[0];
  s.in_channels = conv_in[1];
  s.out_channels = w[0];
  s.groups = p.groups;
  const size_t last = p.dims() - 1;
  s.in_w = conv_in[last + 2], s.out_w = conv_out[last + 2], s.kernel_w = w[last + 2];
  s.stride_w = p.stride[last], s.pad_w = p.padding[last], s.dilation_w = p.dilation[last];
  if (p.dims() == 2) {
    s.in_h = conv_in[2], s.out_h = conv_out[2], s.kernel_h = w[2];
    s.stride_h = p.stride[0], s.pad_h = p.padding[0], s.dilation_h = p.dilation[0];
  }
  return s;
}

/// Output sizes: (in + 2p - d(k-1) - 1) / s + 1, or transposed (in-1)s - 2p + d(k-1) + op + 1.
DimVector output_sizes(IntArrayRef in, IntArrayRef w, const ConvParams& p) {
  DimVector out{in[0], p.transposed ? w[1] * p.groups : w[0]};
  for (size_t i = 0; i < p.dims(); ++i) {
    const int64_t k = p.dilation[i] * (w[i + 2] - 1) + 1;
    out.push_back(p.transposed ? (in[i + 2] - 1) * p.stride[i] - 2 * p.padding[i] + k + p.output_padding[i]
                               : (in[i + 2] + 2 * p.padding[i] - k) / p.stride[i] + 1);
  }
  return out;
}

/// The transposed convolution that maps a gradient of C's output (sizes `out`) back onto
/// C's input (sizes `in`): output_padding recovers the rows a stride dropped.
ConvParams adjoint_params(const ConvParams& p, IntArrayRef in, IntArrayRef w, IntArrayRef out) {
  ConvParams q = p;
  q.transposed = true;
  q.output_padding = DimVector(p.dims(), 0);
  for (size_t i = 0; i < p.dims(); ++i)
    q.output_padding[i] =
        in[i + 2] - ((out[i + 2] - 1) * p.stride[i] - 2 * p.padding[i] + p.dilation[i] * (w[i + 2] - 1) + 1);
  return q;
}

/// p in the 2-d form cuda/conv.h takes (the geometry itself comes from the tensors' sizes).
cuda::ConvArgs2d cuda_args(const ConvParams& p) {
  return cuda::conv_args_2d(p.stride, p.padding, p.dilation, p.groups);
}

ConvParams plain(ConvParams p) {
  p.transposed = false;
  p.output_padding = DimVector(p.dims(), 0);
  return p;
}

Tensor run_convolution(const Tensor& x, const Tensor& w, const Tensor& b, const ConvParams& p);
Tensor run_weight_grad(const Tensor& z, const Tensor& o, IntArrayRef weight_sizes, const ConvParams& p);

/// Narrows t's spatial dimensions to `sizes`'s. C(g; w) of a transposed convolution's
/// gradient has extra trailing rows when its output_padding was >= stride (allowed when it
/// is below the dilation); those rows correspond to no input element.
Tensor crop_to(Tensor t, IntArrayRef sizes) {
  for (int64_t d = 2; d < t.dim(); ++d)
    if (t.size(d) > sizes[d]) t = t.narrow(d, 0, sizes[d]);
  return t;
}

/// Sums a gradient over every dimension but channels: the bias gradient.
Tensor bias_grad(const Tensor& g) {
  DimVector dims{0};
  for (int64_t d = 2; d < g.dim(); ++d) dims.push_back(d);
  return g.sum(dims);
}

// convolution: y = C(x; w) + b, or transposed y = C^T(x; w) + b, with C linear in x and in w.
//   plain:      dx = C^T(g; w),  dw = Wgrad(x, g),  db = sum of g over all but channels
//   transposed: dx = C(g; w),    dw = Wgrad(g, x),  db = likewise
// where Wgrad(z, o) = d<C(z; w), o>/dw (ConvolutionBackwardWeight). For the transposed case,
// <C^T(x; w), g> = <x, C(g; w)>, so it is C with the roles of input and gradient swapped.
struct Convolution final : Op {
  static constexpr AutocastPolicies kAutocast = autocast::kLowerPrecisionBoth;
  ConvParams p;
  explicit Convolution(ConvParams params) : p(std::move(params)) {}
  const char* name() const override { return "convolution"; }
  void cpu(const TensorList& in, TensorList& out) const override {
    Tensor x = in[0].contiguous(), w = in[1].contiguous();
    Tensor b = in[2].defined() ? in[2].contiguous() : Tensor();
    if (p.transposed)
      cpu::conv2d_backward_input(x, w, b, out[0], make_shape(out[0].sizes(), w.sizes(), x.sizes(), p));
    else
      cpu::conv2d_forward(x, w, b, out[0], make_shape(x.sizes(), w.sizes(), out[0].sizes(), p));
  }
  void cuda(const TensorList& in, TensorList& out) const override {
    Tensor x = in[0].contiguous(), w = in[1].contiguous();
    Tensor b = in[2].defined() ? in[2].contiguous() : Tensor();
    if (p.transposed)
      cuda::conv_transpose(out[0], x, w, b, cuda_args(p));
    else
      cuda::conv_forward(out[0], x, w, b, cuda_args(p));
  }
  TensorList backward(const SavedTensors& s, const TensorList& grads) const override {
    // One contiguous copy of g (often an expanded one, e.g. from sum()) serves both kernels.
    const Tensor g = grads[0].contiguous();
    Tensor x = s.input(0), w = s.input(1), gx, gw, gb;
    if (p.transposed) {
      if (s.needs_grad(0)) gx = crop_to(run_convolution(g, w, {}, plain(p)), x.sizes());
      if (s.needs_grad(1)) gw = run_weight_grad(g, x, w.sizes(), plain(p));
    } else {
      if (s.needs_grad(0)) gx = run_convolution(g, w, {}, adjoint_params(p, x.sizes(), w.sizes(), g.sizes()));
      if (s.needs_grad(1)) gw = run_weight_grad(x, g, w.sizes(), p);
    }
    if (s.needs_grad(2)) gb = bias_grad(g);
    return {gx, gw, gb};
  }
};

// convolution_backward_weight: W = Wgrad(z, o) = d<C(z; w), o>/dw, bilinear in (z, o), so
// for an incoming gradient G (weight-shaped): dz = C^T(o; G), do = C(z; G).
struct ConvolutionBackwardWeight final : Op {
  ConvParams p;  // of the plain convolution C
  explicit ConvolutionBackwardWeight(ConvParams params) : p(std::move(params)) {}
  const char* name() const override { return "convolution_backward_weight"; }
  void cpu(const TensorList& in, TensorList& out) const override {
    Tensor z = in[0].contiguous(), o = in[1].contiguous();
    cpu::conv2d_backward_weight(z, o, out[0], make_shape(z.sizes(), out[0].sizes(), o.sizes(), p));
  }
  void cuda(const TensorList& in, TensorList& out) const override {
    cuda::conv_backward_weight(out[0], in[0].contiguous(), in[1].contiguous(), cuda_args(p));
  }
  TensorList backward(const SavedTensors& s, const TensorList& grads) const override {
    const Tensor& gg = grads[0];
    Tensor z = s.input(0), o = s.input(1), gz, go;
    if (s.needs_grad(0)) gz = run_convolution(o, gg, {}, adjoint_params(p, z.sizes(), gg.sizes(), o.sizes()));
    if (s.needs_grad(1)) go = crop_to(run_convolution(z, gg, {}, p), o.sizes());
    return {gz, go};
  }
};

Tensor run_convolution(const Tensor& x, const Tensor& w, const Tensor& b, const ConvParams& p) {
  return run_op(Convolution(p), {x, w, b}, OutSpec{output_sizes(x.sizes(), w.sizes(), p), x.dtype()});
}

Tensor run_weight_grad(const Tensor& z, const Tensor& o, IntArrayRef weight_sizes, const ConvParams& p) {
  return run_op(ConvolutionBackwardWeight(p), {z, o}, OutSpec{DimVector(weight_sizes), z.dtype()});
}

// ---- Argument checks, in PyTorch's order and words ----------------------------------------

DimVector expand_param(IntArrayRef v, const char* name, int64_t dims) {
  if (v.size() == 1) return DimVector(static_cast<size_t>(dims), v[0]);
  EMBER_CHECK(static_cast<int64_t>(v.size()) == dims, "expected ", name, " to be a single integer value or a list of ",
              dims, " values to match the convolution dimensions, but got ", name, "=", v);
  return DimVector(v);
}

bool any_of(const DimVector& v, bool (*pred)(int64_t)) {
  for (int64_t x : v)
    if (pred(x)) return true;
  return false;
}

/// PyTorch's check_shape_forward.
void check_shape_forward(const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvParams& p) {
  auto negative = [](int64_t v) { return v < 0; };
  EMBER_CHECK(!any_of(p.padding, negative), "negative padding is not supported");
  EMBER_CHECK(!any_of(p.output_padding, negative), "negative output_padding is not supported");
  EMBER_CHECK(!any_of(p.stride, [](int64_t v) { return v <= 0; }), "non-positive stride is not supported");
  const int64_t k = input.dim(), groups = p.groups;
  EMBER_CHECK(weight.dim() == k, "Expected ", weight.dim(), "-dimensional input for ", weight.dim(),
              "-dimensional weight ", weight.sizes(), ", but got ", k, "-dimensional input of size ", input.sizes(),
              " instead");
  EMBER_CHECK(weight.size(0) >= groups, "Given groups=", groups, ", expected weight to be at least ", groups,
              " at dimension 0, but got weight of size ", weight.sizes(), " instead");
  EMBER_CHECK(weight.size(0) % groups == 0, "Given groups=", groups, ", expected weight to be divisible by ", groups,
              " at dimension 0, but got weight of size [", weight.sizes(), "] instead");
  if (p.transposed) {
    EMBER_CHECK(input.size(1) == weight.size(0), "Given transposed=1, weight of size ", weight.sizes(),
                ", expected input", input.sizes(), " to have ", weight.size(0), " channels, but got ", input.size(1),
                " channels instead");
    EMBER_CHECK(!bias.defined() || (bias.dim() == 1 && bias.size(0) == weight.size(1) * groups),
                "Given transposed=1, weight of size ", weight.sizes(), ", expected bias to be 1-dimensional with ",
                weight.size(1) * groups, " elements, but got bias of size ", bias.sizes(), " instead");
    return;
  }
  EMBER_CHECK(input.size(1) == weight.size(1) * groups, "Given groups=", groups, ", weight of size ", weight.sizes(),
              ", expected input", input.sizes(), " to have ", weight.size(1) * groups, " channels, but got ",
              input.size(1), " channels instead");
  EMBER_CHECK(!bias.defined() || (bias.dim() == 1 && bias.size(0) == weight.size(0)), "Given weight of size ",
              weight.sizes(), ", expected bias to be 1-dimensional with ", weight.size(0),
              " elements, but got bias of size ", bias.sizes(), " instead");
  std::string padded, kernel;
  bool fits = true;
  for (int64_t i = 2; i < k; ++i) {
    const int64_t in = input.size(i) + 2 * p.padding[i - 2], ks = p.dilation[i - 2] * (weight.size(i) - 1) + 1;
    fits = fits && in >= ks;
    padded += (i > 2 ? " x " : "") + std::to_string(in);
    kernel += (i > 2 ? " x " : "") + std::to_string(ks);
  }
  EMBER_CHECK(fits, "Calculated padded input size per channel: (", padded, "). Kernel size: (", kernel,
              "). Kernel size can't be greater than actual input size");
}

/// The checks PyTorch's CPU kernels (slow_conv2d, slow_conv_transpose2d) make, which see
/// 1-d convolutions as 2-d ones of height 1 and word their messages that way. On CUDA the
/// dtype check is cuDNN's instead (floating dtypes only; float16 included).
void check_kernel_args(const Tensor& input, const Tensor& weight, const ConvParams& p) {
  const bool one = p.dims() == 1;
  auto two_d = [&](const DimVector& v, int64_t h) { return one ? DimVector{h, v[0]} : v; };
  DimVector st = two_d(p.stride, 1), dil = two_d(p.dilation, 1), op = two_d(p.output_padding, 0);
  const char* kernel = p.transposed ? "slow_conv_transpose2d_out_cpu" : "slow_conv2d_cpu";
  if (!p.transposed) {
    EMBER_CHECK(dil[0] > 0 && dil[1] > 0, "dilation should be greater than zero, but got ", IntArrayRef(dil));
  } else {
    EMBER_CHECK(dil[0] > 0 && dil[1] > 0, "dilation should be greater than zero, but got dilation_height: ", dil[0],
                ", dilation_width: ", dil[1]);
    EMBER_CHECK((op[1] < st[1] || op[1] < dil[1]) && (op[0] < st[0] || op[0] < dil[0]),
                "output padding must be smaller than either stride or dilation, but got output_padding_height: ",
                op[0], " output_padding_width: ", op[1], " stride_height: ", st[0], " stride_width: ", st[1],
                " dilation_height: ", dil[0], " dilation_width: ", dil[1]);
  }
  const ScalarType t = input.dtype();
  if (input.is_cuda())
    EMBER_CHECK(is_floating_point(t), "getCudnnDataTypeFromScalarType() not supported for ", scalar_type_name(t));
  else
    EMBER_CHECK(t != kBool, "\"", kernel, "\" not implemented for '", scalar_type_name(t), "'");
  EMBER_CHECK(weight.dtype() == t, "expected scalar type ", scalar_type_name(t), " but found ",
              scalar_type_name(weight.dtype()));
  if (!p.transposed) return;
  DimVector out = output_sizes(input.sizes(), weight.sizes(), p);
  DimVector in_sp(input.sizes().slice(2)), out_sp(IntArrayRef(out).slice(2));
  if (one) in_sp = DimVector{1, in_sp[0]}, out_sp = DimVector{1, out_sp[0]};
  EMBER_CHECK(out_sp[0] >= 1 && out_sp[1] >= 1, "Given input size per channel: (", in_sp[0], " x ", in_sp[1],
              "). Calculated output size per channel: (", out_sp[0], " x ", out_sp[1], "). Output size is too small");
}

/// Adds a batch dimension to an unbatched input (PyTorch's batchify); returns whether it was
/// batched.
std::pair<Tensor, bool> batchify(const Tensor& input, int64_t spatial, const char* fn) {
  const int64_t unbatched = spatial + 1, batched = spatial + 2;
  EMBER_CHECK(input.dim() == unbatched || input.dim() == batched, "Expected ", unbatched, "D (unbatched) or ",
              batched, "D (batched) input to ", fn, ", but got input of size: ", input.sizes());
  if (input.dim() == batched) return {input, true};
  return {input.unsqueeze(0), false};
}

Tensor unbatchify(const Tensor& out, bool batched) { return batched ? out : out.squeeze(0); }

/// PyTorch's _convolution_same: padding d(k-1) in total per dimension, half on each side;
/// an odd total pads the input itself by one more zero at the end of that dimension.
Tensor convolution_same(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                        IntArrayRef dilation, int64_t groups) {
  const int64_t k = weight.dim();
  EMBER_CHECK(k > 2, "weight should have at least three dimensions");
  const int64_t dims = k - 2;
  EMBER_CHECK(k == input.dim(), "Expected ", k, "-dimensional input for ", k, "-dimensional weight", weight.sizes(),
              ", but got ", input.dim(), "-dimensional input of size ", input.sizes(), " instead");
  EMBER_CHECK(static_cast<int64_t>(stride.size()) == dims || stride.size() == 1, "stride cannot broadcast to ",
              dims, " dimensions");
  EMBER_CHECK(static_cast<int64_t>(dilation.size()) == dims || dilation.size() == 1,
              "dilation cannot broadcast to ", dims, " dimensions");
  for (int64_t s : stride) EMBER_CHECK(s == 1, "padding='same' is not supported for strided convolutions");
  DimVector left(static_cast<size_t>(dims), 0);
  Tensor x = input;
  for (int64_t i = 0; i < dims; ++i) {
    const int64_t d = dilation.size() == 1 ? dilation[0] : dilation[i];
    const int64_t total = d * (weight.size(i + 2) - 1);
    left[i] = total / 2;
    const int64_t extra = total - 2 * left[i];
    if (extra > 0) {  // one more zero at the end of this dimension
      DimVector zs(x.sizes());
      zs[i + 2] = extra;
      x = cat({x, zeros(zs, x.options())}, i + 2);
    }
  }
  return convolution(x, weight, bias, stride, left, dilation, false, 0, groups);
}

Tensor convolution_mode(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                        std::string_view padding, IntArrayRef dilation, int64_t groups) {
  if (padding == "valid") return convolution(input, weight, bias, stride, 0, dilation, false, 0, groups);
  EMBER_CHECK(padding == "same", "Invalid padding string: '", std::string(padding), "'");
  return convolution_same(input, weight, bias, stride, dilation, groups);
}

/// The checks PyTorch's 3-d CPU kernels (slow_conv3d, slow_conv_transpose3d) make, in
/// their words.
void check_kernel_args_3d(const Tensor& input, const Tensor& weight, const ConvParams& p) {
  const DimVector &st = p.stride, &dil = p.dilation, &op = p.output_padding;
  const char* kernel = p.transposed ? "slow_conv_transpose3d_out_cpu" : "slow_conv3d_cpu";
  if (!p.transposed) {
    EMBER_CHECK(dil[0] > 0 && dil[1] > 0 && dil[2] > 0, "dilation should be greater than zero, but got ",
                IntArrayRef(dil));
  } else {
    EMBER_CHECK(dil[0] > 0 && dil[1] > 0 && dil[2] > 0,
                "dilation should be greater than zero, but got dilation_depth: ", dil[0],
                ", dilation_height: ", dil[1], ", dilation_width: ", dil[2]);
    bool ok = true;
    for (size_t i = 0; i < 3; ++i) ok = ok && (op[i] < st[i] || op[i] < dil[i]);
    EMBER_CHECK(
        ok, "output padding must be smaller than either stride or dilation, but got output_padding_depth: ",
        op[0], " output_padding_height: ", op[1], " output_padding_width: ", op[2], " stride_depth: ", st[0],
        " stride_height: ", st[1], " stride_width: ", st[2], " dilation_depth: ", dil[0],
        " dilation_height: ", dil[1], " dilation_width: ", dil[2]);
  }
  const ScalarType t = input.dtype();
  if (input.is_cuda())
    EMBER_CHECK(is_floating_point(t), "getCudnnDataTypeFromScalarType() not supported for ",
                scalar_type_name(t));
  else
    EMBER_CHECK(t != kBool, "\"", kernel, "\" not implemented for '", scalar_type_name(t), "'");
  EMBER_CHECK(weight.dtype() == t, "expected scalar type ", scalar_type_name(t), " but found ",
              scalar_type_name(weight.dtype()));
  if (!p.transposed) return;
  DimVector out = output_sizes(input.sizes(), weight.sizes(), p);
  EMBER_CHECK(out[2] >= 1 && out[3] >= 1 && out[4] >= 1, "Given input size per channel: (", input.size(2),
              " x ", input.size(3), " x ", input.size(4), "). Calculated output size per channel: (", out[2],
              " x ", out[3], " x ", out[4], "). Output size is too small");
}

/// A 3-d convolution as one 2-d convolution: the depth windows are unfolded into the channel
/// dimension. Input (N, C, D, H, W) becomes (N * oD, C * KD, H, W), channel c * KD + kd
/// holding input depth od * sD - pD + kd * dD, and weight (O, C / g, KD, KH, KW) is read as
/// (O, C / g * KD, KH, KW), whose channel order matches group by group. It costs a copy of
/// the input KD / sD times its size; the arithmetic is that of a direct 3-d convolution.
Tensor conv3d_by_2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvParams& p) {
  const int64_t N = input.size(0), C = input.size(1), H = input.size(3), W = input.size(4);
  const int64_t O = weight.size(0), kD = weight.size(2);
  const int64_t sD = p.stride[0], pD = p.padding[0], dD = p.dilation[0];
  Tensor x = pD > 0 ? ember::pad(input, {0, 0, 0, 0, pD, pD}) : input;
  const int64_t span = dD * (kD - 1) + 1;
  const int64_t oD = (x.size(2) - span) / sD + 1;
  // (N, C, oD, H, W, span) -> every dD-th tap -> (N, oD, C, KD, H, W)
  Tensor windows = x.unfold(2, span, sD).slice(5, 0, std::nullopt, dD).permute({0, 2, 1, 5, 3, 4});
  Tensor x2 = windows.reshape({N * oD, C * kD, H, W});
  Tensor w2 = weight.reshape({O, weight.size(1) * kD, weight.size(3), weight.size(4)});
  ConvParams q;
  q.stride = DimVector{p.stride[1], p.stride[2]};
  q.padding = DimVector{p.padding[1], p.padding[2]};
  q.dilation = DimVector{p.dilation[1], p.dilation[2]};
  q.output_padding = DimVector{0, 0};
  q.groups = p.groups;
  check_kernel_args(x2, w2, q);
  Tensor y = run_convolution(x2, w2, Tensor(), q);  // (N * oD, O, oH, oW)
  y = y.view({N, oD, O, y.size(2), y.size(3)}).permute({0, 2, 1, 3, 4});
  if (bias.defined()) return y + bias.view({1, O, 1, 1, 1});
  return y.contiguous();
}

/// A transposed 3-d convolution as one transposed 2-d convolution and a depth overlap-add:
/// each input depth slice i goes through the 2-d transposed convolution with every depth tap
/// kd at once (weight (C, O / g, KD, KH, KW) read as (C, O / g * KD, KH, KW)), and tap kd's
/// result lands at output depth i * sD + kd * dD - pD. Costs KD times the output in
/// temporaries.
Tensor conv_transpose3d_by_2d(const Tensor& input, const Tensor& weight, const Tensor& bias,
                              const ConvParams& p) {
  const int64_t N = input.size(0), C = input.size(1), D = input.size(2), H = input.size(3), W = input.size(4);
  const int64_t kD = weight.size(2), O = weight.size(1) * p.groups;
  const int64_t sD = p.stride[0], pD = p.padding[0], dD = p.dilation[0], opD = p.output_padding[0];
  Tensor x2 = input.permute({0, 2, 1, 3, 4}).reshape({N * D, C, H, W});
  Tensor w2 = weight.reshape({C, weight.size(1) * kD, weight.size(3), weight.size(4)});
  ConvParams q;
  q.stride = DimVector{p.stride[1], p.stride[2]};
  q.padding = DimVector{p.padding[1], p.padding[2]};
  q.dilation = DimVector{p.dilation[1], p.dilation[2]};
  q.output_padding = DimVector{p.output_padding[1], p.output_padding[2]};
  q.groups = p.groups;
  q.transposed = true;
  check_kernel_args(x2, w2, q);
  Tensor y = run_convolution(x2, w2, Tensor(), q);  // (N * D, O * KD, oH, oW)
  const int64_t oH = y.size(2), oW = y.size(3);
  y = y.view({N, D, O, kD, oH, oW});
  // Spread the input depths sD apart: (N, (D - 1) * sD + 1, O, KD, oH, oW).
  if (sD > 1 && D > 1) {
    Tensor gap = zeros({N, D, sD - 1, O, kD, oH, oW}, y.options());
    y = cat({y.unsqueeze(2), gap}, 2).view({N, D * sD, O, kD, oH, oW}).narrow(1, 0, (D - 1) * sD + 1);
  }
  const int64_t spread = y.size(1);
  const int64_t full = (D - 1) * sD + dD * (kD - 1) + 1;
  const int64_t oD = full - 2 * pD + opD;
  const int64_t length = std::max(full, oD + pD);
  Tensor sum;
  for (int64_t kd = 0; kd < kD; ++kd) {
    const int64_t front = kd * dD, back = length - front - spread;
    Tensor tap = ember::pad(y.select(3, kd), {0, 0, 0, 0, 0, 0, front, back});
    sum = sum.defined() ? sum + tap : tap;
  }
  Tensor out = sum.narrow(1, pD, oD).permute({0, 2, 1, 3, 4});
  if (bias.defined()) return out + bias.view({1, O, 1, 1, 1});
  return out.contiguous();
}

}  // namespace

Tensor convolution(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                   IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                   int64_t groups) {
  // conv1d/conv2d/conv_transpose* all come here: their casts happen once, at this entry.
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(Convolution::kAutocast, &convolution, input, weight, bias, stride, padding, dilation,
                          transposed, output_padding, groups);
  EMBER_CHECK(!bias.defined() || bias.dtype() == input.dtype(), "Input type (", type_meta_name(input.dtype()),
              ") and bias type (", type_meta_name(bias.dtype()), ") should be the same");
  EMBER_CHECK(weight.dim() >= 3, "weight should have at least three dimensions");
  EMBER_CHECK(groups > 0, "non-positive groups is not supported");
  const int64_t dims = weight.dim() - 2;
  ConvParams p;
  p.stride = expand_param(stride, "stride", dims);
  p.padding = expand_param(padding, "padding", dims);
  p.dilation = expand_param(dilation, "dilation", dims);
  p.output_padding = expand_param(output_padding, "output_padding", dims);
  p.transposed = transposed;
  p.groups = groups;
  check_shape_forward(input, weight, bias, p);
  EMBER_CHECK(dims <= 3, "ember's convolution supports 1, 2 or 3 spatial dimensions, but got weight of size ",
              weight.sizes());
  if (dims == 3) {
    check_kernel_args_3d(input, weight, p);
    return p.transposed ? conv_transpose3d_by_2d(input, weight, bias, p)
                        : conv3d_by_2d(input, weight, bias, p);
  }
  check_kernel_args(input, weight, p);
  return run_convolution(input, weight, bias, p);
}

Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
              IntArrayRef dilation, int64_t groups) {
  auto [x, batched] = batchify(input, 1, "conv1d");
  return unbatchify(convolution(x, weight, bias, stride, padding, dilation, false, 0, groups), batched);
}

Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              detail::PaddingString padding, IntArrayRef dilation, int64_t groups) {
  auto [x, batched] = batchify(input, 1, "conv1d");
  return unbatchify(convolution_mode(x, weight, bias, stride, padding.view(), dilation, groups), batched);
}

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
              IntArrayRef dilation, int64_t groups) {
  auto [x, batched] = batchify(input, 2, "conv2d");
  return unbatchify(convolution(x, weight, bias, stride, padding, dilation, false, 0, groups), batched);
}

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              detail::PaddingString padding, IntArrayRef dilation, int64_t groups) {
  auto [x, batched] = batchify(input, 2, "conv2d");
  return unbatchify(convolution_mode(x, weight, bias, stride, padding.view(), dilation, groups), batched);
}

Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  auto [x, batched] = batchify(input, 3, "conv3d");
  return unbatchify(convolution(x, weight, bias, stride, padding, dilation, false, 0, groups), batched);
}

Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              detail::PaddingString padding, IntArrayRef dilation, int64_t groups) {
  auto [x, batched] = batchify(input, 3, "conv3d");
  return unbatchify(convolution_mode(x, weight, bias, stride, padding.view(), dilation, groups), batched);
}

Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {
  auto [x, batched] = batchify(input, 1, "conv_transpose1d");
  return unbatchify(convolution(x, weight, bias, stride, padding, dilation, true, output_padding, groups), batched);
}

Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {
  auto [x, batched] = batchify(input, 2, "conv_transpose2d");
  return unbatchify(convolution(x, weight, bias, stride, padding, dilation, true, output_padding, groups), batched);
}

Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                        IntArrayRef dilation) {
  auto [x, batched] = batchify(input, 3, "conv_transpose3d");
  return unbatchify(convolution(x, weight, bias, stride, padding, dilation, true, output_padding, groups),
                    batched);
}

}  // namespace ember
