// instance_norm as ATen composes it: the input viewed as (1, N * C, *) so each instance is a
// channel of batch_norm, the per-channel tensors repeated N times, and the N copies of the
// updated running statistics averaged back into the caller's C-element buffers.
#include "ember/core/ops/instance_norm.h"

#include <vector>

#include "ember/autograd/grad_mode.h"
#include "ember/core/ops/normalization.h"

namespace ember {

namespace {

std::optional<Tensor> repeated(const std::optional<Tensor>& t, int64_t n) {
  if (!t || !t->defined()) return std::nullopt;
  return t->repeat({n});
}

bool given(const std::optional<Tensor>& t) { return t && t->defined(); }

}  // namespace

Tensor instance_norm(const Tensor& input, const std::optional<Tensor>& weight,
                     const std::optional<Tensor>& bias, const std::optional<Tensor>& running_mean,
                     const std::optional<Tensor>& running_var, bool use_input_stats, double momentum,
                     double eps, bool cudnn_enabled) {
  EMBER_CHECK(use_input_stats || (given(running_mean) && given(running_var)),
              "Expected running_mean and running_var to be defined when use_input_stats is false");
  EMBER_CHECK(input.dim() >= 2, "instance_norm: expected an (N, C, *) input, but got ", input.dim(),
              "-d input");
  const int64_t n = input.size(0), c = input.size(1);
  std::vector<int64_t> shape{1, n * c};
  for (int64_t d = 2; d < input.dim(); ++d) shape.push_back(input.size(d));
  std::optional<Tensor> mean_n = repeated(running_mean, n), var_n = repeated(running_var, n);
  Tensor out = batch_norm(input.contiguous().view(shape), repeated(weight, n), repeated(bias, n), mean_n,
                          var_n, use_input_stats, momentum, eps, cudnn_enabled);
  if (use_input_stats) {
    NoGradGuard no_grad;
    // Tensor is a handle: a copy writes into the caller's buffer.
    if (mean_n) Tensor(*running_mean).copy_(mean_n->view({n, c}).mean(std::vector<int64_t>{0}));
    if (var_n) Tensor(*running_var).copy_(var_n->view({n, c}).mean(std::vector<int64_t>{0}));
  }
  return out.view(input.sizes());
}

}  // namespace ember
