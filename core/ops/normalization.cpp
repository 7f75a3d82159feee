// batch_norm, layer_norm, group_norm: input checks with PyTorch's messages, the running
// statistics update, and one op struct per norm whose forward and backward call the fused
// kernels of core/cpu/normalization.cpp, or their CUDA twins (cuda/normalization.h) for
// CUDA tensors. The float64 statistics live on the input's device.
#include "ember/core/ops/normalization.h"

#include <tuple>

#include "ember/autograd/grad_mode.h"
#include "ember/core/autocast.h"
#include "ember/core/cpu/normalization.h"
#include "ember/core/op.h"
#include "ember/core/ops/binary.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/reduce.h"
#include "ember/core/ops/unary.h"
#include "ember/core/shape.h"
#include "ember/cuda/normalization.h"

namespace ember {
namespace {

/// How the composite formulas see a norm: the input reshaped to `view`, statistics reduced
/// over `stat_dims` (and shaped `stat_view`), the affine parameters shaped `affine_view`
/// with their gradients summed over `affine_dims` and returned as `affine_shape`.
struct NormGeom {
  DimVector view, stat_dims, stat_view, affine_view, affine_dims, affine_shape;
};

/// Note [Fused and composite normalization backward]
/// A first-order backward (GradMode off inside the engine) runs the fused kernels. Under
/// create_graph the engine turns GradMode on and the gradients must themselves be
/// differentiable, so backward is written with public ops instead, recomputing the batch
/// statistics from x so that their dependence on x reaches the second derivative:
///   xhat = (x - mean) rstd,  gh = go w,
///   gi = rstd (gh - mean(gh) - xhat mean(gh xhat))   (statistics of this batch)
///   gi = rstd gh                                     (fixed running statistics)
///   gw = sum(go xhat),  gb = sum(go).
std::tuple<Tensor, Tensor, Tensor> composite_backward(const NormGeom& G, const Tensor& x_in, const Tensor& w,
                                                      const Tensor& go_in, bool batch_stats,
                                                      const Tensor& mean, const Tensor& rstd, double eps,
                                                      bool need_x, bool need_w, bool need_b) {
  Tensor x = x_in.reshape(G.view), go = go_in.reshape(G.view);
  Tensor mu, rs;
  if (batch_stats) {
    mu = x.mean(G.stat_dims, true);
    rs = (x.var(G.stat_dims, /*unbiased=*/false, /*keepdim=*/true) + eps).rsqrt();
  } else {
    mu = mean.to(x.dtype()).view(G.stat_view);
    rs = rstd.to(x.dtype()).view(G.stat_view);
  }
  Tensor xhat = (x - mu) * rs;
  Tensor gi, gw, gb;
  if (need_x) {
    Tensor gh = w.defined() ? go * w.reshape(G.affine_view) : go;
    gi = batch_stats ? (gh - gh.mean(G.stat_dims, true) - xhat * (gh * xhat).mean(G.stat_dims, true)) * rs
                     : gh * rs;
    gi = gi.reshape(x_in.sizes());
  }
  if (need_w) gw = (go * xhat).sum(G.affine_dims).reshape(G.affine_shape);
  if (need_b) gb = go.sum(G.affine_dims).reshape(G.affine_shape);
  return {gi, gw, gb};
}

/// What batch, layer and group norm share: inputs {x, weight?, bias?} (x contiguous), the
/// float64 statistics the forward used, and the backward dispatch of the Note above.
struct NormOp : Op {
  Tensor mean, rstd;
  bool has_w = false, has_b = false, batch_stats = true;
  double eps = 0;
  NormGeom geom;

  Save saves() const override { return Save::kInputs; }
  Tensor weight_of(const TensorList& in) const { return has_w ? in[1] : Tensor(); }
  Tensor bias_of(const TensorList& in) const { return has_b ? in[has_w ? 2 : 1] : Tensor(); }

  /// gi, gw, gb into the given (allocated or undefined) tensors with the fused kernel.
  virtual void fused_backward(const Tensor& go, const Tensor& x, const Tensor& w, Tensor& gi, Tensor& gw,
                              Tensor& gb) const = 0;

  TensorList backward(const SavedTensors& s, const TensorList& grads) const override {
    Tensor x = s.input(0), w = has_w ? s.input(1) : Tensor();
    bool need_x = s.needs_grad(0), need_w = has_w && s.needs_grad(1);
    bool need_b = has_b && s.needs_grad(has_w ? 2 : 1);
    Tensor gi, gw, gb;
    if (GradMode::is_enabled()) {
      std::tie(gi, gw, gb) =
          composite_backward(geom, x, w, grads[0], batch_stats, mean, rstd, eps, need_x, need_w, need_b);
    } else {
      if (need_x) gi = empty_like(x);
      if (need_w) gw = empty(geom.affine_shape, x.options());
      if (need_b) gb = empty(geom.affine_shape, x.options());
      fused_backward(grads[0].contiguous(), x, w, gi, gw, gb);
    }
    TensorList out{gi};
    if (has_w) out.push_back(gw);
    if (has_b) out.push_back(gb);
    return out;
  }
};

// batch_norm: y = (x - mean_c) rstd_c w_c + b_c over channel c = dim 1; backward in
// cpu::batch_norm_backward (fused) or composite_backward (create_graph).
struct BatchNorm final : NormOp {
  cpu::ChannelGeom g;
  const char* name() const override { return "native_batch_norm"; }
  void cpu(const TensorList& in, TensorList& out) const override {
    cpu::batch_norm_apply(in[0], mean, rstd, weight_of(in), bias_of(in), g, out[0]);
  }
  void cuda(const TensorList& in, TensorList& out) const override {
    cuda::batch_norm_apply(in[0], mean, rstd, weight_of(in), bias_of(in), g, out[0]);
  }
  void fused_backward(const Tensor& go, const Tensor& x, const Tensor& w, Tensor& gi, Tensor& gw,
                      Tensor& gb) const override {
    if (x.is_cuda()) cuda::batch_norm_backward(go, x, mean, rstd, w, batch_stats, g, gi, gw, gb);
    else cpu::batch_norm_backward(go, x, mean, rstd, w, batch_stats, g, gi, gw, gb);
  }
};

// layer_norm and group_norm: y = (x - mean_r) rstd_r w_k + b_k over rows r (see
// cpu::RowGeom); backward in cpu::row_norm_backward or composite_backward.
struct RowNorm final : NormOp {
  // layer_norm and group_norm run in float32 under CUDA autocast; CPU autocast leaves them.
  static constexpr AutocastPolicies kAutocast = autocast::kFloat32CudaOnly;
  cpu::RowGeom g;
  const char* op_name;
  bool stats_in_forward = false;  // mean and rstd are filled by the forward (one pass per row)
  explicit RowNorm(const char* n) : op_name(n) {}
  const char* name() const override { return op_name; }
  void cpu(const TensorList& in, TensorList& out) const override {
    if (stats_in_forward) {
      Tensor m = mean, r = rstd;  // handles to the op's statistics buffers
      cpu::row_norm_forward(in[0], eps, weight_of(in), bias_of(in), g, m, r, out[0]);
      return;
    }
    cpu::row_norm_apply(in[0], mean, rstd, weight_of(in), bias_of(in), g, out[0]);
  }
  void cuda(const TensorList& in, TensorList& out) const override {
    if (stats_in_forward) cuda::row_norm_forward(in[0], eps, weight_of(in), bias_of(in), g, mean, rstd, out[0]);
    else cuda::row_norm_apply(in[0], mean, rstd, weight_of(in), bias_of(in), g, out[0]);
  }
  void fused_backward(const Tensor& go, const Tensor& x, const Tensor& w, Tensor& gi, Tensor& gw,
                      Tensor& gb) const override {
    if (x.is_cuda()) cuda::row_norm_backward(go, x, mean, rstd, w, g, gi, gw, gb);
    else cpu::row_norm_backward(go, x, mean, rstd, w, g, gi, gw, gb);
  }
};

/// group_norm of an input with no elements (a zero-size batch or spatial dimension): the
/// empty output through the affine broadcast, so weight and bias still get their (zero)
/// gradients; the row kernels, which divide a row among its channels, never see S == 0.
Tensor empty_group_norm(const Tensor& x, const Tensor& w, const Tensor& b) {
  DimVector channel_view(static_cast<size_t>(x.dim()), 1);
  channel_view[1] = x.size(1);
  Tensor y = x.clone();
  if (w.defined()) y = y * w.view(channel_view);
  if (b.defined()) y = y + b.view(channel_view);
  return y;
}

/// The defined parameter, contiguous and in the input's dtype (undefined if absent).
Tensor param_like(const std::optional<Tensor>& p, const Tensor& input) {
  if (!p || !p->defined()) return {};
  return p->to(input.dtype()).contiguous();
}

/// Sets the parameter flags and input list shared by every norm; runs the op.
template <class OpT>
Tensor run_norm(OpT op, const Tensor& x, const Tensor& w, const Tensor& b) {
  op.has_w = w.defined();
  op.has_b = b.defined();
  TensorList in{x};
  if (w.defined()) in.push_back(w);
  if (b.defined()) in.push_back(b);
  return run_op(std::move(op), in, OutSpec{DimVector(x.sizes()), x.dtype()});
}

void check_features(const char* what, const std::optional<Tensor>& t, int64_t c) {
  if (t && t->defined())
    EMBER_CHECK(t->numel() == c, what, " should contain ", c, " elements not ", t->numel());
}

/// The float64 statistics of x, on x's device.
Tensor stat_buffer(int64_t n, const Tensor& x) { return empty({n}, x.options().dtype(kDouble)); }

/// Each row's mean and rstd, on x's device.
void row_stats(const Tensor& x, const cpu::RowGeom& g, double eps, Tensor& mean, Tensor& rstd) {
  if (x.is_cuda()) cuda::row_norm_stats(x, g, eps, mean, rstd);
  else cpu::row_norm_stats(x, g, eps, mean, rstd);
}

/// The running statistics are read and updated with the input's device kernels.
void check_running_device(const std::optional<Tensor>& running, const Tensor& input) {
  if (running && running->defined())
    EMBER_CHECK(running->device() == input.device(),
                "Expected all tensors to be on the same device, but found at least two devices, ", input.device(),
                " and ", running->device(), "!");
}

/// running = (1 - momentum) running + momentum stat, in place and unrecorded.
void update_running(const std::optional<Tensor>& running, const Tensor& stat, double momentum) {
  if (!running || !running->defined()) return;
  NoGradGuard no_grad;
  Tensor r = *running;
  r.mul_(1 - momentum).add_(stat.to(r.dtype()).view(r.sizes()), momentum);
}

}  // namespace

Tensor batch_norm(const Tensor& input, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                  const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
                  bool training, double momentum, double eps, bool /*cudnn_enabled*/) {
  EMBER_CHECK(input.dim() >= 2, "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
  int64_t C = input.size(1);
  check_features("running_mean", running_mean, C);
  check_features("running_var", running_var, C);
  check_features("weight", weight, C);
  check_features("bias", bias, C);
  bool has_running = running_mean && running_mean->defined() && running_var && running_var->defined();
  EMBER_CHECK(training || has_running, "running_mean and running_var must be defined in evaluation mode");
  check_running_device(running_mean, input);
  check_running_device(running_var, input);
  Tensor w = param_like(weight, input), b = param_like(bias, input);
  // As PyTorch: an empty batch gives an empty result that still depends on the parameters.
  if (input.numel() == 0) {
    Tensor out = input.clone();
    if (w.defined()) out = out * w[0];
    if (b.defined()) out = out + b[0];
    return out;
  }
  Tensor x = input.contiguous();
  cpu::ChannelGeom g{x.size(0), C, x.numel() / (x.size(0) * C)};
  BatchNorm op;
  op.g = g;
  op.eps = eps;
  op.batch_stats = training;
  if (training) {
    Tensor mean = stat_buffer(C, x), var = stat_buffer(C, x);
    if (x.is_cuda()) cuda::batch_norm_stats(x, g, mean, var);
    else cpu::batch_norm_stats(x, g, mean, var);
    double n = static_cast<double>(g.N * g.S);
    update_running(running_mean, mean, momentum);
    update_running(running_var, var * (n / (n - 1)), momentum);  // unbiased, as PyTorch
    op.mean = mean;
    op.rstd = (var + eps).rsqrt();
  } else {
    op.mean = running_mean->detach().to(kDouble).contiguous();
    op.rstd = (running_var->detach().to(kDouble) + eps).rsqrt().contiguous();
  }
  op.geom = NormGeom{{g.N, C, g.S}, {0, 2}, {1, C, 1}, {1, C, 1}, {0, 2}, {C}};
  return run_norm(std::move(op), x, w, b);
}

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps, bool cudnn_enable) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(RowNorm::kAutocast, &layer_norm, input, normalized_shape, weight, bias, eps, cudnn_enable);
  int64_t nd = static_cast<int64_t>(normalized_shape.size());
  EMBER_CHECK(nd >= 1,
              "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
              "element, but got normalized_shape = ",
              normalized_shape);
  if (weight && weight->defined())
    EMBER_CHECK(weight->sizes().equals(normalized_shape),
                "Expected weight to be of same shape as normalized_shape, "
                "but got weight of shape ",
                weight->sizes(), " and normalized_shape = ", normalized_shape);
  if (bias && bias->defined())
    EMBER_CHECK(bias->sizes().equals(normalized_shape),
                "Expected bias to be of same shape as normalized_shape, "
                "but got bias of shape ",
                bias->sizes(), " and normalized_shape = ", normalized_shape);
  bool ok = input.dim() >= nd && input.sizes().slice(input.dim() - nd).equals(normalized_shape);
  if (!ok) {
    std::string expected = "[*";
    for (int64_t s : normalized_shape) expected += detail::str_cat(", ", s);
    detail::throw_error(detail::str_cat("Given normalized_shape=", normalized_shape,
                                        ", expected input with shape ", expected, "], but got input of size",
                                        input.sizes()));
  }
  EMBER_CHECK(input.is_floating_point(), "\"LayerNormKernelImpl\" not implemented for '",
              scalar_type_name(input.dtype()), "'");
  Tensor x = input.contiguous();
  int64_t D = prod_of(normalized_shape), M = D ? x.numel() / D : prod_of(x.sizes().slice(0, x.dim() - nd));
  cpu::RowGeom g{M, D, 1, 1};
  RowNorm op("native_layer_norm");
  op.g = g;
  op.eps = eps;
  op.mean = stat_buffer(M, x);
  op.rstd = stat_buffer(M, x);
  // With elements to normalize, the forward kernel computes the statistics row by row.
  if (x.numel() > 0) op.stats_in_forward = true;
  else row_stats(x, g, eps, op.mean, op.rstd);
  op.geom = NormGeom{{M, D}, {1}, {M, 1}, {1, D}, {0}, DimVector(normalized_shape)};
  return run_norm(std::move(op), x, param_like(weight, input), param_like(bias, input));
}

Tensor group_norm(const Tensor& input, int64_t num_groups, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps, bool cudnn_enabled) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(RowNorm::kAutocast, &group_norm, input, num_groups, weight, bias, eps, cudnn_enabled);
  EMBER_CHECK(input.dim() >= 2, "Expected at least 2 dimensions for input tensor but received ", input.dim());
  EMBER_CHECK(num_groups > 0, "Expected num groups to be greater than 0, got ", num_groups);
  int64_t N = input.size(0), C = input.size(1);
  EMBER_CHECK(C % num_groups == 0,
              "Expected number of channels in input to be divisible by num_groups, but got "
              "input of shape ",
              input.sizes(), " and num_groups=", num_groups);
  for (auto [p, what] : {std::pair{&weight, "weight"}, std::pair{&bias, "bias"}})
    if (*p && (*p)->defined())
      EMBER_CHECK((*p)->dim() == 1 && (*p)->numel() == C, "Expected ", what,
                  " to be a vector of size equal to the "
                  "number of channels in input, but got ",
                  what, " of shape ", (*p)->sizes(), " and input of shape ", input.sizes());
  EMBER_CHECK(input.is_floating_point(), "\"GroupNormKernelImpl\" not implemented for '",
              scalar_type_name(input.dtype()), "'");
  Tensor x = input.contiguous();
  if (x.numel() == 0) return empty_group_norm(x, param_like(weight, input), param_like(bias, input));
  int64_t G = num_groups, S = prod_of(x.sizes().slice(2)), Cg = C / G;
  cpu::RowGeom g{N * G, Cg * S, G, S};
  RowNorm op("native_group_norm");
  op.g = g;
  op.eps = eps;
  op.mean = stat_buffer(N * G, x);
  op.rstd = stat_buffer(N * G, x);
  row_stats(x, g, eps, op.mean, op.rstd);
  op.geom = NormGeom{{N, G, Cg, S}, {2, 3}, {N, G, 1, 1}, {1, G, Cg, 1}, {0, 3}, {C}};
  return run_norm(std::move(op), x, param_like(weight, input), param_like(bias, input));
}

}  // namespace ember
