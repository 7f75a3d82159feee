// Gradient clipping and parameter <-> vector conversion (torch.nn.utils).
#pragma once

#include <vector>

#include "ember/core/tensor.h"

namespace ember {
namespace nn {
namespace utils {

/// Scales all gradients so their joint norm_type-norm (inf allowed) is at most max_norm;
/// returns the norm before clipping. error_if_nonfinite: a nan/inf total norm is an error.
double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);
double clip_grad_norm_(const Tensor& parameter, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);
/// Clamps every gradient element into [-clip_value, clip_value].
void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value);
void clip_grad_value_(const Tensor& parameter, double clip_value);
/// All parameters flattened and concatenated into one 1-d tensor.
Tensor parameters_to_vector(const std::vector<Tensor>& parameters);
/// Copies slices of vec into the parameters, in order.
void vector_to_parameters(const Tensor& vec, const std::vector<Tensor>& parameters);

}  // namespace utils
}  // namespace nn
}  // namespace ember
