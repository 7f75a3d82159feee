// Padding ops. Reflection, replication and circular padding map every output position to one
// input position per axis, so they are separable gathers (Note [Separable maps]); their
// backward is the scatter-add adjoint. Constant padding fills, then copies the (possibly
// cropped) input into place; its backward crops the gradient with the negated pads.
#include "ember/core/ops/padding.h"

#include <algorithm>
#include <string>
#include <vector>

#include "ember/core/op.h"
#include "ember/core/ops/separable_map.h"
#include "ember/core/ops/shape.h"

namespace ember {

using resample::AxisMap;
using resample::AxisMapPtr;

namespace {

enum class PadMode { kReflect, kReplicate, kCircular };

/// Output o of an axis padded by `left` reads input o - left, folded back inside [0, in).
AxisMapPtr pad_axis(int64_t in, int64_t left, int64_t right, PadMode mode) {
  auto m = std::make_shared<AxisMap>(in);
  for (int64_t o = 0; o < in + left + right; ++o) {
    int64_t i = o - left;
    switch (mode) {
      case PadMode::kReflect: i = i < 0 ? -i : (i >= in ? 2 * (in - 1) - i : i); break;
      case PadMode::kReplicate: i = std::clamp<int64_t>(i, 0, in - 1); break;
      case PadMode::kCircular: i = ((i % in) + in) % in; break;
    }
    m->add(i);
    m->close();
  }
  return m;
}

/// Padding.h's check_valid_input: dim + 1 or dim + 2 dims, only the batch may be empty.
void check_valid_input(const Tensor& input, IntArrayRef padding, int64_t dim) {
  EMBER_CHECK(static_cast<int64_t>(padding.size()) == 2 * dim, "padding size is expected to be ", 2 * dim,
              ", but got: ", padding.size());
  const int64_t ndim = input.dim();
  const bool batch = ndim == dim + 2;
  bool valid = batch || ndim == dim + 1;
  for (int64_t d = batch ? 1 : 0; valid && d < ndim; ++d) valid = input.size(d) != 0;
  EMBER_CHECK(valid, "Expected ", dim + 1, "D or ", dim + 2,
              "D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but got: ",
              input.sizes());
}

/// Padding.h's pad_shape_check: reflection cannot reach past the edge, and every padded
/// dim must keep at least one element.
void pad_shape_check(const Tensor& input, IntArrayRef padding, int64_t dim, bool reflection) {
  check_valid_input(input, padding, dim);
  const int64_t ndim = input.dim();
  if (reflection) {
    for (int64_t i = 0; i < dim; ++i) {
      const int64_t d = ndim - 1 - i;
      EMBER_CHECK(padding[2 * i] < input.size(d) && padding[2 * i + 1] < input.size(d), "Argument #", 4 + 2 * i,
                  ": Padding size should be less than the corresponding input dimension, but got: padding (",
                  padding[2 * i], ", ", padding[2 * i + 1], ") at dimension ", d, " of input ", input.sizes());
    }
  }
  std::vector<int64_t> in, out;
  bool valid = true;
  for (int64_t i = dim - 1; i >= 0; --i) {
    const int64_t d = ndim - 1 - i;
    in.push_back(input.size(d));
    out.push_back(input.size(d) + padding[2 * i] + padding[2 * i + 1]);
    valid = valid && out.back() >= 1;
  }
  if (dim == 1) {
    EMBER_CHECK(valid, "input (W: ", in[0], ") is too small. Calculated output W: ", out[0]);
  } else if (dim == 3) {
    EMBER_CHECK(valid, "input (D: ", in[0], " H: ", in[1], ", W: ", in[2], ") is too small. Calculated output D: ",
                out[0], " H: ", out[1], " W: ", out[2]);
  } else {
    EMBER_CHECK(valid, "Calculated output H: ", out[0], " W: ", out[1], " must be >= 1 in every dimension (input H: ",
                in[0], ", W: ", in[1], ")");
  }
}

/// Applies a gather-padding to the last `dim` (1, 2 or 3) dims of x. The maps act on the
/// last two dims, so 3-d padding is two passes: (H, W) first, then depth, with D and H
/// swapped so that D is the height axis of the second map (W stays the contiguous axis).
Tensor pad_map(const Tensor& x, IntArrayRef padding, int64_t dim, PadMode mode, const char* op, const char* stem) {
  const int64_t W = x.size(-1);
  AxisMapPtr w = pad_axis(W, padding[0], padding[1], mode);
  if (dim == 1) {
    return resample::apply_map(x, nullptr, w, {op, stem});
  }
  AxisMapPtr h = pad_axis(x.size(-2), padding[2], padding[3], mode);
  Tensor y = resample::apply_map(x, h, w, {op, stem});
  if (dim == 2) return y;
  AxisMapPtr d = pad_axis(x.size(-3), padding[4], padding[5], mode);
  Tensor z = resample::apply_map(y.transpose(-3, -2), d, resample::identity_axis(y.size(-1)), {op, stem});
  return z.transpose(-3, -2);
}

/// out = value everywhere, then the input (cropped by negative pads) copied inside.
struct ConstantPadNd final : Op {
  std::vector<int64_t> pad;
  Scalar value;
  ConstantPadNd(std::vector<int64_t> p, const Scalar& v) : pad(std::move(p)), value(v) {}
  const char* name() const override { return "constant_pad_nd"; }
  Save saves() const override { return Save::kNothing; }
  void cpu(const TensorList& in, TensorList& out) const override { fill_and_copy(in[0], out[0]); }
  // fill and copy_into have CUDA kernels of their own (cuda::fill, cuda::copy).
  void cuda(const TensorList& in, TensorList& out) const override { fill_and_copy(in[0], out[0]); }
  void fill_and_copy(const Tensor& input, Tensor& output) const {
    detail::fill_values(output, value);
    Tensor src = input.detach(), dst = output;
    const int64_t ndim = src.dim(), npad = static_cast<int64_t>(pad.size()) / 2;
    for (int64_t i = ndim - npad; i < ndim; ++i) {
      const int64_t l = pad[2 * (ndim - i - 1)], r = pad[2 * (ndim - i - 1) + 1];
      src = src.narrow(i, std::max<int64_t>(-l, 0), src.size(i) - std::max<int64_t>(-l, 0) - std::max<int64_t>(-r, 0));
      dst = dst.narrow(i, std::max<int64_t>(l, 0), dst.size(i) - std::max<int64_t>(l, 0) - std::max<int64_t>(r, 0));
    }
    detail::copy_into(dst, src);
  }
  // The padded value is constant; the input's gradient is grad cropped back: pad by -pad.
  TensorList backward(const SavedTensors&, const TensorList& grads) const override {
    std::vector<int64_t> neg(pad.size());
    for (size_t i = 0; i < pad.size(); ++i) neg[i] = -pad[i];
    return {constant_pad_nd(grads[0], neg, 0)};
  }
};

}  // namespace

Tensor constant_pad_nd(const Tensor& self, IntArrayRef pad, const Scalar& value) {
  EMBER_CHECK(pad.size() % 2 == 0, "Length of pad must be even but instead it equals ", pad.size());
  const int64_t ndim = self.dim(), npad = static_cast<int64_t>(pad.size()) / 2;
  EMBER_CHECK(ndim >= npad, "Length of pad should be no more than twice the number of dimensions of the input. ",
              "Pad length is ", pad.size(), "while the input has ", ndim, "dimensions.");
  bool any_positive = false;
  for (int64_t p : pad) any_positive = any_positive || p > 0;
  DimVector sizes(self.sizes());
  for (int64_t i = ndim - npad; i < ndim; ++i) {
    const int64_t l = pad[2 * (ndim - i - 1)], r = pad[2 * (ndim - i - 1) + 1];
    const int64_t n = self.size(i) + l + r;
    // Pure cropping may leave an empty dim; padding must leave at least one element.
    EMBER_CHECK(any_positive ? n > 0 : n >= 0, "The input size ", self.size(i), ", plus negative padding ", l,
                " and ", r, " resulted in a negative output size, which is invalid. Check dimension ", i,
                " of your input.");
    sizes[i] = n;
  }
  return run_op(ConstantPadNd(pad.vec(), value), {self}, OutSpec{sizes, self.dtype()});
}

Tensor reflection_pad1d(const Tensor& self, IntArrayRef padding) {
  pad_shape_check(self, padding, 1, true);
  return pad_map(self, padding, 1, PadMode::kReflect, "reflection_pad1d", "ReflectionPad1D");
}

Tensor reflection_pad2d(const Tensor& self, IntArrayRef padding) {
  pad_shape_check(self, padding, 2, true);
  return pad_map(self, padding, 2, PadMode::kReflect, "reflection_pad2d", "ReflectionPad2D");
}

Tensor replication_pad1d(const Tensor& self, IntArrayRef padding) {
  pad_shape_check(self, padding, 1, false);
  return pad_map(self, padding, 1, PadMode::kReplicate, "replication_pad1d", "ReplicationPad1D");
}

Tensor replication_pad2d(const Tensor& self, IntArrayRef padding) {
  pad_shape_check(self, padding, 2, false);
  return pad_map(self, padding, 2, PadMode::kReplicate, "replication_pad2d", "ReplicationPad2D");
}

Tensor reflection_pad3d(const Tensor& self, IntArrayRef padding) {
  pad_shape_check(self, padding, 3, true);
  return pad_map(self, padding, 3, PadMode::kReflect, "reflection_pad3d", "ReflectionPad3D");
}

Tensor replication_pad3d(const Tensor& self, IntArrayRef padding) {
  pad_shape_check(self, padding, 3, false);
  return pad_map(self, padding, 3, PadMode::kReplicate, "replication_pad3d", "ReplicationPad3D");
}

Tensor pad_circular(const Tensor& self, IntArrayRef padding) {
  const int64_t ndim = self.dim(), spatial = ndim - 2;
  EMBER_CHECK(static_cast<int64_t>(padding.size()) + 4 == ndim * 2, "Invalid padding size, expected ", spatial * 2,
              " but got ", padding.size());
  EMBER_CHECK(spatial >= 1 && spatial <= 3, "Only 1D, 2D and 3D padding with circular mode is supported, got ", spatial,
              "D");
  for (int64_t i = 0; i < spatial; ++i) {
    const int64_t size = self.size(ndim - 1 - i), l = padding[2 * i], r = padding[2 * i + 1];
    EMBER_CHECK(l <= size && r <= size, "Padding value causes wrapping around more than once.");
    EMBER_CHECK(size + l + r >= 0, "Negative padding value is resulting in an empty dimension");
  }
  return pad_map(self, padding, spatial, PadMode::kCircular, "_pad_circular", "PadCircular");
}

Tensor pad(const Tensor& self, IntArrayRef pad, std::string_view mode, std::optional<double> value) {
  const int64_t ndim = self.dim();
  EMBER_CHECK(mode == "constant" || mode == "reflect" || mode == "replicate" || mode == "circular",
              "Unrecognised padding mode ", mode);
  EMBER_CHECK(pad.size() % 2 == 0, "Padding length must be divisible by 2");
  EMBER_CHECK(static_cast<int64_t>(pad.size()) <= ndim * 2, "Padding length too large");
  if (mode == "constant") return constant_pad_nd(self, pad, value.value_or(0.0));
  EMBER_CHECK(!value.has_value(), "Padding mode \"", mode, "\" doesn't take in value argument");
  const bool reflect = mode == "reflect", replicate = mode == "replicate";
  if (pad.size() == 2 && (ndim == 2 || ndim == 3)) {
    if (reflect) return reflection_pad1d(self, pad);
    if (replicate) return replication_pad1d(self, pad);
    return pad_circular(self, pad);
  }
  if (pad.size() == 4 && (ndim == 3 || ndim == 4)) {
    if (reflect) return reflection_pad2d(self, pad);
    if (replicate) return replication_pad2d(self, pad);
    return pad_circular(self, pad);
  }
  if (pad.size() == 6 && (ndim == 4 || ndim == 5)) {
    if (reflect) return reflection_pad3d(self, pad);
    if (replicate) return replication_pad3d(self, pad);
    return pad_circular(self, pad);
  }
  detail::throw_error("Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now");
}

}  // namespace ember
