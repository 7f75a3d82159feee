// CUDA parity of the activations and clamp (core/ops/activation.cpp): relu, leaky_relu, elu,
// selu, gelu (exact and tanh), silu, mish, softplus, hardtanh, relu6, clamp with scalar and
// tensor bounds; every dtype they take on CUDA, every operand layout, special values, in-place
// forms, gradients at and away from the kinks (the masks of core/ops/value_test.h), and the
// dtypes each op refuses.
#include "cuda/unary_cases.h"

using namespace ember;
using namespace ember::test;

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

/// The floating activations, with parameters that reach each formula's branches.
const std::vector<UnaryCase>& float_activations() {
  static const std::vector<UnaryCase> ops = {
      {"leaky_relu", [](const Tensor& t) { return leaky_relu(t); },
       [](Tensor& t) -> Tensor& { return leaky_relu_(t); }},
      {"leaky_relu(0.2)", [](const Tensor& t) { return leaky_relu(t, 0.2); },
       [](Tensor& t) -> Tensor& { return leaky_relu_(t, 0.2); }},
      {"elu", [](const Tensor& t) { return elu(t); }, nullptr},
      {"elu(0.5, 2, 1.5)", [](const Tensor& t) { return elu(t, 0.5, 2, 1.5); }, nullptr},
      {"selu", [](const Tensor& t) { return selu(t); }, nullptr},
      {"gelu", [](const Tensor& t) { return gelu(t); }, nullptr},
      {"gelu(tanh)", [](const Tensor& t) { return gelu(t, "tanh"); }, nullptr},
      {"silu", [](const Tensor& t) { return silu(t); }, nullptr},
      {"mish", [](const Tensor& t) { return mish(t); }, nullptr},
      {"softplus", [](const Tensor& t) { return softplus(t); }, nullptr},
      // beta 2, threshold 1: the linear branch from x > 0.5.
      {"softplus(2, 1)", [](const Tensor& t) { return softplus(t, 2, 1); }, nullptr},
  };
  return ops;
}

/// Activations that keep integer dtypes (bool refused).
const std::vector<UnaryCase>& numeric_activations() {
  static const std::vector<UnaryCase> ops = {
      {"relu", [](const Tensor& t) { return relu(t); }, [](Tensor& t) -> Tensor& { return t.relu_(); }, -9,
       9},
      {"hardtanh", [](const Tensor& t) { return hardtanh(t); }, nullptr, -3, 3},
      {"hardtanh(-2, 5)", [](const Tensor& t) { return hardtanh(t, -2, 5); }, nullptr, -9, 9},
      {"relu6", [](const Tensor& t) { return relu6(t); }, nullptr, -9, 9},
  };
  return ops;
}

/// Inputs at the kinks of every activation and clamp bound used here, and beside them.
Tensor kinks(ScalarType t) {
  return values_of({-6, -5.5, -2, -1.5, -1, -0.5, -0.25, 0, 0.25, 0.5, 0.75, 1, 1.5, 2, 5, 6, 6.5, 10, 25},
                   t);
}

}  // namespace

TEST_CASE("cuda floating activations: every floating dtype and layout, special values, in place") {
  for (const UnaryCase& c : float_activations()) {
    for (ScalarType t : kFloatTypes) check_unary_forward(c, t);
    auto f = c.f;
    check_error_parity([f](const TensorList& x) { return f(x[0]); }, {make_input({3}, kInt64)});
  }
}

TEST_CASE("cuda floating activations: gradients, also at the kinks and at special values") {
  for (const UnaryCase& c : float_activations()) {
    for (ScalarType t : kFloatTypes) {
      check_unary_grad(c, t);
      INFO(std::string(c.name) << " backward at the kinks, " << std::string(dtype_name(t)));
      auto f = c.f;
      check_grad_parity([f](const TensorList& x) { return f(x[0]); }, {kinks(t)}, grad_tol(t));
      check_grad_parity([f](const TensorList& x) { return f(x[0]); }, {float_specials(t)}, grad_tol(t));
    }
  }
}

TEST_CASE("cuda relu, hardtanh, relu6: every dtype but bool") {
  for (const UnaryCase& c : numeric_activations()) {
    for (ScalarType t : kNumericTypes) check_unary_forward(c, t);
    for (ScalarType t : kIntegralTypes) {
      INFO(std::string(c.name) << " at the ends of " << std::string(dtype_name(t)));
      auto f = c.f;
      check_parity([f](const TensorList& x) { return f(x[0]); }, {int_extremes(t)});
    }
    auto f = c.f;
    check_error_parity([f](const TensorList& x) { return f(x[0]); }, {make_input({3}, kBool)});
    for (ScalarType t : kFloatTypes) {
      check_unary_grad(c, t);
      INFO(std::string(c.name) << " backward at the kinks, " << std::string(dtype_name(t)));
      check_grad_parity([f](const TensorList& x) { return f(x[0]); }, {kinks(t)}, grad_tol(t));
      check_grad_parity([f](const TensorList& x) { return f(x[0]); }, {float_specials(t)}, grad_tol(t));
    }
  }
  check_error_parity([](const TensorList& x) { return const_cast<Tensor&>(x[0]).relu_(); },
                     {make_input({3}, kBool)});
  // relu_ in place under autograd: backward reads the saved output of the rebased node.
  check_grad_parity(
      [](const TensorList& x) {
        Tensor y = x[0] * 1;
        y.relu_();
        return y;
      },
      {kinks(kFloat)});
}

TEST_CASE("cuda clamp with scalar bounds: every dtype, absent and crossed bounds, in place") {
  struct Bounds {
    std::optional<Scalar> lo, hi;
  };
  const std::vector<Bounds> bounds = {
      {-1.5, 2}, {0, std::nullopt}, {std::nullopt, 1}, {2, -1} /* lo > hi gives hi */, {-2, 2}};
  for (ScalarType t : kAllTypes) {
    for (const Bounds& b : bounds) {
      INFO("dtype " << std::string(dtype_name(t)) << ", bounds " << (b.lo ? b.lo->toDouble() : -kInf)
                    << " .. " << (b.hi ? b.hi->toDouble() : kInf));
      auto op = [b](const TensorList& x) { return x[0].clamp(b.lo, b.hi); };
      check_layouts(
          op, [&](IntArrayRef s, int) { return make_input(s, t, -4, 4); }, 1, /*big=*/t == kFloat);
      if (is_floating_point(t)) check_parity(op, {float_specials(t)});
      if (t != kBool) check_parity(op, {is_floating_point(t) ? kinks(t) : int_extremes(t)});
    }
    if (t == kBool) continue;
    check_parity(
        [](const TensorList& x) {
          Tensor y = x[0].clone();
          y.t().clamp_(-1, 2);
          return y;
        },
        {make_input({5, 4}, t, -4, 4)});
  }
  // A floating bound promotes an integer tensor; an integer bound keeps it.
  check_parity([](const TensorList& x) { return x[0].clamp(-1.5, 2.5); },
               {make_input({4, 5}, kInt32, -4, 4)});
  check_parity([](const TensorList& x) { return x[0].clamp(std::nullopt, 3); },
               {make_input({4, 5}, kUInt8, 0, 9)});
  // A nan bound makes every element nan.
  check_parity([](const TensorList& x) { return x[0].clamp(kNan, 1); }, {make_input({3, 4}, kFloat)});
  check_parity([](const TensorList& x) { return x[0].clamp(-1, kNan); }, {make_input({3, 4}, kHalf)});
  check_parity([](const TensorList& x) { return clip(x[0], -0.5, 0.5); }, {make_input({3, 4}, kBFloat16)});
  check_parity([](const TensorList& x) { return clamp_min(x[0], 0.5); }, {make_input({3, 4}, kDouble)});
  check_parity([](const TensorList& x) { return clamp_max(x[0], 0.5); }, {make_input({3, 4}, kDouble)});
  check_error_parity([](const TensorList& x) { return x[0].clamp(std::nullopt, std::optional<Scalar>()); },
                     {make_input({3}, kFloat)});
  // An integer self cannot hold a clamp to floating bounds.
  check_error_parity([](const TensorList& x) { return const_cast<Tensor&>(x[0]).clamp_(0.5, 1.5); },
                     {make_input({3}, kInt64)});
}

TEST_CASE("cuda clamp with scalar bounds: gradients, also at the bounds") {
  for (ScalarType t : kFloatTypes) {
    INFO("dtype " << std::string(dtype_name(t)));
    for (auto [lo, hi] : {std::pair{-1.0, 1.0}, std::pair{0.5, 0.5}, std::pair{2.0, -1.0}}) {
      auto op = [lo, hi](const TensorList& x) { return x[0].clamp(lo, hi); };
      check_grad_parity(op, {make_input({5, 7}, t)}, grad_tol(t));
      check_grad_parity(op, {kinks(t)}, grad_tol(t));
      check_grad_parity(op, {float_specials(t)}, grad_tol(t));
    }
    check_grad_parity([](const TensorList& x) { return clamp_min(x[0].t(), 0); }, {make_input({7, 5}, t)},
                      grad_tol(t));
  }
}

TEST_CASE("cuda clamp with tensor bounds: every dtype, broadcasting, absent bounds") {
  for (ScalarType t : kAllTypes) {
    INFO("dtype " << std::string(dtype_name(t)));
    // x in [-4, 4), min in [-3, 1), max in [0, 3): the bounds cross in places.
    auto make = [t](IntArrayRef s, int k) {
      return make_input(s, t, k == 0 ? -4 : k == 1 ? -3 : 0, k == 0 ? 4 : k == 1 ? 1 : 3);
    };
    check_layouts(
        [](const TensorList& x) {
          return x[0].clamp(std::optional<Tensor>(x[1]), std::optional<Tensor>(x[2]));
        },
        make, 3, /*big=*/t == kFloat);
    check_parity([](const TensorList& x) { return x[0].clamp(std::optional<Tensor>(x[1])); },
                 {make_input({4, 5}, t, -4, 4), make_input({5}, t, -1, 1)});
    check_parity(
        [](const TensorList& x) { return x[0].clamp(std::optional<Tensor>(), std::optional<Tensor>(x[1])); },
        {make_input({4, 5}, t, -4, 4), make_input({4, 1}, t, -1, 1)});
  }
  // Bounds of other dtypes promote; nan bounds give nan; crossed bounds give max.
  check_parity(
      [](const TensorList& x) {
        return x[0].clamp(std::optional<Tensor>(x[1]), std::optional<Tensor>(x[2]));
      },
      {make_input({3, 4}, kInt32, -5, 5), make_input({4}, kHalf), make_input({3, 1}, kFloat)});
  check_parity(
      [](const TensorList& x) {
        return x[0].clamp(std::optional<Tensor>(x[1]), std::optional<Tensor>(x[2]));
      },
      {make_input({4}, kFloat), values_of({kNan, -1, 2, -kInf}, kFloat),
       values_of({1, kNan, -1, kInf}, kFloat)});
}

TEST_CASE("cuda clamp with tensor bounds: gradients of x, min and max") {
  for (ScalarType t : kFloatTypes) {
    INFO("dtype " << std::string(dtype_name(t)));
    auto op = [](const TensorList& x) {
      return x[0].clamp(std::optional<Tensor>(x[1]), std::optional<Tensor>(x[2]));
    };
    check_grad_parity(op, {make_input({4, 5}, t), make_input({5}, t, -2, 0), make_input({4, 1}, t, 0, 2)},
                      grad_tol(t));
    // Ties with the bounds and crossed bounds (min > max routes the gradient to max).
    check_grad_parity(op,
                      {values_of({-1, 0, 1, 2, 3, 0.5}, t), values_of({-1, 0.5, 1, 3, 0, 0.5}, t),
                       values_of({1, 0, 1, 2, 1, 0.5}, t)},
                      grad_tol(t));
  }
}
