// Padding: constant (any number of dims, negative pads crop), reflection and replication of
// the last one, two or three dims, circular padding of the last one or two, plus pad(),
// torch::pad's dispatcher.
// Pads are listed last dimension first: {left, right, top, bottom}.
#pragma once

#include <optional>
#include <string_view>

#include "ember/core/tensor.h"

namespace ember {

/// Pads the last pad.size() / 2 dims with `value`; a negative pad removes elements.
Tensor constant_pad_nd(const Tensor& self, IntArrayRef pad, const Scalar& value = 0);

/// Mirror padding without repeating the edge: (C, W) / (N, C, W) with {left, right}.
Tensor reflection_pad1d(const Tensor& self, IntArrayRef padding);
/// Mirror padding of (C, H, W) / (N, C, H, W) with {left, right, top, bottom}.
Tensor reflection_pad2d(const Tensor& self, IntArrayRef padding);
/// Mirror padding of (C, D, H, W) / (N, C, D, H, W) with {left, right, top, bottom, front, back}.
Tensor reflection_pad3d(const Tensor& self, IntArrayRef padding);
/// Edge-repeating padding, same layouts as reflection_pad1d / 2d / 3d.
Tensor replication_pad1d(const Tensor& self, IntArrayRef padding);
Tensor replication_pad2d(const Tensor& self, IntArrayRef padding);
Tensor replication_pad3d(const Tensor& self, IntArrayRef padding);
/// Wrap-around padding of a batched (N, C, W) or (N, C, H, W) tensor (PyTorch's _pad_circular).
Tensor pad_circular(const Tensor& self, IntArrayRef padding);

/// torch::pad: mode is "constant", "reflect", "replicate" or "circular"; value only for
/// "constant" (default 0).
Tensor pad(const Tensor& self, IntArrayRef pad, std::string_view mode = "constant",
           std::optional<double> value = std::nullopt);

}  // namespace ember
