// Parameter initialisation (torch.nn.init / libtorch's torch::nn::init): every function fills
// its tensor in place without recording autograd history and returns it.
#pragma once

#include <cstdint>
#include <tuple>
#include <variant>

#include "ember/core/scalar.h"
#include "ember/core/tensor.h"
#include "ember/nn/enums.h"

namespace ember {
namespace nn {
namespace init {

using NonlinearityType =
    std::variant<enumtype::kLinear, enumtype::kConv1D, enumtype::kConv2D, enumtype::kConv3D,
                 enumtype::kConvTranspose1D, enumtype::kConvTranspose2D, enumtype::kConvTranspose3D,
                 enumtype::kSigmoid, enumtype::kTanh, enumtype::kReLU, enumtype::kLeakyReLU, enumtype::kSELU>;
using FanModeType = std::variant<enumtype::kFanIn, enumtype::kFanOut>;

/// The recommended gain for a nonlinearity: 1 (linear, conv, sigmoid), 5/3 (tanh), sqrt(2)
/// (relu), sqrt(2 / (1 + param^2)) (leaky_relu, param = negative slope), 3/4 (selu).
double calculate_gain(NonlinearityType nonlinearity, double param = 0.01);

/// (fan_in, fan_out) = (size(1) * receptive field, size(0) * receptive field).
std::tuple<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor);
/// libtorch's spelling.
inline std::tuple<int64_t, int64_t> _calculate_fan_in_and_fan_out(const Tensor& tensor) {
  return calculate_fan_in_and_fan_out(tensor);
}

Tensor uniform_(Tensor tensor, double low = 0, double high = 1);
Tensor normal_(Tensor tensor, double mean = 0, double std = 1);
Tensor constant_(Tensor tensor, Scalar value);
Tensor zeros_(Tensor tensor);
Tensor ones_(Tensor tensor);
/// Identity matrix into a 2-d tensor.
Tensor eye_(Tensor matrix);
/// Dirac delta into a 3-, 4- or 5-d conv weight (identity-preserving convolution).
Tensor dirac_(Tensor tensor, int64_t groups = 1);
/// U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out)).
Tensor xavier_uniform_(Tensor tensor, double gain = 1.0);
/// N(0, std^2), std = gain * sqrt(2 / (fan_in + fan_out)).
Tensor xavier_normal_(Tensor tensor, double gain = 1.0);
/// U(-b, b), b = gain(nonlinearity, a) * sqrt(3 / fan(mode)).
Tensor kaiming_uniform_(Tensor tensor, double a = 0, FanModeType mode = kFanIn,
                        NonlinearityType nonlinearity = kLeakyReLU);
/// N(0, std^2), std = gain(nonlinearity, a) / sqrt(fan(mode)).
Tensor kaiming_normal_(Tensor tensor, double a = 0, FanModeType mode = kFanIn,
                       NonlinearityType nonlinearity = kLeakyReLU);
/// A (semi-)orthogonal matrix (of the tensor flattened to [size(0), rest]) times gain.
Tensor orthogonal_(Tensor tensor, double gain = 1.0);
/// N(mean, std^2) truncated to [a, b].
Tensor trunc_normal_(Tensor tensor, double mean = 0, double std = 1, double a = -2, double b = 2);

}  // namespace init
}  // namespace nn
}  // namespace ember
