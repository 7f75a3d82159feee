// CUDA parity of the unary math ops (core/ops/unary.cpp): the float-producing maps (exp, log,
// trig, sigmoid, erf, ...), neg/abs/sign/square, rounding, frac, logical_not, nan_to_num and
// the isnan tests; every dtype they take on CUDA, every operand layout, special values,
// in-place forms, gradients, and the dtypes each op refuses.
#include "cuda/unary_cases.h"

using namespace ember;
using namespace ember::test;

namespace {

/// The float-producing maps and a range inside each one's domain (asin and acos are nan
/// outside [-1, 1], which the special values cover).
const std::vector<UnaryCase>& float_ops() {
  static const std::vector<UnaryCase> ops = {
      {"exp", [](const Tensor& t) { return t.exp(); }, [](Tensor& t) -> Tensor& { return t.exp_(); }, -3, 3},
      {"exp2", [](const Tensor& t) { return t.exp2(); }, [](Tensor& t) -> Tensor& { return t.exp2_(); }, -3,
       3},
      {"expm1", [](const Tensor& t) { return t.expm1(); }, [](Tensor& t) -> Tensor& { return t.expm1_(); },
       -3, 3},
      {"log", [](const Tensor& t) { return t.log(); }, [](Tensor& t) -> Tensor& { return t.log_(); }, 0.05,
       4},
      {"log2", [](const Tensor& t) { return t.log2(); }, [](Tensor& t) -> Tensor& { return t.log2_(); }, 0.05,
       4},
      {"log10", [](const Tensor& t) { return t.log10(); }, [](Tensor& t) -> Tensor& { return t.log10_(); },
       0.05, 4},
      {"log1p", [](const Tensor& t) { return t.log1p(); }, [](Tensor& t) -> Tensor& { return t.log1p_(); },
       -0.9, 3},
      {"sqrt", [](const Tensor& t) { return t.sqrt(); }, [](Tensor& t) -> Tensor& { return t.sqrt_(); }, 0,
       4},
      {"rsqrt", [](const Tensor& t) { return t.rsqrt(); }, [](Tensor& t) -> Tensor& { return t.rsqrt_(); },
       0.05, 4},
      {"reciprocal", [](const Tensor& t) { return t.reciprocal(); },
       [](Tensor& t) -> Tensor& { return t.reciprocal_(); }, 0.2, 4},
      {"sin", [](const Tensor& t) { return t.sin(); }, [](Tensor& t) -> Tensor& { return t.sin_(); }, -3, 3},
      {"cos", [](const Tensor& t) { return t.cos(); }, [](Tensor& t) -> Tensor& { return t.cos_(); }, -3, 3},
      {"tan", [](const Tensor& t) { return t.tan(); }, [](Tensor& t) -> Tensor& { return t.tan_(); }, -1.3,
       1.3},
      {"asin", [](const Tensor& t) { return t.asin(); }, [](Tensor& t) -> Tensor& { return t.asin_(); },
       -0.95, 0.95},
      {"acos", [](const Tensor& t) { return t.acos(); }, [](Tensor& t) -> Tensor& { return t.acos_(); },
       -0.95, 0.95},
      {"atan", [](const Tensor& t) { return t.atan(); }, [](Tensor& t) -> Tensor& { return t.atan_(); }, -3,
       3},
      {"sinh", [](const Tensor& t) { return t.sinh(); }, [](Tensor& t) -> Tensor& { return t.sinh_(); }, -3,
       3},
      {"cosh", [](const Tensor& t) { return t.cosh(); }, [](Tensor& t) -> Tensor& { return t.cosh_(); }, -3,
       3},
      {"tanh", [](const Tensor& t) { return t.tanh(); }, [](Tensor& t) -> Tensor& { return t.tanh_(); }, -3,
       3},
      {"sigmoid", [](const Tensor& t) { return t.sigmoid(); },
       [](Tensor& t) -> Tensor& { return t.sigmoid_(); }, -6, 6},
      {"erf", [](const Tensor& t) { return t.erf(); }, [](Tensor& t) -> Tensor& { return t.erf_(); }, -3, 3},
      {"erfc", [](const Tensor& t) { return t.erfc(); }, [](Tensor& t) -> Tensor& { return t.erfc_(); }, -3,
       3},
  };
  return ops;
}

/// Ops that keep integer dtypes (bool refused).
const std::vector<UnaryCase>& numeric_ops() {
  static const std::vector<UnaryCase> ops = {
      {"neg", [](const Tensor& t) { return t.neg(); }, [](Tensor& t) -> Tensor& { return t.neg_(); }, -9, 9},
      {"abs", [](const Tensor& t) { return t.abs(); }, [](Tensor& t) -> Tensor& { return t.abs_(); }, -9, 9},
      {"floor", [](const Tensor& t) { return t.floor(); }, [](Tensor& t) -> Tensor& { return t.floor_(); },
       -9, 9},
      {"ceil", [](const Tensor& t) { return t.ceil(); }, [](Tensor& t) -> Tensor& { return t.ceil_(); }, -9,
       9},
      {"round", [](const Tensor& t) { return t.round(); }, [](Tensor& t) -> Tensor& { return t.round_(); },
       -9, 9},
      {"trunc", [](const Tensor& t) { return t.trunc(); }, [](Tensor& t) -> Tensor& { return t.trunc_(); },
       -9, 9},
  };
  return ops;
}

}  // namespace

TEST_CASE("cuda float maps: every floating dtype and layout, special values, in place") {
  for (const UnaryCase& c : float_ops())
    for (ScalarType t : kFloatTypes) check_unary_forward(c, t);
}

TEST_CASE("cuda float maps: integer and bool inputs give the default float dtype") {
  for (const UnaryCase& c : float_ops()) {
    for (ScalarType t : {kBool, kUInt8, kInt32, kInt64}) {
      INFO(std::string(c.name) << " on " << std::string(dtype_name(t)));
      auto f = c.f;
      check_parity([f](const TensorList& x) { return f(x[0]); }, {make_input({4, 6}, t, -3, 4)});
    }
    // An integer self cannot hold the float result, on either device.
    auto f_ = c.f_;
    check_error_parity([f_](const TensorList& x) { return f_(const_cast<Tensor&>(x[0])); },
                       {make_input({3}, kInt32)});
  }
}

TEST_CASE("cuda float maps: gradients") {
  for (const UnaryCase& c : float_ops())
    for (ScalarType t : kFloatTypes) check_unary_grad(c, t);
}

TEST_CASE("cuda neg, abs and rounding keep every dtype but bool") {
  for (const UnaryCase& c : numeric_ops()) {
    for (ScalarType t : kNumericTypes) check_unary_forward(c, t);
    for (ScalarType t : kIntegralTypes) {
      INFO(std::string(c.name) << " at the ends of " << std::string(dtype_name(t)));
      auto f = c.f;
      check_parity([f](const TensorList& x) { return f(x[0]); }, {int_extremes(t)});
    }
    auto f = c.f;
    check_error_parity([f](const TensorList& x) { return f(x[0]); }, {make_input({3}, kBool)});
    auto f_ = c.f_;
    check_error_parity([f_](const TensorList& x) { return f_(const_cast<Tensor&>(x[0])); },
                       {make_input({3}, kBool)});
    for (ScalarType t : kFloatTypes) check_unary_grad(c, t);
  }
}

TEST_CASE("cuda sign: every dtype, and its zero gradient") {
  UnaryCase c{"sign", [](const Tensor& t) { return t.sign(); },
              [](Tensor& t) -> Tensor& { return t.sign_(); }};
  for (ScalarType t : kAllTypes) check_unary_forward(c, t);
  for (ScalarType t : kIntegralTypes)
    check_parity([](const TensorList& x) { return x[0].sign(); }, {int_extremes(t)});
  check_unary_grad(c, kFloat);
}

TEST_CASE("cuda square: every dtype (bool becomes int64), and its gradient") {
  UnaryCase c{"square", [](const Tensor& t) { return t.square(); },
              [](Tensor& t) -> Tensor& { return t.square_(); }, -9, 9};
  for (ScalarType t : kNumericTypes) check_unary_forward(c, t);
  check_parity([](const TensorList& x) { return x[0].square(); }, {make_input({4, 5}, kBool)});
  // uint8 and int8 wrap as on the CPU.
  check_parity([](const TensorList& x) { return x[0].square(); }, {int_extremes(kUInt8)});
  check_parity([](const TensorList& x) { return x[0].square(); }, {int_extremes(kInt8)});
  for (ScalarType t : kFloatTypes) check_unary_grad(c, t);
}

TEST_CASE("cuda frac and round(decimals): floating dtypes only") {
  UnaryCase frac{"frac", [](const Tensor& t) { return t.frac(); },
                 [](Tensor& t) -> Tensor& { return t.frac_(); }, -9, 9};
  for (ScalarType t : kFloatTypes) {
    check_unary_forward(frac, t);
    check_unary_grad(frac, t);
  }
  check_error_parity([](const TensorList& x) { return x[0].frac(); }, {make_input({3}, kInt64)});
  for (int64_t decimals : {0, 1, 3, -1, -2}) {
    INFO("decimals " << decimals);
    for (ScalarType t : kFloatTypes) {
      check_layouts([decimals](const TensorList& x) { return x[0].round(decimals); },
                    [&](IntArrayRef s, int) { return make_input(s, t, -300, 300); }, 1, /*big=*/false);
      check_parity([decimals](const TensorList& x) { return x[0].round(decimals); }, {float_specials(t)});
    }
    check_grad_parity([decimals](const TensorList& x) { return x[0].round(decimals); },
                      {make_input({4, 5}, kFloat)});
  }
  check_error_parity([](const TensorList& x) { return x[0].round(2); }, {make_input({3}, kInt32)});
}

TEST_CASE("cuda logical_not: every dtype, bool out of place, self's dtype in place") {
  for (ScalarType t : kAllTypes) {
    INFO("dtype " << std::string(dtype_name(t)));
    check_layouts([](const TensorList& x) { return x[0].logical_not(); },
                  [&](IntArrayRef s, int) { return make_input(s, t, -2, 2); }, 1, /*big=*/t == kFloat);
    check_parity(
        [](const TensorList& x) {
          Tensor y = x[0].clone();
          y.t().logical_not_();
          return y;
        },
        {make_input({4, 6}, t, -2, 2)});
    if (is_floating_point(t))
      check_parity([](const TensorList& x) { return x[0].logical_not(); }, {float_specials(t)});
  }
}

TEST_CASE("cuda nan_to_num: default and given replacements, and its gradient") {
  for (ScalarType t : kFloatTypes) {
    INFO("dtype " << std::string(dtype_name(t)));
    check_parity([](const TensorList& x) { return x[0].nan_to_num(); }, {float_specials(t)});
    check_parity([](const TensorList& x) { return x[0].nan_to_num(1.5, 100.0, -100.0); },
                 {float_specials(t)});
    // Replacements past float16's range become inf there, as on the CPU.
    check_parity([](const TensorList& x) { return x[0].nan_to_num(std::nullopt, 1e10, -1e10); },
                 {float_specials(t)});
    check_layouts([](const TensorList& x) { return x[0].nan_to_num(0.0, 1.0, -1.0); },
                  [&](IntArrayRef s, int) { return make_input(s, t).log(); }, 1, /*big=*/t == kFloat);
    check_grad_parity([](const TensorList& x) { return x[0].nan_to_num(); }, {float_specials(t)},
                      grad_tol(t));
  }
  for (ScalarType t : {kBool, kUInt8, kInt64})
    check_parity([](const TensorList& x) { return x[0].nan_to_num(); }, {make_input({3, 4}, t)});
}

TEST_CASE("cuda isnan, isinf, isfinite: every dtype") {
  for (ScalarType t : kAllTypes) {
    INFO("dtype " << std::string(dtype_name(t)));
    Tensor x = is_floating_point(t) ? float_specials(t) : make_input({5, 3}, t);
    check_parity([](const TensorList& x) { return x[0].isnan(); }, {x});
    check_parity([](const TensorList& x) { return x[0].isinf(); }, {x});
    check_parity([](const TensorList& x) { return x[0].isfinite(); }, {x});
  }
  check_layouts([](const TensorList& x) { return x[0].isfinite(); },
                [](IntArrayRef s, int) { return make_input(s, kFloat).log(); }, 1);
}
