// Fold and Unfold (libtorch's torch/nn/modules/fold.h): col2im and im2col as layers without
// parameters, printed as PyTorch's repr.
#pragma once

#include <ostream>

#include "ember/core/tensor.h"
#include "ember/nn/cloneable.h"
#include "ember/nn/functional/fold.h"
#include "ember/nn/module_holder.h"
#include "ember/nn/options/fold.h"

namespace ember {
namespace nn {

/// Sums columns of sliding blocks back into an image (the adjoint of Unfold).
class FoldImpl : public Cloneable<FoldImpl> {
 public:
  FoldImpl(ExpandingArray<2> output_size, ExpandingArray<2> kernel_size)
      : FoldImpl(FoldOptions(output_size, kernel_size)) {}
  explicit FoldImpl(const FoldOptions& options_) : options(options_) {}
  void reset() override {}
  /// Python's repr: "Fold(output_size=(4, 5), kernel_size=2, dilation=1, padding=0, stride=1)".
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);

  FoldOptions options;
};
EMBER_MODULE(Fold);

/// Extracts the sliding blocks of an image as columns.
class UnfoldImpl : public Cloneable<UnfoldImpl> {
 public:
  UnfoldImpl(ExpandingArray<2> kernel_size) : UnfoldImpl(UnfoldOptions(kernel_size)) {}
  explicit UnfoldImpl(const UnfoldOptions& options_) : options(options_) {}
  void reset() override {}
  /// Python's repr: "Unfold(kernel_size=(2, 3), dilation=(1, 2), padding=1, stride=2)".
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);

  UnfoldOptions options;
};
EMBER_MODULE(Unfold);

}  // namespace nn
}  // namespace ember
