// Padding layers (nn/modules/padding.h) and the 3-d reflection / replication padding they
// reach through F::pad: options as libtorch spells them, PyTorch's numbers for the 3-d modes
// (tests/nn/fixtures/make_padding_expected.py), float64 gradcheck, reprs and errors.
#include <sstream>

#include "ember/core/ops/padding.h"
#include "ember/nn/functional/padding.h"
#include "ember/nn/modules/padding.h"
#include "module_check.h"
#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::check_gradgrad;
using ember::test::rand_leaf;
using ember::test::repr;
using ember::test::seq;
using ember::test::shape;
namespace F = ember::nn::functional;

TEST_CASE("padding modules: option defaults and one number for every side") {
  nn::ReflectionPad2dOptions r(3);
  CHECK(r.padding().vec() == std::vector<int64_t>{3, 3, 3, 3});
  nn::ConstantPad3dOptions c(1, 0.5);
  CHECK(c.padding().vec() == std::vector<int64_t>{1, 1, 1, 1, 1, 1});
  CHECK(c.value() == 0.5);
  CHECK(nn::ReplicationPad1dOptions({1, 2}).padding().vec() == std::vector<int64_t>{1, 2});
  CHECK(nn::ZeroPad2dOptions({1, 0, 2, 0}).padding(2).padding().vec() == std::vector<int64_t>{2, 2, 2, 2});
  check_error([] { nn::ReflectionPad1dOptions({1, 2, 3}); }, "Expected 2 values, but instead got 3");
}

TEST_CASE("padding modules: forward equals F::pad in the module's mode") {
  manual_seed(0);
  Tensor x3 = rand({2, 3, 5}, kDouble), x4 = rand({2, 3, 4, 5}, kDouble), x5 = rand({2, 3, 4, 5, 3}, kDouble);
  auto fpad = [](const Tensor& x, std::vector<int64_t> p, F::PadFuncOptions::mode_t m, double v = 0) {
    auto o = F::PadFuncOptions(std::move(p)).mode(m);
    if (std::holds_alternative<enumtype::kConstant>(m)) o.value(v);
    return F::pad(x, o);
  };
  check_close(nn::ReflectionPad1d(2)(x3), fpad(x3, {2, 2}, kReflect));
  check_close(nn::ReflectionPad2d(nn::ReflectionPad2dOptions({1, 0, 2, 3}))(x4),
              fpad(x4, {1, 0, 2, 3}, kReflect));
  check_close(nn::ReflectionPad3d(nn::ReflectionPad3dOptions({1, 2, 0, 1, 2, 1}))(x5),
              fpad(x5, {1, 2, 0, 1, 2, 1}, kReflect));
  check_close(nn::ReplicationPad1d(nn::ReplicationPad1dOptions({3, 1}))(x3), fpad(x3, {3, 1}, kReplicate));
  check_close(nn::ReplicationPad2d(2)(x4), fpad(x4, {2, 2, 2, 2}, kReplicate));
  check_close(nn::ReplicationPad3d(1)(x5), fpad(x5, {1, 1, 1, 1, 1, 1}, kReplicate));
  check_close(nn::ZeroPad2d(nn::ZeroPad2dOptions({1, 2, 0, 3}))(x4), fpad(x4, {1, 2, 0, 3}, kConstant));
  check_close(nn::ConstantPad1d(2, 3.5)(x3), fpad(x3, {2, 2}, kConstant, 3.5));
  check_close(nn::ConstantPad2d(nn::ConstantPad2dOptions({1, -1, 2, 0}, -2))(x4),
              fpad(x4, {1, -1, 2, 0}, kConstant, -2));
  check_close(nn::ConstantPad3d(1, 0.25)(x5), fpad(x5, {1, 1, 1, 1, 1, 1}, kConstant, 0.25));
  // Constant padding pads the trailing dims of any rank, as Python's F.pad does.
  CHECK(shape(nn::ConstantPad1d(2, 3.5)(x4)) == std::vector<int64_t>{2, 3, 4, 9});
  // Unbatched inputs.
  CHECK(shape(nn::ReflectionPad3d(1)(x5[0])) == std::vector<int64_t>{3, 6, 7, 5});
  check_close(nn::ReplicationPad3d(1)(x5[0]), nn::ReplicationPad3d(1)(x5)[0]);
}

TEST_CASE("3-d reflection and replication padding: PyTorch numbers") {
  Tensor x = seq({1, 2, 3, 3, 3});
  // tests/nn/fixtures/make_padding_expected.py
  check_close(F::pad(x, F::PadFuncOptions({1, 0, 0, 1, 1, 1}).mode(kReflect))[0][1].flatten(),
              {37, 36, 37, 38, 40, 39, 40, 41, 43, 42, 43, 44, 40, 39, 40, 41, 28, 27, 28, 29,
               31, 30, 31, 32, 34, 33, 34, 35, 31, 30, 31, 32, 37, 36, 37, 38, 40, 39, 40, 41,
               43, 42, 43, 44, 40, 39, 40, 41, 46, 45, 46, 47, 49, 48, 49, 50, 52, 51, 52, 53,
               49, 48, 49, 50, 37, 36, 37, 38, 40, 39, 40, 41, 43, 42, 43, 44, 40, 39, 40, 41});
  check_close(
      F::pad(x, F::PadFuncOptions({1, 2, 0, 1, 2, 0}).mode(kReplicate))[0][0].flatten(),
      {0,  0,  1,  2,  2,  2,  3,  3,  4,  5,  5,  5,  6,  6,  7,  8,  8,  8,  6,  6,  7,  8,  8,  8,
       0,  0,  1,  2,  2,  2,  3,  3,  4,  5,  5,  5,  6,  6,  7,  8,  8,  8,  6,  6,  7,  8,  8,  8,
       0,  0,  1,  2,  2,  2,  3,  3,  4,  5,  5,  5,  6,  6,  7,  8,  8,  8,  6,  6,  7,  8,  8,  8,
       9,  9,  10, 11, 11, 11, 12, 12, 13, 14, 14, 14, 15, 15, 16, 17, 17, 17, 15, 15, 16, 17, 17, 17,
       18, 18, 19, 20, 20, 20, 21, 21, 22, 23, 23, 23, 24, 24, 25, 26, 26, 26, 24, 24, 25, 26, 26, 26});
  // Integer tensors are gathered as they are.
  CHECK(F::pad(seq({1, 1, 2, 2, 2}, kLong), F::PadFuncOptions({1, 1, 1, 1, 1, 1}).mode(kReplicate)).dtype() ==
        kLong);
}

TEST_CASE("3-d reflection and replication padding: gradcheck") {
  manual_seed(2);
  Tensor x = rand_leaf({2, 2, 3, 4, 3});
  check_grad([](const TensorList& t) { return reflection_pad3d(t[0], {2, 1, 0, 3, 1, 2}); }, {x});
  check_grad([](const TensorList& t) { return replication_pad3d(t[0], {3, 0, 1, 2, 2, 4}); }, {x});
  check_gradgrad([](const TensorList& t) { return reflection_pad3d(t[0], {1, 1, 1, 1, 1, 1}); }, {x});
  Tensor u = rand_leaf({2, 3, 2, 3});
  check_grad([](const TensorList& t) { return replication_pad3d(t[0], {1, 2, 1, 0, 1, 1}); }, {u});
  check_grad(
      [](const TensorList& t) {
        return F::pad(t[0], F::PadFuncOptions({1, 2, 1, 0}).mode(kReflect));
      },
      {u});
  check_grad(
      [](const TensorList& t) {
        return F::pad(t[0], F::PadFuncOptions({1, 2, -1, 0, 2, 1}).value(0.5));
      },
      {x});
}

TEST_CASE("padding modules: Python's reprs") {
  CHECK(repr(*nn::ConstantPad1d(2, 3.5)) == "ConstantPad1d(padding=(2, 2), value=3.5)");
  CHECK(repr(*nn::ConstantPad2d(nn::ConstantPad2dOptions({1, 2, 3, 4}, 0))) ==
        "ConstantPad2d(padding=(1, 2, 3, 4), value=0.0)");
  CHECK(repr(*nn::ConstantPad3d(1, -1)) == "ConstantPad3d(padding=(1, 1, 1, 1, 1, 1), value=-1.0)");
  CHECK(repr(*nn::ZeroPad2d(2)) == "ZeroPad2d((2, 2, 2, 2))");
  CHECK(repr(*nn::ZeroPad2d(nn::ZeroPad2dOptions({1, 0, 2, 0}))) == "ZeroPad2d((1, 0, 2, 0))");
  CHECK(repr(*nn::ReflectionPad1d(2)) == "ReflectionPad1d((2, 2))");
  CHECK(repr(*nn::ReflectionPad2d(nn::ReflectionPad2dOptions({1, 1, 2, 0}))) ==
        "ReflectionPad2d((1, 1, 2, 0))");
  CHECK(repr(*nn::ReflectionPad3d(1)) == "ReflectionPad3d((1, 1, 1, 1, 1, 1))");
  CHECK(repr(*nn::ReplicationPad1d(nn::ReplicationPad1dOptions({1, 2}))) == "ReplicationPad1d((1, 2))");
  CHECK(repr(*nn::ReplicationPad2d(1)) == "ReplicationPad2d((1, 1, 1, 1))");
  CHECK(repr(*nn::ReplicationPad3d(nn::ReplicationPad3dOptions({1, 2, 3, 4, 5, 6}))) ==
        "ReplicationPad3d((1, 2, 3, 4, 5, 6))");
  // No parameters, no buffers; clone keeps the options.
  nn::ReflectionPad3d m(2);
  CHECK(m->parameters().empty());
  CHECK(m->buffers().empty());
  auto c = std::dynamic_pointer_cast<nn::ReflectionPad3dImpl>(m->clone());
  REQUIRE(c);
  CHECK(c->options.padding().vec() == std::vector<int64_t>{2, 2, 2, 2, 2, 2});
}

TEST_CASE("padding: PyTorch's errors for wrong ranks and sizes") {
  Tensor x = seq({1, 2, 3, 3, 3});
  check_error(
      [&] {
        nn::ReflectionPad3d(nn::ReflectionPad3dOptions({3, 0, 0, 0, 0, 0}))(x);
      },
      "Argument #4: Padding size should be less than the corresponding input dimension, but got: padding "
      "(3, 0) at dimension 4 of input [1, 2, 3, 3, 3]");
  check_error(
      [&] {
        nn::ReflectionPad3d(nn::ReflectionPad3dOptions({0, 0, 0, 0, 3, 0}))(x);
      },
      "Argument #8: Padding size should be less than the corresponding input dimension, but got: padding "
      "(3, 0) at dimension 2 of input [1, 2, 3, 3, 3]");
  check_error(
      [] {
        reflection_pad3d(seq({3, 3}), {1, 1, 1, 1, 1, 1});
      },
      "Expected 4D or 5D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for "
      "input, but got: [3, 3]");
  check_error([] { replication_pad3d(seq({1, 3, 3, 3}), {1, 1, 1, 1}); }, "padding size is expected to be 6");
  check_error(
      [&] {
        replication_pad3d(x, {0, 0, 0, 0, -2, -2});
      },
      "input (D: 3 H: 3, W: 3) is too small. Calculated output D: -1 H: 3 W: 3");
  check_error(
      [] {
        nn::ReflectionPad1d(1)(seq({3, 3, 3, 3}));
      },
      "Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now");
  check_error([] { nn::ReplicationPad3d(1)(seq({3, 3})); }, "Padding length too large");
}
