// PyTorch's type promotion rules.
#include "ember/core/type_promotion.h"

namespace ember {
namespace {

int category(ScalarType t) {
  if (t == kBool) return 0;
  if (is_integral(t, false)) return 1;
  return 2;
}

// PyTorch's promotion table for the ten dtypes (index order of ScalarType).
constexpr ScalarType kTable[10][10] = {
    // b1     u1     i1     i2     i4     i8     f2         bf16       f4     f8
    {kBool, kByte, kChar, kShort, kInt, kLong, kHalf, kBFloat16, kFloat, kDouble},        // b1
    {kByte, kByte, kShort, kShort, kInt, kLong, kHalf, kBFloat16, kFloat, kDouble},       // u1
    {kChar, kShort, kChar, kShort, kInt, kLong, kHalf, kBFloat16, kFloat, kDouble},       // i1
    {kShort, kShort, kShort, kShort, kInt, kLong, kHalf, kBFloat16, kFloat, kDouble},     // i2
    {kInt, kInt, kInt, kInt, kInt, kLong, kHalf, kBFloat16, kFloat, kDouble},             // i4
    {kLong, kLong, kLong, kLong, kLong, kLong, kHalf, kBFloat16, kFloat, kDouble},        // i8
    {kHalf, kHalf, kHalf, kHalf, kHalf, kHalf, kHalf, kFloat, kFloat, kDouble},           // f2
    {kBFloat16, kBFloat16, kBFloat16, kBFloat16, kBFloat16, kBFloat16, kFloat, kBFloat16, kFloat, kDouble},
    {kFloat, kFloat, kFloat, kFloat, kFloat, kFloat, kFloat, kFloat, kFloat, kDouble},    // f4
    {kDouble, kDouble, kDouble, kDouble, kDouble, kDouble, kDouble, kDouble, kDouble, kDouble},
};

ScalarType scalar_dtype(const Scalar& s) {
  if (s.isBoolean()) return kBool;
  if (s.isIntegral(false)) return kLong;
  return get_default_dtype();
}

// Three priority tiers as in PyTorch's ResultTypeState.
struct State {
  ScalarType dim = ScalarType::Undefined, zero_dim = ScalarType::Undefined,
             wrapped = ScalarType::Undefined;
};

ScalarType combine(ScalarType acc, ScalarType t) {
  return acc == ScalarType::Undefined ? t : promote_types(acc, t);
}

void update(State& s, const Tensor& t) {
  if (t.dim() > 0) s.dim = combine(s.dim, t.dtype());
  else s.zero_dim = combine(s.zero_dim, t.dtype());
}

ScalarType resolve(ScalarType higher, ScalarType lower) {
  if (higher == ScalarType::Undefined) return lower;
  if (lower == ScalarType::Undefined) return higher;
  return category(lower) > category(higher) ? promote_types(higher, lower) : higher;
}

ScalarType finish(const State& s) { return resolve(resolve(s.dim, s.zero_dim), s.wrapped); }

}  // namespace

ScalarType promote_types(ScalarType a, ScalarType b) {
  return kTable[static_cast<int>(a)][static_cast<int>(b)];
}

ScalarType result_type(const Tensor& a, const Tensor& b) {
  State s;
  update(s, a);
  update(s, b);
  return finish(s);
}

ScalarType result_type(const Tensor& a, const Scalar& b) {
  State s;
  update(s, a);
  s.wrapped = scalar_dtype(b);
  return finish(s);
}

ScalarType result_type(const Scalar& a, const Tensor& b) { return result_type(b, a); }

ScalarType result_type(const TensorList& tensors) {
  State s;
  for (const Tensor& t : tensors) update(s, t);
  return finish(s);
}

ScalarType promote_to_float(ScalarType t) { return is_floating_point(t) ? t : get_default_dtype(); }

bool can_cast(ScalarType from, ScalarType to) {
  if (is_floating_point(from) && is_integral(to, true)) return false;
  if (from != kBool && to == kBool) return false;
  return true;
}

void check_can_cast(ScalarType result, ScalarType out) {
  EMBER_CHECK(can_cast(result, out), "result type ", scalar_type_name(result),
              " can't be cast to the desired output type ", scalar_type_name(out));
}

}  // namespace ember
