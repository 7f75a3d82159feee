// Dropout layers: each forward is its functional form with the module's training flag.
#include "ember/nn/modules/dropout.h"

namespace ember {
namespace nn {

namespace F = functional;

Tensor DropoutImpl::forward(Tensor input) {
  return F::dropout(
      std::move(input),
      F::DropoutFuncOptions().p(options.p()).inplace(options.inplace()).training(is_training()));
}

Tensor Dropout1dImpl::forward(Tensor input) {
  return F::dropout1d(
      std::move(input),
      F::Dropout1dFuncOptions().p(options.p()).inplace(options.inplace()).training(is_training()));
}

Tensor Dropout2dImpl::forward(Tensor input) {
  return F::dropout2d(
      std::move(input),
      F::Dropout2dFuncOptions().p(options.p()).inplace(options.inplace()).training(is_training()));
}

Tensor Dropout3dImpl::forward(Tensor input) {
  return F::dropout3d(
      std::move(input),
      F::Dropout3dFuncOptions().p(options.p()).inplace(options.inplace()).training(is_training()));
}

Tensor AlphaDropoutImpl::forward(Tensor input) {
  return F::alpha_dropout(
      std::move(input),
      F::AlphaDropoutFuncOptions().p(options.p()).inplace(options.inplace()).training(is_training()));
}

Tensor FeatureAlphaDropoutImpl::forward(Tensor input) {
  return F::feature_alpha_dropout(
      std::move(input),
      F::FeatureAlphaDropoutFuncOptions().p(options.p()).inplace(options.inplace()).training(is_training()));
}

}  // namespace nn
}  // namespace ember
