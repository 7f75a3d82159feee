// Dropout layers (libtorch's torch/nn/modules/dropout.h): Dropout, Dropout1d/2d/3d (whole
// channels), AlphaDropout, FeatureAlphaDropout. Active only in training mode (is_training()).
#pragma once

#include <ostream>

#include "ember/core/tensor.h"
#include "ember/nn/cloneable.h"
#include "ember/nn/functional/dropout.h"
#include "ember/nn/module_holder.h"
#include "ember/nn/options/dropout.h"

namespace ember {
namespace nn {

/// What every dropout layer shares: options and the check of p; Python's repr
/// "<Name>(p=0.5, inplace=False)".
template <class Derived>
class DropoutImplBase : public Cloneable<Derived> {
 public:
  explicit DropoutImplBase(const DropoutOptions& options_) : options(options_) { reset(); }
  void reset() override {
    EMBER_CHECK(options.p() >= 0 && options.p() <= 1,
                "dropout probability has to be between 0 and 1, but got ", options.p());
  }
  void pretty_print(std::ostream& stream) const override {
    stream << this->name() << "(p=" << python_float(options.p())
           << ", inplace=" << (options.inplace() ? "True" : "False") << ")";
  }

  DropoutOptions options;
};

#define EMBER_DROPOUT_LAYER(Name)                                                           \
  class Name##Impl : public DropoutImplBase<Name##Impl> {                                   \
   public:                                                                                  \
    explicit Name##Impl(double p) : DropoutImplBase(DropoutOptions(p)) {}                   \
    explicit Name##Impl(const DropoutOptions& options_ = {}) : DropoutImplBase(options_) {} \
    Tensor forward(Tensor input);                                                           \
  };                                                                                        \
  EMBER_MODULE(Name)

/// Zeroes elements with probability p and scales the rest by 1 / (1 - p).
EMBER_DROPOUT_LAYER(Dropout);
/// Zeroes whole channels of (N, C, L) or (C, L) inputs.
EMBER_DROPOUT_LAYER(Dropout1d);
/// Zeroes whole channels of (N, C, H, W) or (C, H, W) inputs.
EMBER_DROPOUT_LAYER(Dropout2d);
/// Zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) inputs.
EMBER_DROPOUT_LAYER(Dropout3d);
/// Dropout that keeps SELU activations at zero mean and unit variance.
EMBER_DROPOUT_LAYER(AlphaDropout);
/// Alpha dropout of whole channels.
EMBER_DROPOUT_LAYER(FeatureAlphaDropout);

#undef EMBER_DROPOUT_LAYER

}  // namespace nn
}  // namespace ember
