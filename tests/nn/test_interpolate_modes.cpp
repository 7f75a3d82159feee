// interpolate's "area" (adaptive average pooling to the output size) and "nearest-exact"
// (output i reads input min(floor((i + 0.5) * in / out), in - 1)) against hand-worked values, in
// 1-d, 2-d and 3-d, with scale_factor, gradients and the align_corners error.
#include <vector>

#include "ember/core/ops/creation.h"
#include "ember/core/ops/reduce.h"
#include "ember/nn/functional/upsampling.h"
#include "op_check.h"

using namespace ember;
namespace F = ember::nn::functional;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::seq;
using ember::test::values;

TEST_CASE("interpolate mode area averages the adaptive-pooling bins") {
  // 4x4 of 0..15 to 2x2: the means of the four 2x2 blocks.
  check_close(F::interpolate(seq({1, 1, 4, 4}), F::InterpolateFuncOptions().size(std::vector<int64_t>{2, 2}).mode(kArea)),
              {2.5, 4.5, 10.5, 12.5});
  // 6 to 4: bins [floor(6i/4), ceil(6(i+1)/4)) = [0,2) [1,3) [3,5) [4,6).
  check_close(F::interpolate(seq({1, 1, 6}), F::InterpolateFuncOptions().size(std::vector<int64_t>{4}).mode(kArea)),
              {0.5, 1.5, 3.5, 4.5});
  // scale_factor 0.5 in 3-d: 2x2x2 to 1x1x1 is the mean of 0..7.
  check_close(
      F::interpolate(seq({1, 1, 2, 2, 2}), F::InterpolateFuncOptions().scale_factor(std::vector<double>{0.5, 0.5, 0.5}).mode(kArea)),
      {3.5});
  check_error([] { F::interpolate(seq({1, 1, 4}), F::InterpolateFuncOptions().size(std::vector<int64_t>{2}).mode(kArea).align_corners(true)); },
              "align_corners option can only be set with the interpolating modes");
}

TEST_CASE("interpolate mode nearest-exact samples at pixel centres") {
  auto exact = [](const Tensor& x, std::vector<int64_t> size) {
    return F::interpolate(x, F::InterpolateFuncOptions().size(size).mode(kNearestExact));
  };
  // 4 -> 6: scale 2/3, floor((i + 0.5) * 2/3) = 0, 1, 1, 2, 3, 3 (nearest gives 0, 0, 1, 2, 2, 3).
  check_close(exact(seq({1, 1, 4}), {6}), {0, 1, 1, 2, 3, 3});
  // 5 -> 2: scale 2.5: floor(1.25) = 1, floor(3.75) = 3.
  check_close(exact(seq({1, 1, 5}), {2}), {1, 3});
  // scale_factor 2 uses scale 1/2: 0, 0, 1, 1, 2, 2.
  check_close(F::interpolate(seq({1, 1, 3}), F::InterpolateFuncOptions().scale_factor(std::vector<double>{2}).mode(kNearestExact)),
              {0, 0, 1, 1, 2, 2});
  // 2-d: rows 3 -> 2 (rows 0 and 2), columns 2 -> 3 (columns 0, 1, 1).
  check_close(exact(seq({1, 1, 3, 2}), {2, 3}), {0, 1, 1, 4, 5, 5});
  // 3-d: depth 2 -> 1 reads plane 1 (floor(0.5 * 2) = 1).
  check_close(exact(seq({1, 1, 2, 1, 2}), {1, 1, 2}), {2, 3});
  // The gradient counts how often each input is read.
  Tensor x = seq({1, 1, 4}).requires_grad_();
  exact(x, {6}).sum().backward();
  CHECK(values(x.grad()) == std::vector<double>{1, 2, 1, 2});
}
