// Losses. nll_loss is a real op: a gather kernel over (N, C, S) with its summed weights
// computed once, and a fused backward op (a scatter of -weight/total_weight) whose own
// backward is nll_loss again (the map input -> loss is linear, the backward is its
// transpose). cross_entropy is log_softmax + nll_loss as in PyTorch; the other losses are
// composites of public differentiable ops where PyTorch's are, and binary_cross_entropy is
// an elementwise op with PyTorch's clamped logs and epsilon-guarded gradient.
#include "ember/core/ops/loss.h"

#include <cmath>
#include <sstream>

#include "ember/autograd/grad_mode.h"
#include "ember/core/autocast.h"
#include "ember/core/op.h"
#include "ember/core/ops/binary.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/index.h"
#include "ember/core/ops/loss_math.h"
#include "ember/core/ops/reduce.h"
#include "ember/core/ops/softmax.h"
#include "ember/core/ops/unary.h"
#include "ember/core/cpu/loops.h"
#include "ember/core/ops/compare.h"
#include "ember/core/ops/ternary.h"
#include "ember/core/shape.h"
#include "ember/core/tensor_iter.h"
#include "ember/core/type_promotion.h"
#include "ember/cuda/loss.h"

namespace ember {
namespace {

Tensor dense(const Tensor& t) { return t.is_contiguous() ? t : t.detach().contiguous(); }

// ---- nll_loss ---------------------------------------------------------------------------------

/// The input viewed as (N, C, S): S is the product of the trailing dims (1 for 1-d/2-d).
struct NllGeom {
  int64_t n = 1, c = 1, s = 1;
};

NllGeom nll_geom(IntArrayRef sizes) {
  if (sizes.size() == 1) return {1, sizes[0], 1};
  NllGeom g{sizes[0], sizes[1], 1};
  for (size_t i = 2; i < sizes.size(); ++i) g.s *= sizes[i];
  return g;
}

/// What an nll_loss call reads besides its input, shared by the forward and backward ops.
struct NllSpec {
  Tensor target;  // dense int64, N * S values, bounds already checked
  Tensor weight;  // dense, C values of the input's dtype; undefined means all ones
  int64_t reduction = Reduction::Mean;
  int64_t ignore_index = -100;
  double total_weight = 0;  // mean's divisor: summed weights of the non-ignored targets
  DimVector out_sizes;      // the target's shape for reduction none, else []
  DimVector in_sizes;
};

// out = -sum_k w[t_k] x[n_k, t_k, s_k] (/ total_weight for mean), or per element for none.
template <class T>
void nll_forward_kernel(const T* x, const NllSpec& sp, NllGeom g, T* out) {
  using M = opmath_t<T>;
  const int64_t* t = sp.target.data_ptr<int64_t>();
  const T* w = sp.weight.defined() ? sp.weight.data_ptr<T>() : nullptr;
  int64_t ii = sp.ignore_index, count = g.n * g.s;
  auto term = [=](int64_t k) -> M {
    return nll_term<M>(
        k, t[k], g.c, g.s, ii, w != nullptr, [x](int64_t off) { return static_cast<M>(x[off]); },
        [w](int64_t c) { return static_cast<M>(w[c]); });
  };
  if (sp.reduction == Reduction::None) {
    parallel_for(count, kGrainSize, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) out[k] = static_cast<T>(term(k));
    });
    return;
  }
  // One thread, in order: the sum does not depend on the thread count (N * S is small next
  // to the log_softmax that precedes this).
  double acc = 0;
  for (int64_t k = 0; k < count; ++k) acc += static_cast<double>(term(k));
  if (sp.reduction == Reduction::Mean) acc /= sp.total_weight;  // 0 / 0 = NaN: all ignored
  out[0] = static_cast<T>(acc);
}

// gx[n, t, s] = -w[t] * g(n, s) (/ total_weight for mean); zero elsewhere and for ignored
// targets. Each target writes its own position, so the loop parallelises safely.
template <class T>
void nll_backward_kernel(const T* go, const NllSpec& sp, NllGeom g, T* gx) {
  using M = opmath_t<T>;
  const int64_t* t = sp.target.data_ptr<int64_t>();
  const T* w = sp.weight.defined() ? sp.weight.data_ptr<T>() : nullptr;
  int64_t ii = sp.ignore_index, count = g.n * g.s;
  bool per_element = sp.reduction == Reduction::None;
  M scale = sp.reduction == Reduction::Mean ? static_cast<M>(1.0 / sp.total_weight) : M(1);
  std::fill(gx, gx + g.n * g.c * g.s, T(0));
  parallel_for(count, kGrainSize, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      int64_t tk = t[k];
      if (tk == ii) continue;
      M wk = w ? static_cast<M>(w[tk]) : M(1);
      M gk = static_cast<M>(go[per_element ? k : 0]);
      gx[nll_offset(k, g.c, g.s, tk)] = static_cast<T>(nll_grad(wk, gk, scale));
    }
  });
}

const char* nll_kernel_name(int64_t dim) { return dim == 4 ? "nll_loss2d_forward_out_frame" : "nll_loss_out_frame"; }

cuda::NllShape cuda_shape(IntArrayRef sizes) {
  NllGeom g = nll_geom(sizes);
  return {g.n, g.c, g.s};
}

Tensor run_nll_backward(const NllSpec& sp, const Tensor& grad);

// nll_loss: the gather above. Backward: the scatter op below (input -> loss is linear).
struct NllLoss final : UnaryOp {
  static constexpr AutocastPolicies kAutocast = autocast::kFloat32Both;
  NllSpec sp;
  explicit NllLoss(NllSpec s) : sp(std::move(s)) {}
  const char* name() const override { return "nll_loss"; }
  Save saves() const override { return Save::kNothing; }
  void cpu(const Tensor& x, Tensor& out) const override {
    if (out.numel() == 0) return;
    Tensor xd = dense(x);
    visit_float_dtype(x.dtype(), nll_kernel_name(x.dim()), [&]<typename T>() {
      nll_forward_kernel<T>(xd.data_ptr<T>(), sp, nll_geom(x.sizes()), out.data_ptr<T>());
    });
  }
  void cuda(const Tensor& x, Tensor& out) const override {
    cuda::nll_loss_forward(dense(x), sp.target, sp.weight, cuda_shape(x.sizes()), sp.reduction, sp.ignore_index,
                           sp.total_weight, out);
  }
  Tensor backward(const SavedTensors&, const Tensor& g) const override { return run_nll_backward(sp, g); }
};

// nll_loss_backward: the gradient of nll_loss as a function of grad_output. It is linear in
// grad_output with the transposed map, so its backward is nll_loss of the incoming gradient
// with the same targets, weights and total weight.
struct NllLossBackward final : UnaryOp {
  NllSpec sp;
  explicit NllLossBackward(NllSpec s) : sp(std::move(s)) {}
  const char* name() const override { return "nll_loss_backward"; }
  Save saves() const override { return Save::kNothing; }
  void cpu(const Tensor& go, Tensor& gx) const override {
    if (gx.numel() == 0) return;
    Tensor god = dense(go);
    visit_float_dtype(gx.dtype(), "nll_loss_backward_out_frame", [&]<typename T>() {
      nll_backward_kernel<T>(god.data_ptr<T>(), sp, nll_geom(sp.in_sizes), gx.data_ptr<T>());
    });
  }
  void cuda(const Tensor& go, Tensor& gx) const override {
    cuda::nll_loss_backward(dense(go), sp.target, sp.weight, cuda_shape(sp.in_sizes), sp.reduction, sp.ignore_index,
                            sp.total_weight, gx);
  }
  Tensor backward(const SavedTensors&, const Tensor& gg) const override {
    return run_op(NllLoss{sp}, {gg}, OutSpec{sp.out_sizes, gg.dtype()});
  }
};

Tensor run_nll_backward(const NllSpec& sp, const Tensor& grad) {
  return run_op(NllLossBackward{sp}, {grad}, OutSpec{sp.in_sizes, grad.dtype()});
}

/// PyTorch's shape checks of nll_loss_nd, nll_loss and nll_loss2d, in their order.
void check_nll_shapes(const Tensor& input, const Tensor& target) {
  int64_t dim = input.dim();
  EMBER_CHECK(dim >= 1, "Expected 1 or more dimensions (got ", dim, ")");
  if (dim != 1) {
    int64_t tb = target.dim() == 0 ? 0 : target.size(0);
    EMBER_CHECK(input.size(0) == tb, "Expected input batch_size (", input.size(0), ") to match target batch_size (",
                tb, ").");
  }
  if (dim <= 2) {
    EMBER_CHECK(target.dim() <= 1, "0D or 1D target tensor expected, multi-target not supported");
    bool no_batch_dim = dim == 1 && target.dim() == 0;
    EMBER_CHECK(no_batch_dim || input.size(0) == target.size(0), "size mismatch (got input: ", input.sizes(),
                ", target: ", target.sizes(), ")");
  } else if (dim == 4) {
    EMBER_CHECK(target.dim() == 3, "only batches of spatial targets supported (3D tensors) but got targets of dimension: ",
                target.dim());
    EMBER_CHECK(target.size(1) == input.size(2) && target.size(2) == input.size(3),
                "size mismatch (got input: ", input.sizes(), " , target: ", target.sizes());
  } else {
    DimVector expected{input.size(0)};
    for (int64_t i = 2; i < dim; ++i) expected.push_back(input.size(i));
    EMBER_CHECK(target.sizes().equals(IntArrayRef(expected)), "Expected target size ", IntArrayRef(expected),
                ", got ", target.sizes());
  }
}

/// Bounds-checks the targets and sums the weights of the counted ones (mean's divisor).
template <class T>
double check_targets(const Tensor& target, const Tensor& weight, int64_t n_classes, int64_t ignore_index) {
  const int64_t* t = target.data_ptr<int64_t>();
  const T* w = weight.defined() ? weight.data_ptr<T>() : nullptr;
  double total = 0;
  for (int64_t k = 0; k < target.numel(); ++k) {
    if (t[k] == ignore_index) continue;
    EMBER_CHECK(t[k] >= 0 && t[k] < n_classes, "Target ", t[k], " is out of bounds.");
    total += w ? static_cast<double>(w[t[k]]) : 1.0;
  }
  return total;
}

/// check_targets for CUDA targets: the check and the sum run on the device (one host
/// synchronisation), so no kernel ever reads outside the input. The error names the first
/// offending target, as the CPU's loop does.
double check_targets_cuda(const Tensor& target, const Tensor& weight, int64_t n_classes, int64_t ignore_index) {
  cuda::NllStats st = cuda::nll_target_stats(target, weight, n_classes, ignore_index);
  if (st.first_bad != cuda::kNoBadTarget) {
    int64_t bad = target.reshape({-1}).select(0, st.first_bad).item<int64_t>();
    detail::throw_error(detail::str_cat("Target ", bad, " is out of bounds."));
  }
  return st.total_weight;
}

void check_weight(const Tensor& weight, int64_t n_classes, const char* prefix) {
  EMBER_CHECK(weight.dim() == 1 && weight.numel() == n_classes, prefix,
              "weight tensor should be defined either for all ", n_classes,
              " classes or no classes but got weight tensor of shape: ", weight.sizes());
}

Tensor defined_or_empty(const std::optional<Tensor>& t) { return t ? *t : Tensor(); }

// ---- cross_entropy ----------------------------------------------------------------------------

/// weight shaped to broadcast along the class dim: (C) for 1-d input, (1, C, 1, ...) else.
Tensor class_weight_view(const Tensor& weight, int64_t input_dim, int64_t class_dim) {
  if (input_dim <= 1) return weight;
  DimVector shape(input_dim, 1);
  shape[class_dim] = weight.size(0);
  return weight.view(shape);
}

// Class-probability targets: -sum_c w_c t_c log_softmax(x)_c per sample; mean divides by the
// number of samples (numel / C), as PyTorch's cross_entropy_loss_prob_target.
Tensor cross_entropy_prob_target(const Tensor& input, const Tensor& target_in, const Tensor& weight,
                                 int64_t reduction, double label_smoothing) {
  int64_t class_dim = input.dim() == 1 ? 0 : 1;
  int64_t n_classes = input.size(class_dim);
  if (weight.defined()) check_weight(weight, n_classes, "cross_entropy: ");
  Tensor logp = log_softmax(input, class_dim, input.dtype());
  Tensor target = target_in;
  if (label_smoothing > 0.0) target = target_in * (1 - label_smoothing) + label_smoothing / n_classes;
  Tensor prod = logp * target;
  if (weight.defined()) prod = prod * class_weight_view(weight, input.dim(), class_dim);
  switch (reduction) {
    case Reduction::None: return -prod.sum({class_dim});
    case Reduction::Sum: return -prod.sum();
    default:
      if (input.numel() == 0) return -prod.sum() * std::nan("");
      return -prod.sum() / static_cast<double>(input.numel() / n_classes);
  }
}

// Class-index targets with label smoothing (PyTorch's cross_entropy_loss_label_smoothing):
//   (1 - ls) * nll + ls / C * smooth, smooth = -sum_c w_c log_softmax(x)_c per counted sample;
// mean divides smooth's sum by the summed weights of the counted targets (their count
// without weights), matching nll_loss's divisor.
Tensor cross_entropy_label_smoothing(const Tensor& input, const Tensor& target, const Tensor& weight,
                                     int64_t reduction, int64_t ignore_index, double ls) {
  int64_t class_dim = input.dim() == 1 ? 0 : 1;
  Tensor logp = log_softmax(input, class_dim, input.dtype());
  Tensor nll = nll_loss_nd(logp, target, weight, reduction, ignore_index);
  int64_t n_classes = logp.size(class_dim);
  Tensor ignore_mask = target.eq(ignore_index);
  Tensor smooth = weight.defined() ? -(logp * class_weight_view(weight, input.dim(), class_dim)).sum({class_dim})
                                   : -logp.sum({class_dim});
  smooth = smooth.masked_fill(ignore_mask, 0.0);
  Tensor ret;
  switch (reduction) {
    case Reduction::None: ret = smooth; break;
    case Reduction::Sum: ret = smooth.sum(); break;
    default:
      if (weight.defined())
        ret = smooth.sum() / weight.gather(0, target.masked_select(~ignore_mask).flatten()).sum();
      else
        ret = smooth.sum() / (~ignore_mask).sum();
  }
  return nll * (1 - ls) + ret * (ls / n_classes);
}

void check_reduction(int64_t reduction) {
  EMBER_CHECK(reduction >= Reduction::None && reduction < Reduction::END, reduction,
              " is not a valid value for reduction");
}

// ---- binary_cross_entropy ---------------------------------------------------------------------

// Elementwise: l = (t - 1) max(log(1 - x), -100) - t max(log x, -100).
//   dl/dx = (x - t) / max(x (1 - x), 1e-12)   (PyTorch's binary_cross_entropy_backward)
//   dl/dt = log(1 - x) - log x                (= -logit(x), its target backward)
struct BinaryCrossEntropy final : Op {
  static constexpr AutocastPolicies kAutocast{AutocastPolicy::kFloat32, AutocastPolicy::kNone};
  const char* name() const override { return "binary_cross_entropy"; }
  bool elementwise() const override { return true; }
  void cpu(const TensorList& in, TensorList& out) const override {
    TensorIter iter(out[0], {in[0], in[1]});
    visit_float_dtype(out[0].dtype(), "binary_cross_entropy", [&]<typename T>() {
      using M = opmath_t<T>;
      cpu::cpu_map<T, T, T>(iter, [](T xv, T tv) {
        return static_cast<T>(BinaryCrossEntropyFn{}(static_cast<M>(xv), static_cast<M>(tv)));
      });
    });
  }
  void cuda(const TensorList& in, TensorList& out) const override { cuda::binary_cross_entropy(in[0], in[1], out[0]); }
  TensorList backward(const SavedTensors& s, const TensorList& g) const override {
    Tensor x = s.input(0), t = s.input(1), gx, gt;
    if (s.needs_grad(0)) gx = g[0] * (x - t) / ((1 - x) * x).clamp_min(1e-12);
    if (s.needs_grad(1)) gt = g[0] * ((-x).log1p() - x.log());
    return {gx, gt};
  }
};

}  // namespace

namespace detail {

Tensor apply_loss_reduction(const Tensor& loss, int64_t reduction) {
  if (reduction == Reduction::Mean) return loss.mean();
  if (reduction == Reduction::Sum) return loss.sum();
  return loss;
}

std::string torch_size_str(IntArrayRef sizes) {
  std::ostringstream os;
  os << "torch.Size(" << sizes << ")";
  return os.str();
}

}  // namespace detail

// ---- public: nll_loss / cross_entropy ---------------------------------------------------------

Tensor nll_loss_nd(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight_opt,
                   int64_t reduction, int64_t ignore_index) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(NllLoss::kAutocast, &nll_loss_nd, input, target, weight_opt, reduction, ignore_index);
  check_reduction(reduction);
  check_nll_shapes(input, target);
  EMBER_CHECK(target.dtype() == kLong, "expected scalar type Long but found ", scalar_type_name(target.dtype()));
  EMBER_CHECK(input.is_floating_point(), "\"", nll_kernel_name(input.dim()), "\" not implemented for '",
              scalar_type_name(input.dtype()), "'");
  Tensor weight = defined_or_empty(weight_opt);
  // The targets and weights travel in the op, not as inputs: check their devices here.
  detail::check_same_device({input, target, weight}, "nll_loss");
  int64_t n_classes = input.dim() == 1 ? input.size(0) : input.size(1);
  NllSpec sp;
  if (weight.defined()) {
    check_weight(weight, n_classes, "");
    EMBER_CHECK(weight.dtype() == input.dtype(), "expected scalar type ", scalar_type_name(input.dtype()),
                " but found ", scalar_type_name(weight.dtype()));
    EMBER_CHECK(!(GradMode::is_enabled() && weight.requires_grad()),
                "The function 'nll_loss_forward' is not differentiable with respect to argument 'weight'. "
                "This input cannot have requires_grad True.");
    sp.weight = dense(weight.detach());
  }
  sp.target = dense(target.detach());
  sp.reduction = reduction;
  sp.ignore_index = ignore_index;
  sp.total_weight = visit_float_dtype(input.dtype(), nll_kernel_name(input.dim()), [&]<typename T>() {
    if (input.is_cuda()) return check_targets_cuda(sp.target, sp.weight, n_classes, ignore_index);
    return check_targets<T>(sp.target, sp.weight, n_classes, ignore_index);
  });
  if (reduction == Reduction::None) sp.out_sizes = DimVector(target.sizes());
  sp.in_sizes = DimVector(input.sizes());
  DimVector out_sizes = sp.out_sizes;
  return run_op(NllLoss{std::move(sp)}, {input}, OutSpec{out_sizes, input.dtype()});
}

Tensor nll_loss(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight, int64_t reduction,
                int64_t ignore_index) {
  return nll_loss_nd(input, target, weight, reduction, ignore_index);
}

Tensor cross_entropy_loss(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight_opt,
                          int64_t reduction, int64_t ignore_index, double label_smoothing) {
  // The losses below are compositions: each is on both autocast float32 lists as a whole.
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(autocast::kFloat32Both, &cross_entropy_loss, input, target, weight_opt, reduction, ignore_index, label_smoothing);
  check_reduction(reduction);
  Tensor weight = defined_or_empty(weight_opt);
  if (input.sizes().equals(target.sizes())) {
    // A target of the input's shape holds class probabilities.
    EMBER_CHECK(target.is_floating_point(), "Expected floating point type for target with class probabilities, got ",
                scalar_type_name(target.dtype()));
    EMBER_CHECK(ignore_index < 0, "ignore_index is not supported for floating point target");
    EMBER_CHECK(label_smoothing >= 0.0 && label_smoothing <= 1.0,
                "label_smoothing must be between 0.0 and 1.0. Got: ", label_smoothing);
    return cross_entropy_prob_target(input, target, weight, reduction, label_smoothing);
  }
  if (label_smoothing > 0.0) {
    EMBER_CHECK(label_smoothing <= 1.0, "label_smoothing must be between 0.0 and 1.0. Got: ", label_smoothing);
    return cross_entropy_label_smoothing(input, target, weight, reduction, ignore_index, label_smoothing);
  }
  int64_t class_dim = input.dim() == 1 ? 0 : 1;
  return nll_loss_nd(log_softmax(input, class_dim, input.dtype()), target, weight, reduction, ignore_index);
}

// ---- public: regression losses ----------------------------------------------------------------

namespace {
/// PyTorch's regression losses compute in a floating dtype; integer operands raise the
/// kernel's "not implemented" error.
void check_float_operands(const Tensor& input, const Tensor& target, const char* kernel) {
  ScalarType t = result_type(input, target);
  EMBER_CHECK(is_floating_point(t), "\"", kernel, "\" not implemented for '", scalar_type_name(t), "'");
}
}  // namespace

Tensor mse_loss(const Tensor& input, const Tensor& target, int64_t reduction) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(autocast::kFloat32Both, &mse_loss, input, target, reduction);
  check_reduction(reduction);
  check_float_operands(input, target, "mse_cpu");
  Tensor d = input - target;
  return detail::apply_loss_reduction(d * d, reduction);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, int64_t reduction) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(autocast::kFloat32Both, &l1_loss, input, target, reduction);
  check_reduction(reduction);
  return detail::apply_loss_reduction((input - target).abs(), reduction);
}

// Gradient: d inside [-delta, delta], delta * sign(d) outside (PyTorch's huber_loss_backward).
Tensor huber_loss(const Tensor& input, const Tensor& target, int64_t reduction, double delta) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(autocast::kFloat32Both, &huber_loss, input, target, reduction, delta);
  check_reduction(reduction);
  EMBER_CHECK(delta > 0, "huber_loss does not support non-positive values for delta.");
  check_float_operands(input, target, "huber_cpu");
  Tensor d = input - target, z = d.abs();
  Tensor loss = where(z.lt(delta), d * d * 0.5, (z - 0.5 * delta) * delta);
  return detail::apply_loss_reduction(loss, reduction);
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, int64_t reduction, double beta) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(autocast::kFloat32Both, &smooth_l1_loss, input, target, reduction, beta);
  check_reduction(reduction);
  EMBER_CHECK(beta >= 0, "smooth_l1_loss does not support negative values for beta.");
  if (beta == 0.0) return l1_loss(input, target, reduction);
  check_float_operands(input, target, "smooth_l1_cpu");
  Tensor d = input - target, z = d.abs();
  Tensor loss = where(z.lt(beta), d * d * (0.5 / beta), z - 0.5 * beta);
  return detail::apply_loss_reduction(loss, reduction);
}

// ---- public: binary and KL losses -------------------------------------------------------------

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                            int64_t reduction) {
  if (autocast::is_active()) [[unlikely]] {
    // CPU autocast runs it in float32; CUDA autocast refuses it (PyTorch's banned list).
    EMBER_CHECK(!(input.is_cuda() && autocast::is_autocast_enabled(kCUDA)),
                "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
                "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
                "In this case, combine the two layers using torch.nn.functional.binary_cross_entropy_with_logits\n"
                "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
                "safe to autocast.");
    return autocast::call(BinaryCrossEntropy::kAutocast, &binary_cross_entropy, input, target, weight, reduction);
  }
  check_reduction(reduction);
  EMBER_CHECK(target.sizes().equals(input.sizes()), "Using a target size (", detail::torch_size_str(target.sizes()),
              ") that is different to the input size (", detail::torch_size_str(input.sizes()),
              ") is deprecated. Please ensure they have the same size.");
  EMBER_CHECK(target.dtype() == input.dtype(), "Found dtype ", scalar_type_name(target.dtype()), " but expected ",
              scalar_type_name(input.dtype()));
  EMBER_CHECK(input.is_floating_point(), "\"binary_cross_entropy\" not implemented for '",
              scalar_type_name(input.dtype()), "'");
  {
    NoGradGuard no_grad;
    EMBER_CHECK(logical_and(input.ge(0), input.le(1)).all().item<bool>(),
                "all elements of input should be between 0 and 1");
  }
  Tensor loss = run_op(BinaryCrossEntropy{}, {input, target}, OutSpec{DimVector(input.sizes()), input.dtype()});
  if (weight && weight->defined()) loss = loss * *weight;
  return detail::apply_loss_reduction(loss, reduction);
}

// PyTorch's stable form: with m = max(-x, 0),
//   l = (1 - t) x + lw (log(e^{-m} + e^{-x-m}) + m),  lw = 1 + (pos_weight - 1) t,
// where log(e^{-m} + e^{-x-m}) + m = log(1 + e^{-x}) never overflows.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const std::optional<Tensor>& weight,
                                        const std::optional<Tensor>& pos_weight, int64_t reduction) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(autocast::kFloat32Both, &binary_cross_entropy_with_logits, input, target, weight, pos_weight, reduction);
  check_reduction(reduction);
  EMBER_CHECK(target.sizes().equals(input.sizes()), "Target size (", detail::torch_size_str(target.sizes()),
              ") must be the same as input size (", detail::torch_size_str(input.sizes()), ")");
  Tensor max_val = (-input).clamp_min(0);
  Tensor log_sig = ((-max_val).exp() + (-input - max_val).exp()).log() + max_val;  // log(1 + e^{-x})
  Tensor loss;
  if (pos_weight && pos_weight->defined()) {
    Tensor log_weight = (*pos_weight - 1) * target + 1;
    loss = (1 - target) * input + log_weight * log_sig;
  } else {
    loss = (1 - target) * input + log_sig;
  }
  if (weight && weight->defined()) loss = loss * *weight;
  return detail::apply_loss_reduction(loss, reduction);
}

// Pointwise: e^t (t - x) for log targets, else xlogy(t, t) - t x (0 where t = 0).
Tensor kl_div(const Tensor& input, const Tensor& target, int64_t reduction, bool log_target) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(autocast::kFloat32Both, &kl_div, input, target, reduction, log_target);
  check_reduction(reduction);
  Tensor loss;
  if (log_target) {
    loss = target.exp() * (target - input);
  } else {
    // xlogy(t, t) with a gradient that stays finite at t = 0 (log of a safe stand-in there).
    Tensor zero = target.eq(0);
    Tensor safe = where(zero, ones_like(target), target);
    loss = where(zero, zeros_like(target), target * safe.log()) - target * input;
  }
  return detail::apply_loss_reduction(loss, reduction);
}

}  // namespace ember
