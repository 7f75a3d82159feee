// pixel_shuffle / pixel_unshuffle as reshape -> permute -> reshape, with ATen's checks.
#include "ember/core/ops/pixel_shuffle.h"

#include <vector>

namespace ember {

namespace {

/// The leading (batch) dims, everything before the last three.
std::vector<int64_t> batch_dims(const Tensor& x) {
  return std::vector<int64_t>(x.sizes().begin(), x.sizes().end() - 3);
}

/// {0, 1, ..., n - 1} followed by `tail` shifted by n.
std::vector<int64_t> perm(int64_t n, std::initializer_list<int64_t> tail) {
  std::vector<int64_t> p;
  for (int64_t i = 0; i < n; ++i) p.push_back(i);
  for (int64_t t : tail) p.push_back(n + t);
  return p;
}

}  // namespace

Tensor pixel_shuffle(const Tensor& self, int64_t upscale_factor) {
  EMBER_CHECK(self.dim() >= 3,
              "pixel_shuffle expects input to have at least 3 dimensions, but got input with ", self.dim(),
              " dimension(s)");
  EMBER_CHECK(upscale_factor > 0, "pixel_shuffle expects a positive upscale_factor, but got ",
              upscale_factor);
  const int64_t r = upscale_factor, c = self.size(-3), h = self.size(-2), w = self.size(-1);
  EMBER_CHECK(c % (r * r) == 0,
              "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
              "upscale_factor, but input.size(-3)=",
              c, " is not divisible by ", r * r);
  std::vector<int64_t> split = batch_dims(self), out = batch_dims(self);
  const int64_t n = static_cast<int64_t>(split.size());
  split.insert(split.end(), {c / (r * r), r, r, h, w});
  out.insert(out.end(), {c / (r * r), h * r, w * r});
  // (C, r_i, r_j, H, W) -> (C, H, r_i, W, r_j)
  return self.reshape(split).permute(perm(n, {0, 3, 1, 4, 2})).reshape(out);
}

Tensor pixel_unshuffle(const Tensor& self, int64_t downscale_factor) {
  EMBER_CHECK(self.dim() >= 3,
              "pixel_unshuffle expects input to have at least 3 dimensions, but got input with ", self.dim(),
              " dimension(s)");
  EMBER_CHECK(downscale_factor > 0, "pixel_unshuffle expects a positive downscale_factor, but got ",
              downscale_factor);
  const int64_t r = downscale_factor, c = self.size(-3), h = self.size(-2), w = self.size(-1);
  EMBER_CHECK(h % r == 0,
              "pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)=", h,
              " is not divisible by ", r);
  EMBER_CHECK(w % r == 0,
              "pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)=", w,
              " is not divisible by ", r);
  std::vector<int64_t> split = batch_dims(self), out = batch_dims(self);
  const int64_t n = static_cast<int64_t>(split.size());
  split.insert(split.end(), {c, h / r, r, w / r, r});
  out.insert(out.end(), {c * r * r, h / r, w / r});
  // (C, H, r_i, W, r_j) -> (C, r_i, r_j, H, W)
  return self.reshape(split).permute(perm(n, {0, 2, 4, 1, 3})).reshape(out);
}

}  // namespace ember
