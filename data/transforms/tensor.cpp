// Normalize's channel tensors and the random crop/flip augmentations.
#include "ember/data/transforms/tensor.h"

#include <algorithm>

#include "ember/core/ops/shape.h"

namespace ember::data::transforms::detail {

Tensor channel_tensor(ArrayRef<double> v, const char* what) {
  EMBER_CHECK(!v.empty(), "Normalize: ", what, " must have at least one value");
  Tensor t = empty({static_cast<int64_t>(v.size()), 1, 1}, kFloat);
  float* p = t.data_ptr<float>();
  for (size_t i = 0; i < v.size(); ++i) {
    p[i] = static_cast<float>(v[i]);
    // torchvision's check: dividing by a zero std would fill the image with inf/nan.
    EMBER_CHECK(std::string(what) != "std" || p[i] != 0.0f,
                "std evaluated to zero after conversion to float32, leading to division by zero.");
  }
  return t;
}

Tensor random_crop(const Tensor& input, int64_t th, int64_t tw, int64_t padding, PhiloxStream& rng) {
  EMBER_CHECK(input.dim() >= 2, "RandomCrop: expected an image of at least 2 dims (..., H, W), got ",
              input.dim(), " dims");
  int64_t h = input.size(-2), w = input.size(-1);
  int64_t ph = h + 2 * padding, pw = w + 2 * padding;
  EMBER_CHECK(th <= ph && tw <= pw, "Required crop size (", th, ", ", tw,
              ") is larger than input image size (", ph, ", ", pw, ")");
  // Top-left corner of the crop in padded coordinates, row first as torchvision draws it.
  int64_t top = static_cast<int64_t>(rng.below(static_cast<uint64_t>(ph - th + 1)));
  int64_t left = static_cast<int64_t>(rng.below(static_cast<uint64_t>(pw - tw + 1)));
  if (padding == 0) return input.narrow(-2, top, th).narrow(-1, left, tw).contiguous();
  std::vector<int64_t> out_shape = input.sizes().vec();
  out_shape[out_shape.size() - 2] = th;
  out_shape[out_shape.size() - 1] = tw;
  Tensor out = zeros(out_shape, input.options());
  // The crop window [top, top + th) in padded rows is [top - padding, ...) in the input's.
  int64_t r0 = std::max<int64_t>(top - padding, 0), r1 = std::min<int64_t>(top - padding + th, h);
  int64_t c0 = std::max<int64_t>(left - padding, 0), c1 = std::min<int64_t>(left - padding + tw, w);
  if (r1 > r0 && c1 > c0) {
    Tensor src = input.narrow(-2, r0, r1 - r0).narrow(-1, c0, c1 - c0);
    out.narrow(-2, r0 - (top - padding), r1 - r0).narrow(-1, c0 - (left - padding), c1 - c0).copy_(src);
  }
  return out;
}

Tensor random_horizontal_flip(const Tensor& input, double p, PhiloxStream& rng) {
  EMBER_CHECK(input.dim() >= 1, "RandomHorizontalFlip: expected a tensor of at least 1 dim");
  bool flip = rng.uniform() < p;
  return flip ? input.flip({-1}) : input;
}

}  // namespace ember::data::transforms::detail
