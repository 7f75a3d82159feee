// Options of Fold / Unfold and of F::fold / F::unfold, as libtorch spells them:
// FoldOptions({4, 5}, 2).stride(1), UnfoldOptions({2, 3}).dilation(2).padding(1).
#pragma once

#include <cstdint>

#include "ember/core/arg.h"

namespace ember {
namespace nn {

/// Fold(output_size, kernel_size): columns of blocks summed back into an output_size image.
struct FoldOptions {
  FoldOptions(ExpandingArray<2> output_size, ExpandingArray<2> kernel_size)
      : output_size_(output_size), kernel_size_(kernel_size) {}
  /// The spatial size (H, W) of the image.
  EMBER_ARG(ExpandingArray<2>, output_size);
  EMBER_ARG(ExpandingArray<2>, kernel_size);
  EMBER_ARG(ExpandingArray<2>, dilation) = 1;
  EMBER_ARG(ExpandingArray<2>, padding) = 0;
  EMBER_ARG(ExpandingArray<2>, stride) = 1;
};

/// Unfold(kernel_size): the sliding blocks of an image as columns.
struct UnfoldOptions {
  /*implicit*/ UnfoldOptions(ExpandingArray<2> kernel_size) : kernel_size_(kernel_size) {}
  EMBER_ARG(ExpandingArray<2>, kernel_size);
  EMBER_ARG(ExpandingArray<2>, dilation) = 1;
  EMBER_ARG(ExpandingArray<2>, padding) = 0;
  EMBER_ARG(ExpandingArray<2>, stride) = 1;
};

namespace functional {
using FoldFuncOptions = FoldOptions;
using UnfoldFuncOptions = UnfoldOptions;
}  // namespace functional

}  // namespace nn
}  // namespace ember
