// Dropout with ATen's signatures: elementwise (dropout), whole channels (feature_dropout, the
// op behind Dropout2d/3d) and the SELU-preserving alpha variants. The mask comes from ember's
// generator, so manual_seed makes it repeatable; backward multiplies by the same mask.
#pragma once

#include "ember/core/tensor.h"

namespace ember {

/// Zeroes each element with probability p and scales the rest by 1 / (1 - p) when `train`;
/// otherwise returns input itself.
Tensor dropout(const Tensor& input, double p, bool train);
Tensor& dropout_(Tensor& input, double p, bool train);
/// As dropout, but zeroes whole channels: one draw per (sample, channel) of an (N, C, *) input.
Tensor feature_dropout(const Tensor& input, double p, bool train);
Tensor& feature_dropout_(Tensor& input, double p, bool train);
/// Alpha dropout (for SELU networks): dropped elements take SELU's negative saturation value
/// and an affine correction keeps zero mean and unit variance.
Tensor alpha_dropout(const Tensor& input, double p, bool train);
Tensor& alpha_dropout_(Tensor& input, double p, bool train);
Tensor feature_alpha_dropout(const Tensor& input, double p, bool train);
Tensor& feature_alpha_dropout_(Tensor& input, double p, bool train);

}  // namespace ember
