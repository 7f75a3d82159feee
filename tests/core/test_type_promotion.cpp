// Type promotion as the elementwise ops apply it: the tensor-tensor table over the ten dtypes,
// the tiers (dimensioned tensor > 0-dim tensor > scalar), scalar operands, in-place casts.
#include "op_check.h"
#include "promotion_table.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::values;

namespace {

constexpr ScalarType kAll[10] = {kBool, kByte, kChar, kShort, kInt, kLong, kHalf, kBFloat16, kFloat, kDouble};

using ember::test::kExpected;

Tensor ones_of(ScalarType t, IntArrayRef shape = {2}) { return ones(shape, TensorOptions().dtype(t)); }

}  // namespace

TEST_CASE("test_type_promotion: tensor-tensor ops follow torch.promote_types over all dtypes") {
  for (int i = 0; i < 10; ++i) {
    for (int j = 0; j < 10; ++j) {
      Tensor a = ones_of(kAll[i]), b = ones_of(kAll[j]);
      ScalarType want = kExpected[i][j];
      INFO("a " << kAll[i] << ", b " << kAll[j]);
      CHECK(promote_types(kAll[i], kAll[j]) == want);
      CHECK(add(a, b).dtype() == want);
      CHECK(mul(a, b).dtype() == want);
      CHECK(maximum(a, b).dtype() == want);
      CHECK(where(ones({2}, kBool), a, b).dtype() == want);
      // True division and atan2 promote integers (and bool) to the default float dtype.
      CHECK(div(a, b).dtype() == (is_floating_point(want) ? want : kFloat));
      CHECK(atan2(a, b).dtype() == (is_floating_point(want) ? want : kFloat));
      // Comparisons compute in the promoted dtype but always return bool.
      CHECK(eq(a, b).dtype() == kBool);
      check_close(add(a, b), want == kBool ? std::vector<double>{1, 1} : std::vector<double>{2, 2});
    }
  }
}

TEST_CASE("test_type_promotion: 0-dim tensors only raise the category") {
  // Each case: torch.ones(2, dtype=A) + torch.tensor(1, dtype=B) -> dtype, checked with PyTorch 1.13.
  struct Case {
    ScalarType dim, zero_dim, want;
  };
  const Case cases[] = {
      {kInt, kDouble, kDouble},  // higher category: promote_types(int32, float64)
      {kFloat, kDouble, kFloat}, {kInt, kLong, kInt},     {kByte, kChar, kByte},
      {kBool, kLong, kLong},     {kHalf, kDouble, kHalf}, {kBFloat16, kHalf, kBFloat16},
  };
  for (const Case& c : cases) {
    INFO(c.dim << " with 0-dim " << c.zero_dim);
    Tensor r = ones_of(c.dim) + ones({}, TensorOptions().dtype(c.zero_dim));
    CHECK(r.dtype() == c.want);
    CHECK(r.sizes().vec() == std::vector<int64_t>{2});
  }
  // Two 0-dim tensors promote as usual: uint8 + int8 -> int16; int32 + half -> half.
  CHECK((ones({}, kByte) + ones({}, kChar)).dtype() == kShort);
  CHECK((ones({}, kInt) + ones({}, kHalf)).dtype() == kHalf);
}

TEST_CASE("test_type_promotion: scalar operands") {
  CHECK((ones_of(kInt) * 2.5).dtype() == kFloat);
  check_close(ones_of(kInt) * 2.5, {2.5, 2.5});
  CHECK((ones_of(kLong) * 2.5).dtype() == kFloat);
  CHECK((ones_of(kHalf) + 2.5).dtype() == kHalf);
  CHECK((ones_of(kHalf) + Scalar(1e10)).dtype() == kHalf);  // a double scalar does not widen
  CHECK((ones_of(kBool) + 2).dtype() == kLong);
  CHECK((ones_of(kBool) + true).dtype() == kBool);
  CHECK((ones_of(kBool) + 2.5).dtype() == kFloat);
  CHECK((ones_of(kChar) + 2).dtype() == kChar);
  CHECK((ones({}, kInt) + 2.5).dtype() == kFloat);
  CHECK((ones({}, kBFloat16) + 2).dtype() == kBFloat16);
  // The scalar is converted to the tensor's dtype: 1000 wraps to 232 in uint8 (1 + 232 = 233).
  Tensor u = ones_of(kByte) + 1000;
  CHECK(u.dtype() == kByte);
  check_close(u, {233, 233});
  // Scalar-tensor forms.
  CHECK((2.5 - ones_of(kInt)).dtype() == kFloat);
  CHECK((2 / ones_of(kInt)).dtype() == kFloat);
  CHECK(pow(2, ones_of(kInt)).dtype() == kInt);
  CHECK(pow(2.5, ones_of(kInt)).dtype() == kFloat);
  CHECK(pow(ones_of(kInt), 2.5).dtype() == kFloat);
  CHECK(pow(ones_of(kBool), 2).dtype() == kLong);
}

TEST_CASE("test_type_promotion: comparisons compute in the promoted dtype") {
  Tensor i = tensor({1, 2});
  // 2 < 1.5 is false only if compared as float (as int, 1.5 would truncate to 1).
  CHECK(values(i < 1.5) == std::vector<double>{1, 0});
  CHECK(values(i == 1.0) == std::vector<double>{1, 0});
  // uint8 vs -1: the scalar becomes uint8 255, as PyTorch does (1 < 255, 2 < 255).
  Tensor u = tensor({1, 2}, kByte);
  CHECK(values(u < -1) == std::vector<double>{1, 1});
  // int vs float tensors: 1 == 1.0, 2 != 2.5.
  CHECK(values(eq(i, tensor({1.0, 2.5}))) == std::vector<double>{1, 0});
}

TEST_CASE("test_type_promotion: where, addcmul and friends") {
  Tensor c = tensor({true, false});
  CHECK(where(c, 1.0, 2).dtype() == kFloat);
  CHECK(where(c, 1, 2).dtype() == kLong);
  CHECK(where(c, true, false).dtype() == kBool);
  CHECK(where(c, tensor({1, 2}, kInt), 1).dtype() == kInt);
  CHECK(where(c, tensor({1, 2}, kInt), 2.5).dtype() == kFloat);
  CHECK(where(c, 2.5, tensor({1, 2}, kHalf)).dtype() == kHalf);
  CHECK(where(c, tensor({1, 2}), tensor({1.0, 2.0}, kDouble)).dtype() == kDouble);
  // addcmul(int, float, int) -> float: 5 + 1.5 * 5 = 12.5, -3 + (-2.5)(-3) = 4.5.
  Tensor r = addcmul(tensor({5, -3}), tensor({1.5, -2.5}), tensor({5, -3}));
  CHECK(r.dtype() == kFloat);
  check_close(r, {12.5, 4.5});
  CHECK(addcdiv(tensor({1.0}, kHalf), tensor({1.0}, kDouble), tensor({2.0}, kDouble)).dtype() == kDouble);
  CHECK(bitwise_and(tensor({1, 0}), tensor({true, false})).dtype() == kLong);
  CHECK(bitwise_and(tensor({true, false}), true).dtype() == kBool);
  CHECK(bitwise_and(tensor({true, false}), 3).dtype() == kLong);
  CHECK(remainder(tensor({1, 2}, kInt), 2.5).dtype() == kFloat);
  CHECK(div(tensor({7, 8}, kShort), 2, "floor").dtype() == kShort);
}

TEST_CASE("test_type_promotion: in-place ops keep self's dtype and refuse lossy casts") {
  Tensor l = zeros({3}, kLong);
  check_error([&] { l.add_(1.5); }, "result type Float can't be cast to the desired output type Long");
  check_error([&] { l.add_(ones({3})); }, "result type Float can't be cast to the desired output type Long");
  check_error([&] { l.div_(2); }, "result type Float can't be cast to the desired output type Long");
  check_error([&] { l.atan2_(ones({3}, kLong)); },
              "result type Float can't be cast to the desired output type Long");
  check_error([&] { l.remainder_(1.5); }, "result type Float can't be cast to the desired output type Long");
  check_error([&] { l.pow_(2.0); }, "result type Float can't be cast to the desired output type Long");
  check_error([&] { l.addcmul_(ones({3}), ones({3})); },
              "result type Float can't be cast to the desired output type Long");
  Tensor b = zeros({3}, kBool);
  check_error([&] { b.add_(1); }, "result type Long can't be cast to the desired output type Bool");
  // Widening sources are fine: the result is cast back to self's dtype.
  Tensor f = ones({3});
  f.add_(ones({3}, kDouble));
  CHECK(f.dtype() == kFloat);
  check_close(f, {2, 2, 2});
  l.add_(ones({3}, kInt));
  CHECK(l.dtype() == kLong);
  check_close(l, {1, 1, 1});
  l.div_(tensor({2, 2, 2}), "floor");
  check_close(l, {0, 0, 0});
}
