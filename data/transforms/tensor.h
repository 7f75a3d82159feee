// Transforms of an example's data tensor (libtorch's TensorTransform family): TensorLambda,
// Normalize, and the seeded random augmentations RandomCrop and RandomHorizontalFlip, which
// draw from sample_rng() (Note [Reproducible random transforms] in data/random.h).
#pragma once

#include <array>
#include <functional>
#include <utility>
#include <vector>

#include "ember/core/ops/creation.h"
#include "ember/data/example.h"
#include "ember/data/random.h"
#include "ember/data/transforms/base.h"

namespace ember::data::transforms {

/// Maps an example's data tensor and leaves its target alone.
template <class Target = Tensor>
class TensorTransform : public Transform<Example<Tensor, Target>, Example<Tensor, Target>> {
 public:
  using E = Example<Tensor, Target>;
  virtual Tensor operator()(Tensor input) = 0;
  E apply(E input) override {
    input.data = (*this)(std::move(input.data));
    return input;
  }
};

/// A TensorTransform from a function.
template <class Target = Tensor>
class TensorLambda : public TensorTransform<Target> {
 public:
  using FunctionType = std::function<Tensor(Tensor)>;
  explicit TensorLambda(FunctionType function) : function_(std::move(function)) {}
  Tensor operator()(Tensor input) override { return function_(std::move(input)); }

 private:
  FunctionType function_;
};

namespace detail {
/// (mean or stddev values) as a float32 (C, 1, 1) tensor, as libtorch's Normalize.
Tensor channel_tensor(ArrayRef<double> v, const char* what);
/// Zero-pads the last two dims by `padding` and crops (height, width) at a random offset.
Tensor random_crop(const Tensor& input, int64_t height, int64_t width, int64_t padding, PhiloxStream& rng);
/// Flips the last dim with probability p (one uniform draw per call).
Tensor random_horizontal_flip(const Tensor& input, double p, PhiloxStream& rng);
}  // namespace detail

/// (input - mean) / stddev per channel; a single value applies to every channel.
template <class Target = Tensor>
class Normalize : public TensorTransform<Target> {
 public:
  Normalize(ArrayRef<double> mean, ArrayRef<double> stddev)
      : mean(detail::channel_tensor(mean, "mean")), stddev(detail::channel_tensor(stddev, "std")) {}
  Tensor operator()(Tensor input) override { return input.sub(mean).div(stddev); }
  Tensor mean, stddev;
};

/// Pads the image's last two dims with `padding` zeros on every side, then crops `size` at a
/// uniformly random offset (torchvision's RandomCrop with fill=0).
template <class Target = Tensor>
class RandomCrop : public TensorTransform<Target> {
 public:
  explicit RandomCrop(int64_t size, int64_t padding = 0) : RandomCrop({size, size}, padding) {}
  explicit RandomCrop(std::array<int64_t, 2> size, int64_t padding = 0) : size_(size), padding_(padding) {
    EMBER_CHECK(size[0] > 0 && size[1] > 0, "RandomCrop: size must be positive, got (", size[0], ", ",
                size[1], ")");
    EMBER_CHECK(padding >= 0, "RandomCrop: padding must be non-negative, got ", padding);
  }
  Tensor operator()(Tensor input) override {
    return detail::random_crop(input, size_[0], size_[1], padding_, sample_rng());
  }

 private:
  std::array<int64_t, 2> size_;
  int64_t padding_;
};

/// Flips the image's last dim with probability p (torchvision's RandomHorizontalFlip).
template <class Target = Tensor>
class RandomHorizontalFlip : public TensorTransform<Target> {
 public:
  explicit RandomHorizontalFlip(double p = 0.5) : p_(p) {
    EMBER_CHECK(p >= 0 && p <= 1, "RandomHorizontalFlip: p must be in [0, 1], got ", p);
  }
  Tensor operator()(Tensor input) override { return detail::random_horizontal_flip(input, p_, sample_rng()); }

 private:
  double p_;
};

}  // namespace ember::data::transforms
