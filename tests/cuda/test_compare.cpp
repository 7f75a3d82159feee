// CUDA parity of comparisons, logical and bitwise ops, isclose/allclose and equal
// (core/ops/compare.cpp): every dtype, every operand layout, NaN and infinities, and the
// host bools of equal/allclose.
#include <cmath>

#include "cuda/elementwise_layouts.h"

using namespace ember;
using namespace ember::test;

namespace {

/// Small integer values in every dtype, so that equal elements are common.
MakeInput small_values(ScalarType t) {
  return [=](IntArrayRef s, int) {
    return t == kBool ? make_input(s, kBool) : make_input(s, kLong, -2, 3).to(t);
  };
}

/// Floats with NaN, infinities and signed zeros, and a partner for them.
Tensor specials(ScalarType t) {
  return tensor({NAN, 1.0, -0.0, 0.0, INFINITY, -INFINITY, 2.0, NAN, INFINITY, 1.0}).to(t);
}
Tensor other_specials(ScalarType t) {
  return tensor({NAN, NAN, 0.0, -0.0, INFINITY, INFINITY, 2.001, 1.0, 3.0, 1.0}).to(t);
}

using CompareOp = Tensor (*)(const Tensor&, const Tensor&);
using CompareScalarOp = Tensor (*)(const Tensor&, const Scalar&);

struct NamedCompare {
  const char* name;
  CompareOp op;
  CompareScalarOp scalar_op;
};

const NamedCompare kComparisons[] = {{"eq", eq, eq}, {"ne", ne, ne}, {"lt", lt, lt},
                                     {"le", le, le}, {"gt", gt, gt}, {"ge", ge, ge}};

}  // namespace

TEST_CASE("cuda eq, ne, lt, le, gt, ge: every dtype and layout") {
  for (const NamedCompare& c : kComparisons) {
    INFO("op " << c.name);
    for (ScalarType t : kAllTypes) {
      INFO("dtype " << t);
      check_layouts([op = c.op](const TensorList& x) { return op(x[0], x[1]); }, small_values(t), 2,
                    /*big=*/t == kFloat || t == kUInt8);
      check_parity([op = c.scalar_op](const TensorList& x) { return op(x[0], 1); }, {make_input({4, 5}, t)});
    }
    for (ScalarType t : kFloatTypes)
      check_parity([op = c.op](const TensorList& x) { return op(x[0], x[1]); },
                   {specials(t), other_specials(t)});
    // Mixed dtypes compare in the promoted dtype; a scalar is converted first (uint8 vs -1).
    check_parity([op = c.op](const TensorList& x) { return op(x[0], x[1]); },
                 {make_input({3, 4}, kInt64, -3, 3), make_input({4}, kHalf)});
    check_parity([op = c.scalar_op](const TensorList& x) { return op(x[0], -1); },
                 {make_input({8}, kUInt8, 0, 255)});
    check_parity([op = c.scalar_op](const TensorList& x) { return op(x[0], 0.5); },
                 {make_input({8}, kInt32)});
  }
}

TEST_CASE("cuda comparison operators and results on a strided view") {
  check_parity([](const TensorList& x) { return (x[0].t() < x[1]) == (x[1] >= 0); },
               {make_input({5, 4}, kFloat), make_input({4, 5}, kFloat)});
}

TEST_CASE("cuda logical_and, logical_or, logical_xor: nonzero is true, NaN included") {
  for (ScalarType t : kAllTypes) {
    INFO("dtype " << t);
    check_layouts([](const TensorList& x) { return logical_and(x[0], x[1]); }, small_values(t), 2,
                  /*big=*/t == kBool);
    check_layouts([](const TensorList& x) { return logical_or(x[0], x[1]); }, small_values(t), 2,
                  /*big=*/false);
    check_layouts([](const TensorList& x) { return logical_xor(x[0], x[1]); }, small_values(t), 2,
                  /*big=*/false);
  }
  check_parity([](const TensorList& x) { return logical_xor(x[0], x[1]); },
               {specials(kFloat), make_input({10}, kInt8)});
}

TEST_CASE("cuda bitwise_and, bitwise_or, bitwise_xor: integers and bool") {
  std::vector<ScalarType> types = kIntegralTypes;
  types.push_back(kBool);
  for (ScalarType t : types) {
    INFO("dtype " << t);
    auto make = [t](IntArrayRef s, int) { return make_input(s, t, -100, 100); };
    check_layouts([](const TensorList& x) { return x[0] & x[1]; }, make, 2, /*big=*/t == kInt64);
    check_layouts([](const TensorList& x) { return x[0] | x[1]; }, make, 2, /*big=*/false);
    check_layouts([](const TensorList& x) { return x[0] ^ x[1]; }, make, 2, /*big=*/false);
    if (t != kBool)
      check_parity([](const TensorList& x) { return x[0].bitwise_xor(-3); }, {make_input({9}, t, -50, 50)});
    check_parity(
        [](const TensorList& x) {
          Tensor v = x[0].t();
          v.copy_(v & x[1]);
          return x[0];
        },
        {make_input({5, 5}, t, -100, 100), make_input({5}, t, -100, 100)});
  }
  check_parity([](const TensorList& x) { return x[0] | x[1]; },
               {make_input({6}, kBool), make_input({6}, kInt16, -9, 9)});
  for (ScalarType t : kFloatTypes) {
    Tensor x = make_input({3}, t);
    std::string type = scalar_type_name(t);
    check_cuda_error([](const TensorList& v) { return v[0] & v[1]; }, {x, x},
                     "\"bitwise_and_cuda\" not implemented for '" + type + "'");
    check_cuda_error([](const TensorList& v) { return v[0] | v[1]; }, {x, x},
                     "\"bitwise_or_cuda\" not implemented for '" + type + "'");
    check_cuda_error([](const TensorList& v) { return v[0] ^ v[1]; }, {x, x},
                     "\"bitwise_xor_cuda\" not implemented for '" + type + "'");
  }
}

TEST_CASE("cuda isclose: every dtype, tolerances, NaN and infinities") {
  for (ScalarType t : kAllTypes) {
    INFO("dtype " << t);
    // Input 1 is input 0 nudged: by a relative 2e-3 at most (floats) or by -1, 0, +1 (integers).
    auto near = [t](IntArrayRef s, int k) {
      if (t == kBool) return make_input(s, kBool);
      Tensor a = make_input(s, kDouble, -100, 100, /*seed=*/777);  // the same for both inputs
      if (is_floating_point(t)) return (k == 0 ? a : a * (1 + make_input(s, kDouble, -2e-3, 2e-3))).to(t);
      Tensor i = a.to(kLong);
      return (k == 0 ? i : i + make_input(s, kLong, -1, 2)).to(t);
    };
    check_layouts([](const TensorList& x) { return isclose(x[0], x[1]); }, near, 2, /*big=*/t == kHalf);
    check_layouts([](const TensorList& x) { return isclose(x[0], x[1], 1e-3, 0.5); }, near, 2, /*big=*/false);
    check_layouts([](const TensorList& x) { return isclose(x[0], x[1], 0, 0); }, near, 2, /*big=*/false);
    check_layouts([](const TensorList& x) { return isclose(x[0], x[1], 0, 1); }, near, 2, /*big=*/false);
  }
  for (ScalarType t : kFloatTypes) {
    INFO("dtype " << t);
    for (bool equal_nan : {false, true})
      check_parity([equal_nan](const TensorList& x) { return isclose(x[0], x[1], 1e-2, 1e-3, equal_nan); },
                   {specials(t), other_specials(t)});
  }
  // Integer differences that wrap (PyTorch computes |a - b| in the integer dtype).
  check_parity([](const TensorList& x) { return isclose(x[0], x[1], 0, 10); },
               {tensor({std::numeric_limits<int64_t>::min(), int64_t{5}}),
                tensor({std::numeric_limits<int64_t>::max(), int64_t{-5}})});
  check_parity([](const TensorList& x) { return isclose(x[0], x[1], 0, 10); },
               {tensor({-128, 100}, kChar), tensor({127, 95}, kChar)});
  Tensor f = make_input({3}, kFloat), d = make_input({3}, kDouble);
  check_error_parity([](const TensorList& x) { return isclose(x[0], x[1]); }, {f, d});
  check_error_parity([](const TensorList& x) { return isclose(x[0], x[0], -1.0); }, {f});
  check_error_parity([](const TensorList& x) { return isclose(x[0], x[0], 1e-5, -1.0); }, {f});
}

TEST_CASE("cuda equal and allclose give the CPU's host bools") {
  for (ScalarType t : kAllTypes) {
    INFO("dtype " << t);
    Tensor a = make_input({4, 33}, t), b = a.clone();
    Tensor c = b.clone();
    c.view({-1}).narrow(0, 100, 1).fill_(t == kBool ? Scalar(true) : Scalar(2));
    c.view({-1}).narrow(0, 101, 1).fill_(t == kBool ? Scalar(false) : Scalar(-1));
    Device g = cuda_device();
    CHECK(equal(a.to(g), b.to(g)) == equal(a, b));
    CHECK(equal(a.to(g), c.to(g)) == equal(a, c));
    CHECK(equal(a.to(g).t(), b.to(g).t()) == equal(a.t(), b.t()));
    CHECK(equal(a.to(g), a.to(g).view({2, 2, 33})) == false);  // shapes differ
    CHECK(allclose(a.to(g), b.to(g)) == allclose(a, b));
    CHECK(allclose(a.to(g), c.to(g)) == allclose(a, c));
  }
  Tensor big = make_input({(1 << 20) + 3}, kFloat);
  Tensor nudged = big * (1 + 1e-7);
  Device g = cuda_device();
  CHECK(allclose(big.to(g), nudged.to(g)) == allclose(big, nudged));
  CHECK(allclose(big.to(g), (nudged + 1e-3).to(g)) == allclose(big, nudged + 1e-3));
  CHECK(equal(big.to(g), big.to(g).clone()));
  for (bool equal_nan : {false, true})
    CHECK(allclose(specials(kFloat).to(g), specials(kFloat).to(g), 1e-5, 1e-8, equal_nan) ==
          allclose(specials(kFloat), specials(kFloat), 1e-5, 1e-8, equal_nan));
}
