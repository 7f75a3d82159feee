// BatchNorm1d/2d/3d: parameters, running-statistics buffers, and the training/evaluation
// choice of PyTorch's _BatchNorm.forward.
#include "ember/nn/modules/batchnorm.h"

#include "ember/autograd/grad_mode.h"
#include "ember/core/ops/creation.h"

namespace ember {
namespace nn {

template <size_t D, class Derived>
void BatchNormImplBase<D, Derived>::reset() {
  int64_t c = options.num_features();
  if (options.affine()) {
    weight = this->register_parameter("weight", ember::empty({c}));
    bias = this->register_parameter("bias", ember::empty({c}));
  } else {
    weight = this->register_parameter("weight", Tensor(), /*requires_grad=*/false);
    bias = this->register_parameter("bias", Tensor(), /*requires_grad=*/false);
  }
  if (options.track_running_stats()) {
    running_mean = this->register_buffer("running_mean", ember::zeros({c}));
    running_var = this->register_buffer("running_var", ember::ones({c}));
    num_batches_tracked = this->register_buffer("num_batches_tracked", ember::tensor(int64_t{0}, kLong));
  } else {
    running_mean = this->register_buffer("running_mean", Tensor());
    running_var = this->register_buffer("running_var", Tensor());
    num_batches_tracked = this->register_buffer("num_batches_tracked", Tensor());
  }
  reset_parameters();
}

template <size_t D, class Derived>
void BatchNormImplBase<D, Derived>::reset_running_stats() {
  if (!options.track_running_stats()) return;
  NoGradGuard no_grad;
  running_mean.zero_();
  running_var.fill_(1);
  num_batches_tracked.zero_();
}

template <size_t D, class Derived>
void BatchNormImplBase<D, Derived>::reset_parameters() {
  reset_running_stats();
  if (!options.affine()) return;
  NoGradGuard no_grad;
  weight.fill_(1);
  bias.zero_();
}

template <size_t D, class Derived>
Tensor BatchNormImplBase<D, Derived>::forward(const Tensor& input) {
  check_input_dim(input);
  // momentum = None means a cumulative average: batch k gets weight 1/k.
  double factor = options.momentum().value_or(0.0);
  if (this->is_training() && options.track_running_stats()) {
    NoGradGuard no_grad;
    num_batches_tracked.add_(1);
    if (!options.momentum()) factor = 1.0 / num_batches_tracked.template item<double>();
  }
  bool use_batch_stats = this->is_training() || !options.track_running_stats();
  return functional::batch_norm(input, running_mean, running_var,
                                functional::BatchNormFuncOptions()
                                    .weight(weight)
                                    .bias(bias)
                                    .training(use_batch_stats)
                                    .momentum(factor)
                                    .eps(options.eps()));
}

template <size_t D, class Derived>
void BatchNormImplBase<D, Derived>::pretty_print(std::ostream& stream) const {
  stream << "BatchNorm" << D << "d(" << options.num_features() << ", eps=" << python_float(options.eps())
         << ", momentum=" << (options.momentum() ? python_float(*options.momentum()) : "None")
         << ", affine=" << (options.affine() ? "True" : "False")
         << ", track_running_stats=" << (options.track_running_stats() ? "True" : "False") << ")";
}

void BatchNorm1dImpl::check_input_dim(const Tensor& input) const {
  EMBER_CHECK(input.dim() == 2 || input.dim() == 3, "expected 2D or 3D input (got ", input.dim(), "D input)");
}

void BatchNorm2dImpl::check_input_dim(const Tensor& input) const {
  EMBER_CHECK(input.dim() == 4, "expected 4D input (got ", input.dim(), "D input)");
}

void BatchNorm3dImpl::check_input_dim(const Tensor& input) const {
  EMBER_CHECK(input.dim() == 5, "expected 5D input (got ", input.dim(), "D input)");
}

template class BatchNormImplBase<1, BatchNorm1dImpl>;
template class BatchNormImplBase<2, BatchNorm2dImpl>;
template class BatchNormImplBase<3, BatchNorm3dImpl>;

}  // namespace nn
}  // namespace ember
