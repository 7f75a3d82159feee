// Dropout is composite in PyTorch too: a noise tensor (a Bernoulli(1 - p) mask, scaled) times
// the input. The product is an ordinary recorded mul, whose backward multiplies the gradient
// by the same saved noise, so forward and backward always agree on which elements dropped.
#include "ember/core/ops/dropout.h"

#include <cmath>

#include "ember/core/ops/binary.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/random_internal.h"

namespace ember {
namespace {

/// Noise of shape (N, C, 1, ..., 1): one value per channel, broadcast over the rest.
Tensor feature_noise(const Tensor& input) {
  EMBER_CHECK(input.dim() >= 2, "Feature dropout requires at least 2 dimensions in the input");
  DimVector sizes(input.dim(), 1);
  sizes[0] = input.size(0);
  sizes[1] = input.size(1);
  return empty(sizes, input.options());
}

/// 1 / q as PyTorch's noise.div_(q) gives it in dtype t (div_ by a Scalar keeps q in opmath
/// for Half and BFloat16 and rounds the quotient once); computed on the CPU, no device sync.
double inverse_in_dtype(ScalarType t, double q) {
  return ones({}, TensorOptions().dtype(t)).div_(q).item<double>();
}

/// input * noise (+ b for alpha dropout), in place or not.
Tensor dropout_impl(Tensor& input, double p, bool train, bool feature, bool alpha, bool inplace) {
  EMBER_CHECK(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
  if (p == 0 || !train || input.numel() == 0) return input;
  if (p == 1) {  // every element dropped: multiply by zero so the result stays in the graph
    Tensor zero = zeros({}, input.options());
    return inplace ? input.mul_(zero) : input * zero;
  }
  Tensor noise = feature ? feature_noise(input) : empty_like(input);
  if (!alpha) {
    // noise = bernoulli(1 - p) / (1 - p), drawn and scaled in one pass where the sampler can
    // (the same mask as bernoulli_, so CPU and CUDA agree for a seed); 1 / (1 - p) is
    // rounded to the noise's dtype, as dividing the mask would. CUDA keeps the two-op
    // form; mask * scale is exact, so both devices hold the same noise.
    const double scale = inverse_in_dtype(noise.scalar_type(), 1 - p);
    if (noise.is_cuda())
      noise.bernoulli_(1 - p).mul_(scale);
    else
      detail::bernoulli_scaled_(noise, 1 - p, scale);
    return inplace ? input.mul_(noise) : input * noise;
  }
  noise.bernoulli_(1 - p);
  // SELU's negative saturation -alpha' = -scale * alpha; kept elements are scaled by a and
  // everything shifted by b so that mean 0 / variance 1 inputs stay so (PyTorch's constants).
  constexpr double kAlpha = 1.7580993408473766;
  double a = 1.0 / std::sqrt((kAlpha * kAlpha * p + 1) * (1 - p));
  Tensor b = (noise - 1) * (kAlpha * a) + kAlpha * a * p;
  noise.mul_(a);
  return inplace ? input.mul_(noise).add_(b) : input * noise + b;
}

}  // namespace

Tensor dropout(const Tensor& input, double p, bool train) {
  Tensor x = input;
  return dropout_impl(x, p, train, false, false, false);
}
Tensor& dropout_(Tensor& input, double p, bool train) {
  dropout_impl(input, p, train, false, false, true);
  return input;
}
Tensor feature_dropout(const Tensor& input, double p, bool train) {
  Tensor x = input;
  return dropout_impl(x, p, train, true, false, false);
}
Tensor& feature_dropout_(Tensor& input, double p, bool train) {
  dropout_impl(input, p, train, true, false, true);
  return input;
}
Tensor alpha_dropout(const Tensor& input, double p, bool train) {
  Tensor x = input;
  return dropout_impl(x, p, train, false, true, false);
}
Tensor& alpha_dropout_(Tensor& input, double p, bool train) {
  dropout_impl(input, p, train, false, true, true);
  return input;
}
Tensor feature_alpha_dropout(const Tensor& input, double p, bool train) {
  Tensor x = input;
  return dropout_impl(x, p, train, true, true, false);
}
Tensor& feature_alpha_dropout_(Tensor& input, double p, bool train) {
  dropout_impl(input, p, train, true, true, true);
  return input;
}

}  // namespace ember
