// Convolution layers and F::conv*: parameter shapes and names, PyTorch's default
// initialisation bounds, padding modes, Python's repr, ConvTranspose's output_size, and
// LazyConv2d.
#include <cmath>
#include <sstream>

#include "ember/core/cpu/conv.h"
#include "ember/core/ops/padding.h"
#include "ember/nn/functional/conv.h"
#include "ember/nn/modules/container.h"
#include "ember/nn/modules/conv.h"
#include "op_check.h"

using namespace ember;
using namespace ember::test;
namespace F = ember::nn::functional;

namespace {

template <class M>
std::string repr(const M& m) {
  std::ostringstream os;
  os << *m;
  return os.str();
}

/// Checks that t lies within ±bound and spreads over it like U(-bound, bound) (variance
/// bound^2 / 3).
void check_uniform(const Tensor& t, double bound) {
  CHECK(t.abs().max().item<double>() <= bound);
  CHECK(t.abs().max().item<double>() >= 0.9 * bound);
  const double var = t.to(kDouble).var().item<double>();
  CHECK(var == doctest::Approx(bound * bound / 3).epsilon(0.1));
}

}  // namespace

TEST_CASE("test_conv_modules: Conv2d parameters, init and forward") {
  manual_seed(0);
  nn::Conv2d conv(nn::Conv2dOptions(32, 64, 3).padding(1));
  CHECK(shape(conv->weight) == std::vector<int64_t>{64, 32, 3, 3});
  CHECK(shape(conv->bias) == std::vector<int64_t>{64});
  CHECK(conv->named_parameters().keys() == std::vector<std::string>{"weight", "bias"});
  // kaiming_uniform(a=sqrt(5)): gain sqrt(2 / (1 + 5)), bound = sqrt(3) gain / sqrt(fan_in)
  // = 1 / sqrt(fan_in), fan_in = 32 * 3 * 3 = 288; the bias uses the same bound.
  check_uniform(conv->weight, 1 / std::sqrt(288.0));
  CHECK(conv->bias.abs().max().item<double>() <= 1 / std::sqrt(288.0));
  Tensor x = randn({2, 32, 14, 14});
  Tensor y = conv(x);
  CHECK(shape(y) == std::vector<int64_t>{2, 64, 14, 14});
  check_close(y, cpu::conv2d_reference(x, conv->weight, conv->bias, {1, 1}, {1, 1}, {1, 1}, 1), 1e-4, 1e-4);
  CHECK(y.grad_fn()->name() == "ConvolutionBackward0");
  y.sum().backward();
  CHECK(shape(conv->weight.grad()) == std::vector<int64_t>{64, 32, 3, 3});
  // No bias: registered as undefined, skipped by parameters().
  nn::Conv2d nob(nn::Conv2dOptions(1, 4, {2, 3}).bias(false).stride({2, 1}).groups(1));
  CHECK(!nob->bias.defined());
  CHECK(nob->parameters().size() == 1);
  CHECK(shape(nob(zeros({1, 1, 6, 6}))) == std::vector<int64_t>{1, 4, 3, 4});
  // Grouped: weight (out, in / groups, ...).
  nn::Conv2d grouped(nn::Conv2dOptions(4, 6, 3).groups(2));
  CHECK(shape(grouped->weight) == std::vector<int64_t>{6, 2, 3, 3});
  // Unbatched input.
  CHECK(shape(conv(randn({32, 5, 5}))) == std::vector<int64_t>{64, 5, 5});
}

TEST_CASE("test_conv_modules: Python's repr") {
  CHECK(repr(nn::Conv2d(nn::Conv2dOptions(1, 32, 3).padding(1))) ==
        "Conv2d(1, 32, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))");
  CHECK(repr(nn::Conv2d(nn::Conv2dOptions(1, 32, {3, 5})
                             .stride(2)
                             .dilation({1, 2})
                             .bias(false)
                             .padding_mode(kReflect))) ==
        "Conv2d(1, 32, kernel_size=(3, 5), stride=(2, 2), dilation=(1, 2), bias=False, padding_mode=reflect)");
  CHECK(repr(nn::Conv2d(nn::Conv2dOptions(4, 8, 3).padding(kSame).groups(2))) ==
        "Conv2d(4, 8, kernel_size=(3, 3), stride=(1, 1), padding=same, groups=2)");
  CHECK(repr(nn::Conv2d(nn::Conv2dOptions(4, 8, 3).padding(kValid))) ==
        "Conv2d(4, 8, kernel_size=(3, 3), stride=(1, 1), padding=valid)");
  CHECK(repr(nn::Conv1d(4, 8, 3)) == "Conv1d(4, 8, kernel_size=(3,), stride=(1,))");
  CHECK(repr(nn::ConvTranspose2d(nn::ConvTranspose2dOptions(4, 8, 3).stride(2).output_padding(1))) ==
        "ConvTranspose2d(4, 8, kernel_size=(3, 3), stride=(2, 2), output_padding=(1, 1))");
}

TEST_CASE("test_conv_modules: padding modes") {
  // Circular 1-d: x = [1, 2, 3, 4] padded by one on each side wraps to [4, 1, 2, 3, 4, 1];
  // a kernel of ones sums windows of three: [7, 6, 9, 8].
  nn::Conv1d circ(nn::Conv1dOptions(1, 1, 3).padding(1).padding_mode(kCircular).bias(false));
  {
    NoGradGuard g;
    circ->weight.fill_(1.0);
  }
  check_close(circ(from_values({1, 2, 3, 4}, {1, 1, 4}, kFloat)), {7, 6, 9, 8});
  // Reflect 1-d: [2, 1, 2, 3, 4, 3] -> [5, 6, 9, 10].
  nn::Conv1d refl(nn::Conv1dOptions(1, 1, 3).padding(1).padding_mode(kReflect).bias(false));
  {
    NoGradGuard g;
    refl->weight.fill_(1.0);
  }
  check_close(refl(from_values({1, 2, 3, 4}, {1, 1, 4}, kFloat)), {5, 6, 9, 10});
  // 2-d reflect/replicate equal F::pad then an unpadded convolution.
  manual_seed(1);
  Tensor x = randn({2, 3, 6, 5});
  for (auto mode : {nn::Conv2dOptions::padding_mode_t(kReflect), nn::Conv2dOptions::padding_mode_t(kReplicate),
                    nn::Conv2dOptions::padding_mode_t(kCircular)}) {
    nn::Conv2d m(nn::Conv2dOptions(3, 4, {3, 2}).padding({1, 2}).padding_mode(mode));
    Tensor padded = ember::pad(x, {2, 2, 1, 1}, enum_name(mode));
    check_close(m(x), cpu::conv2d_reference(padded, m->weight, m->bias, {1, 1}, {0, 0}, {1, 1}, 1), 1e-4, 1e-4);
  }
  // "same" with an even kernel pads the extra column on the right, for zeros and reflect.
  nn::Conv2d same(nn::Conv2dOptions(3, 2, {3, 4}).padding(kSame));
  CHECK(shape(same(x)) == std::vector<int64_t>{2, 2, 6, 5});
  Tensor zpad = ember::pad(x, {1, 2, 1, 1});
  check_close(same(x), cpu::conv2d_reference(zpad, same->weight, same->bias, {1, 1}, {0, 0}, {1, 1}, 1), 1e-4, 1e-4);
  nn::Conv2d same_refl(nn::Conv2dOptions(3, 2, {3, 4}).padding(kSame).padding_mode(kReflect));
  Tensor rpad = ember::pad(x, {1, 2, 1, 1}, "reflect");
  check_close(same_refl(x), cpu::conv2d_reference(rpad, same_refl->weight, same_refl->bias, {1, 1}, {0, 0}, {1, 1}, 1),
              1e-4, 1e-4);
}

TEST_CASE("test_conv_modules: functional options") {
  manual_seed(2);
  Tensor x = randn({2, 4, 7, 7}), w = randn({6, 2, 3, 3}), b = randn({6});
  check_close(F::conv2d(x, w, F::Conv2dFuncOptions().bias(b).stride(2).padding(1).groups(2)),
              ember::conv2d(x, w, b, 2, 1, 1, 2));
  check_close(F::conv2d(x, w, F::Conv2dFuncOptions().padding(kSame).dilation(2).groups(2)),
              ember::conv2d(x, w, {}, 1, "same", 2, 2));
  CHECK(shape(F::conv2d(x, w, F::Conv2dFuncOptions().padding(kValid).groups(2))) == std::vector<int64_t>{2, 6, 5, 5});
  CHECK(shape(F::conv2d(x, randn({6, 4, 3, 3}), F::Conv2dFuncOptions().padding({0, 1}))) ==
        std::vector<int64_t>{2, 6, 5, 7});
  Tensor x1 = randn({2, 4, 9}), w1 = randn({3, 4, 2});
  check_close(F::conv1d(x1, w1, F::Conv1dFuncOptions().stride(2)), ember::conv1d(x1, w1, {}, 2));
  Tensor wt = randn({4, 3, 3, 3});
  check_close(F::conv_transpose2d(x, wt, F::ConvTranspose2dFuncOptions().stride(2).padding(1).output_padding(1)),
              ember::conv_transpose2d(x, wt, {}, 2, 1, 1));
  CHECK(shape(F::conv_transpose1d(x1, randn({4, 2, 3}), F::ConvTranspose1dFuncOptions().dilation(2))) ==
        std::vector<int64_t>{2, 2, 13});  // (9-1) + 2*(3-1) + 1
}

TEST_CASE("test_conv_modules: ConvTranspose2d") {
  manual_seed(3);
  nn::ConvTranspose2d up(nn::ConvTranspose2dOptions(4, 8, 3).stride(2).padding(1));
  CHECK(shape(up->weight) == std::vector<int64_t>{4, 8, 3, 3});  // (in, out / groups, ...)
  // fan_in of a (4, 8, 3, 3) weight is size(1) * 9 = 72, as in PyTorch.
  CHECK(up->weight.abs().max().item<double>() <= 1 / std::sqrt(72.0));
  CHECK(up->bias.abs().max().item<double>() <= 1 / std::sqrt(72.0));
  Tensor x = randn({2, 4, 5, 5});
  Tensor y = up(x);
  CHECK(shape(y) == std::vector<int64_t>{2, 8, 9, 9});  // (5-1)*2 - 2 + 3
  check_close(y, cpu::conv_transpose2d_reference(x, up->weight, up->bias, {2, 2}, {1, 1}, {0, 0}, 1, {1, 1}), 1e-4,
              1e-4);
  // output_size picks the output_padding: 10 = 9 + 1.
  std::vector<int64_t> size{10, 10};
  Tensor y10 = up(x, IntArrayRef(size));
  CHECK(shape(y10) == std::vector<int64_t>{2, 8, 10, 10});
  check_close(y10, cpu::conv_transpose2d_reference(x, up->weight, up->bias, {2, 2}, {1, 1}, {1, 1}, 1, {1, 1}), 1e-4,
              1e-4);
  std::vector<int64_t> full_size{2, 8, 10, 9};
  CHECK(shape(up(x, IntArrayRef(full_size))) == std::vector<int64_t>{2, 8, 10, 9});
  std::vector<int64_t> bad{12, 12};
  check_error([&] { up(x, IntArrayRef(bad)); },
              "requested an output size of [12, 12], but valid sizes range from [9, 9] to [10, 10] (for an input of "
              "torch.Size([5, 5]))");
  check_error([] { nn::ConvTranspose2d(nn::ConvTranspose2dOptions(4, 8, 3).padding_mode(kReflect)); },
              "Only \"zeros\" padding mode is supported for ConvTranspose2d");
  nn::ConvTranspose1d up1(nn::ConvTranspose1dOptions(2, 3, 4).stride(2));
  CHECK(shape(up1(randn({1, 2, 5}))) == std::vector<int64_t>{1, 3, 12});
}

TEST_CASE("test_conv_modules: LazyConv2d takes in_channels from its first input") {
  manual_seed(4);
  nn::LazyConv2d lazy(nn::LazyConv2dOptions(8, 3).padding(1));
  CHECK(lazy->has_uninitialized_params());
  CHECK(lazy->parameters().empty());
  CHECK(repr(lazy) == "LazyConv2d(0, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))");
  Tensor x = randn({2, 5, 6, 6});
  Tensor y = lazy(x);
  CHECK_FALSE(lazy->has_uninitialized_params());
  CHECK(lazy->in_channels == 5);
  CHECK(lazy->named_parameters().keys() == std::vector<std::string>{"weight", "bias"});
  CHECK(shape(lazy->weight) == std::vector<int64_t>{8, 5, 3, 3});
  CHECK(lazy->weight.requires_grad());
  CHECK(lazy->weight.abs().max().item<double>() <= 1 / std::sqrt(45.0));
  check_close(y, cpu::conv2d_reference(x, lazy->weight, lazy->bias, {1, 1}, {1, 1}, {1, 1}, 1), 1e-4, 1e-4);
  CHECK(repr(lazy) == "Conv2d(5, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))");
  lazy(x).sum().backward();
  CHECK(lazy->weight.grad().defined());
  auto copy = std::dynamic_pointer_cast<nn::LazyConv2dImpl>(lazy->clone());
  check_close(copy->forward(x), y);
  CHECK_FALSE(copy->weight.is_alias_of(lazy->weight));
  // Unbatched first input; errors for other ranks.
  nn::LazyConv2d lazy2(4, 3);
  CHECK(shape(lazy2(randn({3, 5, 5}))) == std::vector<int64_t>{4, 3, 3});
  CHECK(lazy2->in_channels == 3);
  check_error([] { nn::LazyConv2d(4, 3)(randn({5, 5})); },
              "Expected 3D (unbatched) or 4D (batched) input to LazyConv2d, but got input of size: [5, 5]");
}

TEST_CASE("test_conv_modules: a small CNN in a Sequential") {
  manual_seed(5);
  nn::Sequential net(nn::Conv2d(nn::Conv2dOptions(1, 4, 3).padding(1)), nn::Conv2d(nn::Conv2dOptions(4, 2, 3)));
  CHECK(net->named_parameters().keys() == std::vector<std::string>{"0.weight", "0.bias", "1.weight", "1.bias"});
  Tensor y = net->forward(randn({3, 1, 8, 8}));
  CHECK(shape(y) == std::vector<int64_t>{3, 2, 6, 6});
  auto copy = std::dynamic_pointer_cast<nn::Conv2dImpl>(nn::Conv2d(2, 3, 2)->clone());
  CHECK(copy != nullptr);
  CHECK(shape(copy->weight) == std::vector<int64_t>{3, 2, 2, 2});
}

TEST_CASE("test_conv_modules: option errors") {
  check_error([] { nn::Conv2d(nn::Conv2dOptions(4, 8, 3).groups(0)); }, "groups must be a positive integer");
  check_error([] { nn::Conv2d(nn::Conv2dOptions(3, 8, 3).groups(2)); }, "in_channels must be divisible by groups");
  check_error([] { nn::Conv2d(nn::Conv2dOptions(4, 7, 3).groups(2)); }, "out_channels must be divisible by groups");
  check_error([] { nn::Conv2d(nn::Conv2dOptions(4, 8, 3).padding(kSame).stride(2)); },
              "padding='same' is not supported for strided convolutions");
  check_error([] { nn::Conv2d(4, 8, 3)(randn({1, 3, 5, 5})); },
              "Given groups=1, weight of size [8, 4, 3, 3], expected input[1, 3, 5, 5] to have 4 channels, but got 3 "
              "channels instead");
}
