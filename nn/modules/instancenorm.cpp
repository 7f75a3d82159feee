// InstanceNorm1d/2d/3d: parameters, running-statistics buffers, and the choice of PyTorch's
// _InstanceNorm.forward (instance statistics unless evaluating with tracked running ones).
#include "ember/nn/modules/instancenorm.h"

#include "ember/autograd/grad_mode.h"
#include "ember/core/ops/creation.h"

namespace ember {
namespace nn {

template <size_t D, class Derived>
void InstanceNormImpl<D, Derived>::reset() {
  const int64_t c = options.num_features();
  const bool affine = options.affine(), track = options.track_running_stats();
  weight = this->register_parameter("weight", affine ? ember::empty({c}) : Tensor(), affine);
  bias = this->register_parameter("bias", affine ? ember::empty({c}) : Tensor(), affine);
  running_mean = this->register_buffer("running_mean", track ? ember::zeros({c}) : Tensor());
  running_var = this->register_buffer("running_var", track ? ember::ones({c}) : Tensor());
  num_batches_tracked =
      this->register_buffer("num_batches_tracked", track ? ember::tensor(int64_t{0}, kLong) : Tensor());
  reset_parameters();
}

template <size_t D, class Derived>
void InstanceNormImpl<D, Derived>::reset_running_stats() {
  if (!options.track_running_stats()) return;
  NoGradGuard no_grad;
  running_mean.zero_();
  running_var.fill_(1);
  num_batches_tracked.zero_();
}

template <size_t D, class Derived>
void InstanceNormImpl<D, Derived>::reset_parameters() {
  reset_running_stats();
  if (!options.affine()) return;
  NoGradGuard no_grad;
  weight.fill_(1);
  bias.zero_();
}

template <size_t D, class Derived>
Tensor InstanceNormImpl<D, Derived>::forward(const Tensor& input) {
  check_input_dim(input);
  const bool unbatched = input.dim() == static_cast<int64_t>(D) + 1;
  const int64_t feature_dim = unbatched ? 0 : 1;
  // Python raises only with affine (the weight would not fit); without, it merely warns.
  EMBER_CHECK(!options.affine() || input.size(feature_dim) == options.num_features(),
              "expected input's size at dim=", feature_dim, " to match num_features (",
              options.num_features(), "), but got: ", input.size(feature_dim), ".");
  const Tensor x = unbatched ? input.unsqueeze(0) : input;
  Tensor out =
      functional::instance_norm(x, functional::InstanceNormFuncOptions()
                                       .running_mean(running_mean)
                                       .running_var(running_var)
                                       .weight(weight)
                                       .bias(bias)
                                       .use_input_stats(this->is_training() || !options.track_running_stats())
                                       .momentum(options.momentum())
                                       .eps(options.eps()));
  return unbatched ? out.squeeze(0) : out;
}

template <size_t D, class Derived>
void InstanceNormImpl<D, Derived>::pretty_print(std::ostream& stream) const {
  stream << "InstanceNorm" << D << "d(" << options.num_features() << ", eps=" << python_float(options.eps())
         << ", momentum=" << python_float(options.momentum())
         << ", affine=" << (options.affine() ? "True" : "False")
         << ", track_running_stats=" << (options.track_running_stats() ? "True" : "False") << ")";
}

void InstanceNorm1dImpl::check_input_dim(const Tensor& input) const {
  EMBER_CHECK(input.dim() == 2 || input.dim() == 3, "expected 2D or 3D input (got ", input.dim(), "D input)");
}

void InstanceNorm2dImpl::check_input_dim(const Tensor& input) const {
  EMBER_CHECK(input.dim() == 3 || input.dim() == 4, "expected 3D or 4D input (got ", input.dim(), "D input)");
}

void InstanceNorm3dImpl::check_input_dim(const Tensor& input) const {
  EMBER_CHECK(input.dim() == 4 || input.dim() == 5, "expected 4D or 5D input (got ", input.dim(), "D input)");
}

template class InstanceNormImpl<1, InstanceNorm1dImpl>;
template class InstanceNormImpl<2, InstanceNorm2dImpl>;
template class InstanceNormImpl<3, InstanceNorm3dImpl>;

}  // namespace nn
}  // namespace ember
