// 3-d circular padding against a plain index loop (each output voxel reads input voxel
// ((i - pad) mod size) along every axis) with its gradient, and Conv3d with every padding_mode
// equal to the explicit F::pad followed by an unpadded convolution (as PyTorch's _ConvNd does).
#include <vector>

#include "ember/core/ops/conv.h"
#include "ember/core/ops/padding.h"
#include "ember/core/ops/reduce.h"
#include "ember/nn/functional/conv.h"
#include "ember/nn/modules/conv.h"
#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::seq;
using ember::test::values;

TEST_CASE("3-d circular padding wraps every axis (plain loop) and sends gradients back") {
  // x: (1, 1, 2, 3, 4) = 0..23; pads (W: 1, 2), (H: 2, 0), (D: 1, 1).
  Tensor x = seq({1, 1, 2, 3, 4}).requires_grad_();
  Tensor y = pad(x, {1, 2, 2, 0, 1, 1}, "circular");
  REQUIRE(y.sizes().vec() == std::vector<int64_t>{1, 1, 4, 5, 7});
  std::vector<double> expected;
  auto wrap = [](int64_t i, int64_t n) { return ((i % n) + n) % n; };
  for (int64_t d = 0; d < 4; ++d)
    for (int64_t h = 0; h < 5; ++h)
      for (int64_t w = 0; w < 7; ++w)
        expected.push_back(static_cast<double>(wrap(d - 1, 2) * 12 + wrap(h - 2, 3) * 4 + wrap(w - 1, 4)));
  CHECK(values(y) == expected);
  // d(sum y)/dx counts how often each voxel is read: per axis, 1 + the copies the pads make.
  y.sum().backward();
  std::vector<double> grad;
  auto copies = [&](int64_t i, int64_t n, int64_t l, int64_t r) {
    int64_t c = 0;
    for (int64_t o = -l; o < n + r; ++o) c += wrap(o, n) == i;
    return c;
  };
  for (int64_t d = 0; d < 2; ++d)
    for (int64_t h = 0; h < 3; ++h)
      for (int64_t w = 0; w < 4; ++w)
        grad.push_back(static_cast<double>(copies(d, 2, 1, 1) * copies(h, 3, 2, 0) * copies(w, 4, 1, 2)));
  CHECK(values(x.grad()) == grad);
  check_error([] { pad(zeros({1, 1, 2, 2, 2}), {3, 0, 0, 0, 0, 0}, "circular"); },
              "Padding value causes wrapping around more than once.");
}

TEST_CASE("Conv3d with each padding_mode equals F::pad then an unpadded conv3d") {
  namespace F = nn::functional;
  manual_seed(2);
  Tensor x = randn({2, 2, 3, 4, 5}, kDouble);
  struct Mode {
    nn::detail::conv_padding_mode_t mode;
    const char* name;
  };
  for (const Mode& m : {Mode{ember::kReflect, "reflect"}, Mode{ember::kReplicate, "replicate"},
                        Mode{ember::kCircular, "circular"}}) {
    CAPTURE(m.name);
    nn::Conv3d conv(nn::Conv3dOptions(2, 3, {3, 2, 3}).padding({1, 1, 2}).padding_mode(m.mode));
    conv->to(kDouble);
    Tensor padded = pad(x, {2, 2, 1, 1, 1, 1}, m.name);
    Tensor expected = F::conv3d(padded, conv->weight, F::Conv3dFuncOptions().bias(conv->bias));
    check_close(conv->forward(x), expected, 1e-12, 1e-12);
  }
}
