// Comparisons, equal/isclose/allclose, logical and bitwise ops: values against plain loops and
// PyTorch's answers, dtypes, broadcasting, errors, empty and 0-dim tensors.
#include <cmath>
#include <limits>

#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::from_values;
using ember::test::values;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

std::vector<double> bools(std::initializer_list<int> v) { return std::vector<double>(v.begin(), v.end()); }

}  // namespace

TEST_CASE("test_compare: comparisons against a plain loop") {
  manual_seed(3);
  // Small integers so that ties occur; compared as float64 tensors and as int32/int64.
  Tensor a = randint(-2, 3, {4, 5}), b = randint(-2, 3, {5});
  std::vector<double> va = values(a), vb = values(b);
  using F = std::function<Tensor(const Tensor&, const Tensor&)>;
  using FS = std::function<Tensor(const Tensor&, const Scalar&)>;
  using R = std::function<bool(double, double)>;
  const std::vector<std::tuple<const char*, F, FS, R>> ops = {
      {"eq", [](const Tensor& x, const Tensor& y) { return x == y; },
       [](const Tensor& x, const Scalar& y) { return x == y; }, [](double x, double y) { return x == y; }},
      {"ne", [](const Tensor& x, const Tensor& y) { return x != y; },
       [](const Tensor& x, const Scalar& y) { return x != y; }, [](double x, double y) { return x != y; }},
      {"lt", [](const Tensor& x, const Tensor& y) { return x < y; },
       [](const Tensor& x, const Scalar& y) { return x < y; }, [](double x, double y) { return x < y; }},
      {"le", [](const Tensor& x, const Tensor& y) { return x <= y; },
       [](const Tensor& x, const Scalar& y) { return x <= y; }, [](double x, double y) { return x <= y; }},
      {"gt", [](const Tensor& x, const Tensor& y) { return x > y; },
       [](const Tensor& x, const Scalar& y) { return x > y; }, [](double x, double y) { return x > y; }},
      {"ge", [](const Tensor& x, const Tensor& y) { return x >= y; },
       [](const Tensor& x, const Scalar& y) { return x >= y; }, [](double x, double y) { return x >= y; }},
  };
  for (const auto& [name, op, op_scalar, ref] : ops) {
    INFO("op " << name);
    std::vector<double> want, want_scalar;
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 5; ++j) {
        want.push_back(ref(va[i * 5 + j], vb[j]));
        want_scalar.push_back(ref(va[i * 5 + j], 0.5));
      }
    for (ScalarType t : {kLong, kInt, kDouble, kHalf, kFloat, kChar}) {
      Tensor r = op(a.to(t), b.to(t));
      CHECK(r.dtype() == kBool);
      CHECK(r.sizes().vec() == std::vector<int64_t>{4, 5});
      CHECK(values(r) == want);
    }
    // Mixed dtypes (int64 vs float64) and a fractional scalar: compared in floating point.
    CHECK(values(op(a, b.to(kDouble))) == want);
    CHECK(values(op(a, from_values({0.5}, {}).expand({4, 5}).contiguous())) == want_scalar);
    CHECK(values(op_scalar(a, 0.5)) == want_scalar);
    CHECK(values(op_scalar(a.to(kHalf), 0.5)) == want_scalar);
  }
  CHECK(values(a.eq(0.5)) == std::vector<double>(20, 0));
  CHECK(values(a.ne(0.5)) == std::vector<double>(20, 1));
  CHECK(values(lt(tensor({1, 2}), 1.5)) == bools({1, 0}));
  CHECK(values(tensor({1.0, 2.0}).le(1.0)) == bools({1, 0}));
  CHECK(values(tensor({1.0, 2.0}).gt(tensor({0.0, 2.0}))) == bools({1, 0}));
  CHECK(values(ge(tensor({1.0, 2.0}), 2)) == bools({0, 1}));
  CHECK(values(tensor({true, false}) == true) == bools({1, 0}));
  CHECK(values(tensor({true, false}) < tensor({true, true})) == bools({0, 1}));
}

TEST_CASE("test_compare: NaN, infinities, grad and shapes") {
  Tensor n = tensor({kNaN, kInf, -kInf, 1.0});
  CHECK(values(n == n) == bools({0, 1, 1, 1}));
  CHECK(values(n != n) == bools({1, 0, 0, 0}));
  CHECK(values(n < kInf) == bools({0, 0, 1, 1}));
  // Bool outputs carry no gradient.
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  Tensor c = x > 1.5;
  CHECK(!c.requires_grad());
  CHECK(!c.grad_fn());
  check_error(
      [&] {
        zeros({2, 3}) == zeros({2, 4});
      },
      "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1");
  CHECK((zeros({0, 3}) < zeros({3})).sizes().vec() == std::vector<int64_t>{0, 3});
  Tensor s = tensor(2.0) >= tensor(2.0);
  CHECK(s.dim() == 0);
  CHECK(s.item<bool>());
}

TEST_CASE("test_compare: equal") {
  CHECK(equal(tensor({1, 2}), tensor({1, 2})));
  CHECK(!equal(tensor({1, 2}), tensor({1, 3})));
  CHECK(!equal(tensor({1, 1}), tensor({1})));  // shapes differ: no broadcasting
  CHECK(equal(tensor({1}), tensor({1.0})));    // PyTorch 1.13 compares across dtypes
  CHECK(!equal(tensor({1.0, kNaN}), tensor({1.0, kNaN})));
  CHECK(equal(zeros({0, 2}), zeros({0, 2})));
  CHECK(!equal(zeros({0, 2}), zeros({2, 0})));
  CHECK(equal(tensor(3), tensor(3)));
  // Non-contiguous operands compare by value.
  Tensor m = arange(6, kFloat).view({2, 3});
  CHECK(equal(m.t(), m.t().contiguous()));
}

TEST_CASE("test_compare: isclose and allclose") {
  // From PyTorch: torch.isclose([1, nan, inf, inf], [1+1e-6, nan, inf, -inf], equal_nan=...).
  Tensor a = tensor({1.0, kNaN, kInf, kInf}), b = tensor({1.0 + 1e-6, kNaN, kInf, -kInf});
  CHECK(values(isclose(a, b, 1e-5, 1e-8, true)) == bools({1, 1, 1, 0}));
  CHECK(values(isclose(a, b)) == bools({1, 0, 1, 0}));
  // Integers: |a - b| <= atol + rtol |b|: 0 <= 0.05; 1 <= 0.55 fails; 1 <= 5.05.
  CHECK(values(isclose(tensor({1, 10, 100}), tensor({1, 11, 101}), 0.05, 0)) == bools({1, 0, 1}));
  CHECK(values(isclose(tensor({1, 2}), tensor({1, 3}), 0, 0)) == bools({1, 0}));
  CHECK(values(isclose(tensor({true, false}), tensor({true, true}), 0, 1)) == bools({1, 1}));
  // The tolerance check against a plain loop.
  manual_seed(4);
  Tensor x = randn({50}, kDouble), y = x + randn({50}, kDouble) * 1e-3;
  std::vector<double> vx = values(x), vy = values(y), want;
  for (size_t i = 0; i < vx.size(); ++i)
    want.push_back(std::fabs(vx[i] - vy[i]) <= 1e-3 + 1e-2 * std::fabs(vy[i]));
  CHECK(values(isclose(x, y, 1e-2, 1e-3)) == want);
  CHECK(allclose(x, x));
  CHECK(!allclose(x, y));
  CHECK(allclose(x, y, 0, 1.0));
  CHECK(!allclose(tensor({1.0, 2.0}), tensor({1.0})));  // broadcasts: 2 vs 1
  CHECK(allclose(tensor({1.0, 1.0}), tensor({1.0})));
  CHECK(allclose(zeros({0}), zeros({0})));
  check_error([&] { isclose(tensor({1}), tensor({1.0})); }, "Long did not match Float");
  check_error([&] { isclose(x, x, -1); }, "rtol must be greater than or equal to zero, but got -1");
  check_error([&] { isclose(x, x, 0, -0.5); }, "atol must be greater than or equal to zero, but got -0.5");
}

TEST_CASE("test_compare: logical ops") {
  Tensor p = tensor({true, true, false, false}), q = tensor({true, false, true, false});
  CHECK(values(logical_and(p, q)) == bools({1, 0, 0, 0}));
  CHECK(values(logical_or(p, q)) == bools({1, 1, 1, 0}));
  CHECK(values(logical_xor(p, q)) == bools({0, 1, 1, 0}));
  CHECK(values(p.logical_and(q)) == bools({1, 0, 0, 0}));
  CHECK(values(p.logical_or(q)) == bools({1, 1, 1, 0}));
  CHECK(values(p.logical_xor(q)) == bools({0, 1, 1, 0}));
  // Any dtypes: nonzero is true, NaN included.
  Tensor r = logical_or(tensor({0.0, kNaN, 0.0}), tensor({0, 0, 3}));
  CHECK(r.dtype() == kBool);
  CHECK(values(r) == bools({0, 1, 1}));
  CHECK(values(logical_and(tensor({5, -3}), tensor({1.5, 0.0}))) == bools({1, 0}));
  CHECK(values(logical_xor(tensor({2}, kByte), tensor({0.5, 0.0}, kHalf))) == bools({0, 1}));
  CHECK(logical_and(zeros({0, 2}), zeros({2})).sizes().vec() == std::vector<int64_t>{0, 2});
}

TEST_CASE("test_compare: bitwise ops") {
  Tensor a = tensor({12, 10, -1}), b = tensor({10, 6, 5});
  // 1100 & 1010 = 1000 (8), 1010 & 0110 = 0010 (2), -1 & 5 = 5; | and ^ likewise.
  check_close(bitwise_and(a, b), {8, 2, 5});
  check_close(bitwise_or(a, b), {14, 14, -1});
  check_close(bitwise_xor(a, b), {6, 12, -6});
  check_close(a & b, {8, 2, 5});
  check_close(a | b, {14, 14, -1});
  check_close(a ^ b, {6, 12, -6});
  check_close(a.bitwise_and(3), {0, 2, 3});
  check_close(a.bitwise_or(1), {13, 11, -1});
  check_close(a.bitwise_xor(-1), {-13, -11, 0});
  check_close(bitwise_and(a, 3), {0, 2, 3});
  check_close(bitwise_or(a, 1), {13, 11, -1});
  check_close(bitwise_xor(a, -1), {-13, -11, 0});
  // From PyTorch: torch.tensor([3, 4]) ^ torch.tensor([5, 1], dtype=torch.uint8) -> [6, 5] int64.
  Tensor m = tensor({3, 4}) ^ tensor({5, 1}, kByte);
  CHECK(m.dtype() == kLong);
  check_close(m, {6, 5});
  Tensor u = tensor({0xF0, 0x0F}, kByte) | tensor({0x01, 0x10}, kByte);
  CHECK(u.dtype() == kByte);
  check_close(u, {0xF1, 0x1F});
  Tensor p = tensor({true, true, false}), q = tensor({true, false, false});
  CHECK(values(p & q) == bools({1, 0, 0}));
  CHECK(values(p | q) == bools({1, 1, 0}));
  CHECK(values(p ^ q) == bools({0, 1, 0}));
  CHECK((p & q).dtype() == kBool);
  CHECK(values(bitwise_and(p, true)) == bools({1, 1, 0}));
  Tensor f = tensor({1.5, 2.5});
  check_error([&] { bitwise_and(f, f); }, "\"bitwise_and_cpu\" not implemented for 'Float'");
  check_error([&] { f | f; }, "\"bitwise_or_cpu\" not implemented for 'Float'");
  check_error([&] { f ^ f; }, "\"bitwise_xor_cpu\" not implemented for 'Float'");
  check_error([&] { bitwise_and(tensor({1, 2}), 2.5); }, "\"bitwise_and_cpu\" not implemented for 'Float'");
  check_error([&] { bitwise_xor(tensor({1}, kDouble), tensor({1})); },
              "\"bitwise_xor_cpu\" not implemented for 'Double'");
  CHECK((zeros({0}, kLong) & zeros({0}, kLong)).numel() == 0);
  CHECK((tensor(6) & tensor(3)).item<int64_t>() == 2);
}
