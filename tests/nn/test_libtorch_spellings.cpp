// libtorch spellings added so libtorch programs build unchanged (tests/compat runs whole
// programs against libtorch's output; these pin the pieces down): nn::Functional, the pooling
// modules' size-only constructors, forward<Tensor>() on Sequential/AnyModule, TORCH_MODULE
// and TORCH_ARG.
#include <sstream>

#include "ember/nn/modules/activation.h"
#include "ember/nn/modules/container.h"
#include "ember/nn/modules/functional.h"
#include "ember/nn/modules/linear.h"
#include "ember/nn/modules/pooling.h"
#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::from_values;

namespace {

struct TwiceImpl : nn::Module {
  Tensor forward(const Tensor& x) { return x * 2; }
};
TORCH_MODULE(Twice);

}  // namespace

TEST_CASE("nn::Functional wraps a function, binding extra arguments after the input") {
  Tensor x = from_values({-2.0, -0.5, 0.0, 1.5}, {4});
  nn::Functional relu(ember::relu);
  check_close(relu(x), {0.0, 0.0, 0.0, 1.5});
  // leaky_relu(x, 0.25): negative inputs times 0.25.
  nn::Functional leaky(ember::leaky_relu, 0.25);
  check_close(leaky(x), {-0.5, -0.125, 0.0, 1.5});
  nn::Functional lambda([](Tensor t) { return t + 1; });
  check_close(lambda->forward(x), {-1.0, 0.5, 1.0, 2.5});
  CHECK(relu->parameters().empty());
  CHECK_FALSE(relu->is_serializable());
  std::ostringstream s;
  s << *relu;
  CHECK(s.str() == "Functional()");

  // In a Sequential, and cloned with it.
  nn::Sequential seq(nn::Functional(ember::relu), nn::Functional([](Tensor t) { return t * 3; }));
  check_close(seq->forward(x), {0.0, 0.0, 0.0, 4.5});
  auto copy = std::dynamic_pointer_cast<nn::SequentialImpl>(seq->clone());
  REQUIRE(copy != nullptr);
  check_close(copy->forward(x), {0.0, 0.0, 0.0, 4.5});
}

TEST_CASE("pooling modules take the kernel or output size alone") {
  Tensor x = arange(16, kDouble).reshape({1, 1, 4, 4});
  // 2x2 windows of 0..15 laid out 4x4: maxima 5 7 13 15, means 2.5 4.5 10.5 12.5.
  check_close(nn::MaxPool2d(2)(x), {5.0, 7.0, 13.0, 15.0});
  check_close(nn::AvgPool2d(2)(x), {2.5, 4.5, 10.5, 12.5});
  check_close(nn::AdaptiveAvgPool2d(1)(x), {7.5});
  check_close(nn::AdaptiveMaxPool2d(2)(x), {5.0, 7.0, 13.0, 15.0});
  Tensor x1 = arange(6, kDouble).reshape({1, 1, 6});
  check_close(nn::MaxPool1d(3)(x1), {2.0, 5.0});
  check_close(nn::AvgPool1d(2)(x1), {0.5, 2.5, 4.5});
  check_close(nn::AdaptiveAvgPool1d(2)(x1), {1.0, 4.0});
  CHECK(nn::MaxPool2d(3)->options.stride()[1] == 3);
}

TEST_CASE("forward<Tensor>() and TORCH_MODULE as libtorch spells them") {
  Tensor x = from_values({1.0, -2.0}, {1, 2});
  nn::Sequential seq{nn::ReLU(), Twice()};
  check_close(seq->forward<Tensor>(x), {2.0, 0.0});
  nn::AnyModule any(Twice{});
  check_close(any.forward<Tensor>(x), {2.0, -4.0});
  Twice twice;
  check_close(twice(x), {2.0, -4.0});
}

namespace {
// An options struct written against libtorch: TORCH_ARG gives chained setters and getters.
struct ScaleOptions {
  ScaleOptions(double factor) : factor_(factor) {}  // NOLINT
  TORCH_ARG(double, factor);
  TORCH_ARG(bool, negate) = false;
};
}  // namespace

TEST_CASE("TORCH_ARG declares options with chained setters, as libtorch") {
  ScaleOptions o = ScaleOptions(2.5).negate(true);
  CHECK(o.factor() == 2.5);
  CHECK(o.negate());
  o.factor(4.0);
  CHECK(o.factor() == 4.0);
  CHECK_FALSE(ScaleOptions(1.0).negate());
}
