// torch.nn.utils: gradient clipping and flattening parameters into one vector.
#include "ember/nn/utils.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ember/autograd/grad_mode.h"
#include "ember/core/error.h"
#include "ember/core/ops/shape.h"
#include "ember/nn/module.h"

namespace ember {
namespace nn {
namespace utils {

double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  NoGradGuard no_grad;
  std::vector<Tensor> grads;
  for (const Tensor& p : parameters)
    if (p.grad().defined()) grads.push_back(p.grad());
  if (grads.empty()) return 0.0;
  // Total norm = norm of the per-gradient norms (max of maxima for the inf norm).
  double total = 0;
  if (std::isinf(norm_type)) {
    for (const Tensor& g : grads) total = std::max(total, g.abs().max().item<double>());
  } else {
    for (const Tensor& g : grads) total += std::pow(g.norm(norm_type).item<double>(), norm_type);
    total = std::pow(total, 1.0 / norm_type);
  }
  EMBER_CHECK(!error_if_nonfinite || std::isfinite(total), "The total norm of order ", python_float(norm_type),
              " for gradients from `parameters` is non-finite, so it cannot be clipped. To disable this error "
              "and scale the gradients by the non-finite norm anyway, set `error_if_nonfinite=False`");
  const double clip_coef = std::min(max_norm / (total + 1e-6), 1.0);
  // As PyTorch, the clamped coefficient is applied even when it is 1 (a no-op multiply).
  for (Tensor& g : grads) g.mul_(clip_coef);
  return total;
}

double clip_grad_norm_(const Tensor& parameter, double max_norm, double norm_type, bool error_if_nonfinite) {
  return clip_grad_norm_(std::vector<Tensor>{parameter}, max_norm, norm_type, error_if_nonfinite);
}

void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value) {
  NoGradGuard no_grad;
  for (const Tensor& p : parameters) {
    Tensor g = p.grad();
    if (g.defined()) g.clamp_(-clip_value, clip_value);
  }
}

void clip_grad_value_(const Tensor& parameter, double clip_value) {
  clip_grad_value_(std::vector<Tensor>{parameter}, clip_value);
}

Tensor parameters_to_vector(const std::vector<Tensor>& parameters) {
  std::vector<Tensor> flat;
  flat.reserve(parameters.size());
  for (const Tensor& p : parameters) {
    EMBER_CHECK(p.device() == parameters.front().device(),
                "Found two parameters on different devices, this is currently not supported.");
    flat.push_back(p.reshape({-1}));
  }
  return ember::cat(flat);
}

void vector_to_parameters(const Tensor& vec, const std::vector<Tensor>& parameters) {
  EMBER_CHECK(vec.defined(), "expected torch.Tensor, but got: undefined tensor");
  int64_t total = 0;
  for (const Tensor& p : parameters) total += p.numel();
  EMBER_CHECK(vec.dim() == 1 && vec.numel() == total, "vector_to_parameters: expected a 1-d vector of ", total,
              " elements, got shape ", vec.sizes());
  int64_t pointer = 0;
  for (const Tensor& p : parameters) {
    EMBER_CHECK(p.device() == vec.device(),
                "Found two parameters on different devices, this is currently not supported.");
    const int64_t n = p.numel();
    // As PyTorch's `param.data = vec[pointer:pointer + n].view_as(param).data`.
    p.set_data(vec.detach().slice(0, pointer, pointer + n).view(p.sizes()));
    pointer += n;
  }
}

}  // namespace utils
}  // namespace nn
}  // namespace ember
