// CUDA parity of the arithmetic binary ops (core/ops/binary.cpp): add/sub with alpha, mul,
// div (true, trunc, floor), remainder, fmod, pow (tensor, scalar exponent, scalar base),
// atan2, maximum, minimum; every dtype PyTorch's CUDA kernels take, every operand layout,
// in-place forms, gradients, and the dtypes each op refuses.
#include <cmath>

#include "cuda/elementwise_layouts.h"

using namespace ember;
using namespace ember::test;

namespace {

/// Inputs of dtype t in [lo, hi).
MakeInput inputs(ScalarType t, double lo = -3, double hi = 3) {
  return [=](IntArrayRef s, int) { return make_input(s, t, lo, hi); };
}

/// A divisor with no zeros (the CPU raises on integer division by zero): zeros become 1.
Tensor nonzero_divisor(const Tensor& b) { return b.masked_fill(b == 0, 1); }

/// Input 0 in [lo, hi), input 1 a divisor in [lo, hi) without zeros.
MakeInput division_inputs(ScalarType t, double lo = -9, double hi = 9) {
  return [=](IntArrayRef s, int k) {
    Tensor x = make_input(s, t, lo, hi);
    return k == 1 ? nonzero_divisor(x) : x;
  };
}

const std::vector<ScalarType> kSignedAndFloat = {kInt8, kInt16,    kInt32, kInt64,
                                                 kHalf, kBFloat16, kFloat, kDouble};

}  // namespace

TEST_CASE("cuda add and sub with alpha, every dtype and layout") {
  for (ScalarType t : kAllTypes) {
    INFO("dtype " << t);
    check_layouts([](const TensorList& x) { return x[0] + x[1]; }, inputs(t), 2);
    Scalar alpha = is_floating_point(t) ? Scalar(0.5) : t == kBool ? Scalar(true) : Scalar(3);
    check_layouts([alpha](const TensorList& x) { return add(x[0], x[1], alpha); }, inputs(t), 2,
                  /*big=*/false);
    check_parity([](const TensorList& x) { return x[0] + 2; }, {make_input({4, 5}, t)});
    if (t == kBool) continue;  // subtraction of bools is refused (below)
    check_layouts([alpha](const TensorList& x) { return sub(x[0], x[1], alpha); }, inputs(t), 2);
    check_parity([](const TensorList& x) { return 1 - x[0]; }, {make_input({4, 5}, t)});
    check_parity([](const TensorList& x) { return rsub(x[0], x[1], 2); },
                 {make_input({4, 5}, t), make_input({5}, t)});
  }
  // Integers wrap on overflow, as on the CPU.
  check_parity([](const TensorList& x) { return add(x[0], x[1], 7); },
               {make_input({64}, kUInt8, 0, 255), make_input({64}, kUInt8, 0, 255)});
  check_parity([](const TensorList& x) { return x[0] - x[1]; },
               {full({3}, std::numeric_limits<int64_t>::min(), kLong), full({3}, int64_t{1}, kLong)});
  // Mixed dtypes are promoted before the kernel.
  check_parity([](const TensorList& x) { return x[0] + x[1]; },
               {make_input({3, 4}, kInt32), make_input({4}, kHalf)});
  check_parity([](const TensorList& x) { return x[0] - x[1]; },
               {make_input({3, 4}, kUInt8), make_input({4}, kInt8)});
}

TEST_CASE("cuda add and sub refuse what the CPU refuses") {
  Tensor b = make_input({3}, kBool), i = make_input({3}, kInt32);
  check_error_parity([](const TensorList& x) { return x[0] - x[1]; }, {b, b});
  check_error_parity([](const TensorList& x) { return x[0] - x[1]; }, {b, i});
  check_error_parity([](const TensorList& x) { return add(x[0], x[1], 0.5); }, {i, i});
  check_error_parity([](const TensorList& x) { return add(x[0], x[1], true); }, {i, i});
}

TEST_CASE("cuda mul, every dtype and layout") {
  for (ScalarType t : kAllTypes) {
    INFO("dtype " << t);
    check_layouts([](const TensorList& x) { return x[0] * x[1]; }, inputs(t), 2);
    check_parity([](const TensorList& x) { return x[0] * 3; }, {make_input({4, 5}, t)});
  }
  check_parity(
      [](const TensorList& x) { return x[0] * x[1]; },
      {make_input({100}, kInt64, 1 << 30, 1LL << 40), make_input({100}, kInt64, 1 << 30, 1LL << 40)});
  check_parity([](const TensorList& x) { return x[0] * 2.5; },
               {make_input({4, 5}, kInt16)});  // promotes to float
}

TEST_CASE("cuda div: true division promotes integers to float") {
  for (ScalarType t : kAllTypes) {
    INFO("dtype " << t);
    check_layouts([](const TensorList& x) { return x[0] / x[1]; }, division_inputs(t), 2,
                  /*big=*/is_floating_point(t));
    check_parity([](const TensorList& x) { return x[0] / 4; }, {make_input({4, 5}, t)});
    check_parity([](const TensorList& x) { return 3 / x[0]; }, {nonzero_divisor(make_input({4, 5}, t))});
  }
  // Floating division by zero gives infinities and NaN on both devices.
  check_parity([](const TensorList& x) { return x[0] / x[1]; },
               {tensor({1.0, -1.0, 0.0, 2.0}), tensor({0.0, 0.0, 0.0, -0.0})});
}

TEST_CASE("cuda div with rounding_mode trunc and floor") {
  for (const char* mode : {"trunc", "floor"}) {
    INFO("rounding_mode " << mode);
    for (ScalarType t : kNumericTypes) {
      INFO("dtype " << t);
      check_layouts([mode](const TensorList& x) { return div(x[0], x[1], mode); }, division_inputs(t), 2,
                    /*big=*/t == kInt32 || t == kFloat);
      check_parity([mode](const TensorList& x) { return div(x[0], -3, mode); },
                   {make_input({4, 5}, t, -20, 20)});
    }
    // The most negative integer divided by -1 wraps; signs of zero and floats near integers.
    check_parity(
        [mode](const TensorList& x) { return div(x[0], x[1], mode); },
        {tensor({std::numeric_limits<int32_t>::min(), -7, 7, -7}, kInt), tensor({-1, 2, -2, -2}, kInt)});
    check_parity([mode](const TensorList& x) { return div(x[0], x[1], mode); },
                 {tensor({-0.0, 1.0, -1.0, 5.0, 1e-30, 0.3}), tensor({3.0, 0.0, 0.0, -0.1, -1e30, 0.1})});
    check_cuda_error([mode](const TensorList& x) { return div(x[0], x[1], mode); },
                     {make_input({3}, kBool), make_input({3}, kBool)},
                     std::string("\"div_") + mode + "_cuda\" not implemented for 'Bool'");
  }
  check_error_parity([](const TensorList& x) { return div(x[0], x[1], "round"); },
                     {tensor({1.0}), tensor({2.0})});
}

TEST_CASE("cuda remainder and fmod: the divisor's sign and the dividend's") {
  for (ScalarType t : kNumericTypes) {
    INFO("dtype " << t);
    check_layouts([](const TensorList& x) { return remainder(x[0], x[1]); }, division_inputs(t), 2,
                  /*big=*/t == kInt64 || t == kHalf);
    check_layouts([](const TensorList& x) { return fmod(x[0], x[1]); }, division_inputs(t), 2,
                  /*big=*/t == kInt16 || t == kFloat);
    check_parity([](const TensorList& x) { return x[0] % -4; }, {make_input({4, 5}, t, -20, 20)});
    check_parity([](const TensorList& x) { return fmod(x[0], 2.5); }, {make_input({4, 5}, t, -20, 20)});
  }
  check_parity(
      [](const TensorList& x) { return remainder(x[0], x[1]); },
      {tensor({std::numeric_limits<int64_t>::min(), int64_t{-7}}), tensor({int64_t{-1}, int64_t{3}})});
  check_parity([](const TensorList& x) { return remainder(x[0], x[1]); },
               {tensor({5.0, -5.0, 0.0, 1.0}), tensor({0.0, 3.0, -2.0, INFINITY})});
  check_cuda_error([](const TensorList& x) { return remainder(x[0], x[1]); },
                   {make_input({3}, kBool), make_input({3}, kBool)},
                   "\"remainder_cuda\" not implemented for 'Bool'");
  check_cuda_error([](const TensorList& x) { return fmod(x[0], x[1]); },
                   {make_input({3}, kBool), make_input({3}, kBool)},
                   "\"fmod_cuda\" not implemented for 'Bool'");
}

TEST_CASE("cuda integer division by zero: the CPU raises, CUDA gives 0 without a host sync") {
  // See cuda/binary.h: detecting it would need a synchronization in every integer division.
  Tensor a = tensor({7, -7, 3}), b = tensor({0, 2, 0});
  Tensor ca = a.to(cuda_device()), cb = b.to(cuda_device());
  CHECK_THROWS_WITH_AS(div(a, b, "floor"), "ZeroDivisionError", Error);
  check_same(div(ca, cb, "trunc"), tensor({0, -3, 0}));
  check_same(div(ca, cb, "floor"), tensor({0, -4, 0}));
  check_same(remainder(ca, cb), tensor({0, 1, 0}));
  check_same(fmod(ca, cb), tensor({0, -1, 0}));
}

TEST_CASE("cuda pow with a tensor exponent") {
  for (ScalarType t : kNumericTypes) {
    INFO("dtype " << t);
    if (is_floating_point(t)) {
      // Positive bases (a negative base to a fractional power is NaN on both devices; tested below).
      check_layouts([](const TensorList& x) { return x[0].pow(x[1]); },
                    [t](IntArrayRef s, int k) { return make_input(s, t, k == 0 ? 0.1 : -3, 3); }, 2,
                    /*big=*/t == kFloat);
    } else {
      check_layouts([](const TensorList& x) { return x[0].pow(x[1]); },
                    [t](IntArrayRef s, int k) { return make_input(s, t, k == 0 ? -5 : -2, k == 0 ? 5 : 9); },
                    2,
                    /*big=*/t == kInt32);
    }
    check_parity([](const TensorList& x) { return pow(2, x[0]); }, {make_input({4, 5}, t, 0, 8)});
  }
  check_parity([](const TensorList& x) { return pow(2.5, x[0]); }, {make_input({4, 5}, kInt32, 0, 8)});
  check_parity([](const TensorList& x) { return x[0].pow(x[1]); },
               {tensor({-2.0, 0.0, 0.0, -8.0, INFINITY}), tensor({0.5, -1.0, 0.0, 1.0 / 3, -2.0})});
  check_cuda_error([](const TensorList& x) { return x[0].pow(x[1]); },
                   {make_input({3}, kBool), make_input({3}, kBool)},
                   "\"pow_cuda\" not implemented for 'Bool'");
}

TEST_CASE("cuda pow with a scalar exponent: the exact special cases of the CPU") {
  for (ScalarType t : kFloatTypes) {
    INFO("dtype " << t);
    for (double e : {0.0, 0.5, 1.0, 2.0, 3.0, -0.5, -1.0, -2.0, 1.7, -2.5}) {
      INFO("exponent " << e);
      check_layouts([e](const TensorList& x) { return x[0].pow(e); }, inputs(t, 0.1, 4), 1,
                    /*big=*/e == 2.0 && t == kFloat);
    }
  }
  for (ScalarType t : kIntegralTypes) {
    INFO("dtype " << t);
    for (int64_t e : {0, 1, 2, 3, 7})
      check_parity([e](const TensorList& x) { return x[0].pow(e); }, {make_input({40}, t, -9, 9)});
  }
  check_parity([](const TensorList& x) { return x[0].pow(2.5); },
               {make_input({4, 5}, kInt32, 0, 9)});  // promotes
  check_error_parity([](const TensorList& x) { return x[0].pow(-1); }, {make_input({3}, kInt32)});
}

TEST_CASE("cuda atan2, maximum, minimum") {
  for (ScalarType t : kAllTypes) {
    INFO("dtype " << t);
    check_layouts([](const TensorList& x) { return atan2(x[0], x[1]); }, inputs(t), 2, /*big=*/t == kFloat);
    check_layouts([](const TensorList& x) { return maximum(x[0], x[1]); }, inputs(t), 2, /*big=*/t == kHalf);
    check_layouts([](const TensorList& x) { return minimum(x[0], x[1]); }, inputs(t), 2, /*big=*/t == kInt8);
  }
  // NaN from either side, signed zeros and infinities.
  Tensor a = tensor({NAN, 1.0, -0.0, 0.0, -INFINITY, 2.0});
  Tensor b = tensor({1.0, NAN, 0.0, -0.0, 3.0, INFINITY});
  for (ScalarType t : kFloatTypes) {
    check_parity([](const TensorList& x) { return maximum(x[0], x[1]); }, {a.to(t), b.to(t)}, Tol{0, 0});
    check_parity([](const TensorList& x) { return minimum(x[0], x[1]); }, {a.to(t), b.to(t)}, Tol{0, 0});
    check_parity([](const TensorList& x) { return atan2(x[0], x[1]); }, {a.to(t), b.to(t)});
  }
}

TEST_CASE("cuda in-place arithmetic, also through strided views") {
  for (ScalarType t : kSignedAndFloat) {
    INFO("dtype " << t);
    auto inplace = [t](std::function<void(Tensor&, const Tensor&)> f, bool divisor = false) {
      Tensor self = make_input({6, 5}, t, -9, 9), other = make_input({6}, t, -9, 9);
      if (divisor) other = nonzero_divisor(other);
      check_parity(
          [&](const TensorList& x) {
            Tensor view = x[0].t();  // (5, 6), other broadcast along rows
            f(view, x[1]);
            return view;
          },
          {self, other});
    };
    inplace([](Tensor& s, const Tensor& o) { s.add_(o, 2); });
    inplace([](Tensor& s, const Tensor&) { s.add_(3); });
    inplace([](Tensor& s, const Tensor& o) { s.sub_(o); });
    inplace([](Tensor& s, const Tensor& o) { s.mul_(o); });
    inplace([](Tensor& s, const Tensor& o) { s.div_(o, "floor"); }, true);
    inplace([](Tensor& s, const Tensor& o) { s.div_(o, "trunc"); }, true);
    inplace([](Tensor& s, const Tensor& o) { s.remainder_(o); }, true);
    inplace([](Tensor& s, const Tensor& o) { s.fmod_(o); }, true);
    inplace([](Tensor& s, const Tensor&) { s.fmod_(3); });
    inplace([](Tensor& s, const Tensor&) { s.pow_(2); });
    if (is_floating_point(t)) {
      inplace([](Tensor& s, const Tensor& o) { s.div_(o); }, true);
      inplace([](Tensor& s, const Tensor&) { s.div_(4); });
      inplace([](Tensor& s, const Tensor& o) { s.atan2_(o); });
    }
  }
  check_error_parity([](const TensorList& x) { return x[0].clone().div_(x[1]); },
                     {make_input({3}, kInt32), make_input({3}, kInt32)});
}

TEST_CASE("cuda gradients of the arithmetic ops") {
  for (ScalarType t : {kFloat, kDouble}) {
    INFO("dtype " << t);
    Tensor a = make_input({3, 4}, t, 0.5, 3), b = make_input({4}, t, 0.5, 3);
    check_grad_parity([](const TensorList& x) { return add(x[0], x[1], 2.5); }, {a, b});
    check_grad_parity([](const TensorList& x) { return sub(x[0], x[1], 0.5); }, {a, b});
    check_grad_parity([](const TensorList& x) { return 2 - x[0]; }, {a});
    check_grad_parity([](const TensorList& x) { return x[0] * x[1]; }, {a, b});
    check_grad_parity([](const TensorList& x) { return x[0] / x[1]; }, {a, b});
    check_grad_parity([](const TensorList& x) { return div(x[0], x[1], "floor"); }, {a, b});
    check_grad_parity([](const TensorList& x) { return remainder(x[0], x[1]); }, {a, b});
    check_grad_parity([](const TensorList& x) { return fmod(x[0], x[1]); }, {a, b});
    check_grad_parity([](const TensorList& x) { return x[0].pow(x[1]); }, {a, b});
    check_grad_parity([](const TensorList& x) { return x[0].pow(3); }, {a});
    check_grad_parity([](const TensorList& x) { return x[0].pow(0); }, {a});
    check_grad_parity([](const TensorList& x) { return pow(2, x[0]); }, {a});
    check_grad_parity([](const TensorList& x) { return atan2(x[0], x[1]); }, {a, b});
    // Ties split the gradient.
    Tensor c = a.clone();
    c.select(0, 1).copy_(b);
    check_grad_parity([](const TensorList& x) { return maximum(x[0], x[1]); }, {c, b});
    check_grad_parity([](const TensorList& x) { return minimum(x[0], x[1]); }, {c, b});
  }
  check_grad_parity([](const TensorList& x) { return x[0] * x[1] + x[0]; },
                    {make_input({8}, kHalf), make_input({8}, kHalf)});
}
