// softmax / log_softmax (core/ops/softmax.cpp): the fast kernels against the double loop
// reference and against softmax's definition written here, PyTorch 1.13 fixture values,
// every dim (last, inner, 0-dim, empty), non-contiguous inputs, dtype argument, float
// gradcheck/gradgradcheck (also through the backward ops' own backward), error texts.
#include <cmath>
#include <limits>

#include "ember/core/ops/softmax.h"
#include "fixtures/loss_fixtures.h"
#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::check_gradgrad;
using ember::test::rand_leaf;
using ember::test::seq;
using ember::test::shape;
using ember::test::values;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// The fixture logits: 2 sin(0.37 k), k = 0..11, as (3, 4).
Tensor fixture_logits() { return (seq({3, 4}) * 0.37).sin() * 2; }

/// softmax by its definition, exp(x_i) / sum_j exp(x_j), along `dim` of a 2-d tensor
/// (no max shift: the inputs here are small).
std::vector<double> naive_softmax_2d(const Tensor& x, int64_t dim) {
  std::vector<double> v = values(x), out(v.size());
  int64_t r = x.size(0), c = x.size(1);
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) {
      double sum = 0;
      for (int64_t k = 0; k < (dim == 1 ? c : r); ++k) sum += std::exp(dim == 1 ? v[i * c + k] : v[k * c + j]);
      out[i * c + j] = std::exp(v[i * c + j]) / sum;
    }
  return out;
}

/// Rows [a_i, b_i] as an (n, 2) tensor.
Tensor stack_pairs(const Tensor& a, const Tensor& b) { return ember::stack({a, b}, 1); }

}  // namespace

TEST_CASE("softmax: definition, fixtures and the reference loop") {
  Tensor x = fixture_logits();
  check_close(softmax(x, 1), naive_softmax_2d(x, 1), 1e-12);
  check_close(softmax(x, 0), naive_softmax_2d(x, 0), 1e-12);
  check_close(x.softmax(-1), ember::test::loss_fixtures::softmax_dim1, 1e-12);
  check_close(x.log_softmax(0), ember::test::loss_fixtures::log_softmax_dim0, 1e-12);
  // log_softmax = log(softmax).
  check_close(log_softmax(x, 1), values(softmax(x, 1).log()), 1e-12);
  // Hand-worked: softmax([0, log 3]) = [1/4, 3/4]; log_softmax = [log 1/4, log 3/4].
  Tensor h = tensor({0.0, std::log(3.0)}, kDouble);
  check_close(softmax(h, 0), {0.25, 0.75}, 1e-15);
  check_close(log_softmax(h, 0), {std::log(0.25), std::log(0.75)}, 1e-15);
}

TEST_CASE("softmax: every dim of a 4-d tensor, float and double, against the reference") {
  Tensor x = randn({2, 3, 4, 5}, kDouble) * 3;
  for (int64_t d = -4; d < 4; ++d) {
    for (bool log : {false, true}) {
      Tensor ref = detail::softmax_reference(x, d, log);
      check_close(log ? log_softmax(x, d) : softmax(x, d), ref, 1e-12);
      Tensor f = x.to(kFloat);
      Tensor got = log ? f.log_softmax(d) : f.softmax(d);
      CHECK(got.dtype() == kFloat);
      check_close(got, ref, 1e-5, 1e-5);
    }
  }
}

TEST_CASE("softmax: large rows, parallel chunks and big logits stay finite") {
  Tensor x = randn({300, 257}, kFloat) * 50 + 1000;  // exp(1000) would overflow unshifted
  check_close(softmax(x, 1), detail::softmax_reference(x, 1, false), 1e-6, 1e-4);
  check_close(log_softmax(x, 1), detail::softmax_reference(x, 1, true), 1e-3, 1e-5);
  check_close(softmax(x, 0), detail::softmax_reference(x, 0, false), 1e-6, 1e-4);
  check_close(softmax(x, 1).sum(1), values(ones({300}, kDouble)), 1e-5);
}

TEST_CASE("softmax: float kernels' exp is accurate over the whole range") {
  // Rows [0, v]: softmax = [1 / (1 + e^v), e^v / (1 + e^v)], v from -86 to 86 (float's exp
  // range, both signs of the shifted logit), compared in double to 2 float ulps.
  Tensor v = linspace(-86, 86, 4001, kDouble);
  Tensor rows = stack_pairs(zeros({4001}, kDouble), v);
  std::vector<double> vv = values(v.to(kFloat)), expected;  // the float-rounded logits
  for (double e : vv) {
    double p1 = 1 / (1 + std::exp(e));
    expected.push_back(p1);
    expected.push_back(1 / (1 + std::exp(-e)));
  }
  check_close(softmax(rows.to(kFloat), 1), expected, 1e-30, 2.5e-7);
  check_close(softmax(rows.to(kFloat).t(), 0).t(), expected, 1e-30, 2.5e-7);  // the strided kernel
  // Underflow gives exactly 0 and log_softmax stays exact; NaN spreads over its row only.
  check_close(softmax(tensor({0.0f, -200.0f}), 0), {1.0, 0.0}, 0, 0);
  check_close(log_softmax(tensor({0.0f, -200.0f}), 0), {0.0, -200.0}, 0, 0);
  std::vector<double> nan_rows = values(softmax(tensor({{std::nan(""), 1.0}, {0.0, 0.0}}, kFloat), 1));
  CHECK((std::isnan(nan_rows[0]) && std::isnan(nan_rows[1]) && nan_rows[2] == 0.5 && nan_rows[3] == 0.5));
}

TEST_CASE("softmax: non-contiguous input, half and bfloat16, dtype argument") {
  Tensor base = randn({5, 4}, kDouble);
  Tensor t = base.t();  // (4, 5), strides (1, 4)
  CHECK(!t.is_contiguous());
  check_close(softmax(t, 1), detail::softmax_reference(t.contiguous(), 1, false), 1e-12);
  check_close(log_softmax(t, 0), detail::softmax_reference(t.contiguous(), 0, true), 1e-12);
  Tensor h = base.to(kHalf);
  check_close(softmax(h, 1), detail::softmax_reference(h, 1, false), 2e-3, 1e-2);
  check_close(log_softmax(base.to(kBFloat16), 1), detail::softmax_reference(base.to(kBFloat16), 1, true), 3e-2, 2e-2);
  // dtype casts first: an integer input becomes a float softmax.
  Tensor ints = tensor({1, 2, 3});
  Tensor s = softmax(ints, 0, kFloat);
  CHECK(s.dtype() == kFloat);
  check_close(s, naive_softmax_2d(tensor({1.0, 2.0, 3.0}, kDouble).view({1, 3}), 1), 1e-6);
  CHECK(log_softmax(base.to(kFloat), 1, kDouble).dtype() == kDouble);
}

TEST_CASE("softmax: 0-dim, empty, infinities") {
  Tensor s = scalar_tensor(2.5, kDouble);
  check_close(softmax(s, 0), {1.0});
  check_close(softmax(s, -1), {1.0});
  check_close(log_softmax(s, 0), {0.0});
  CHECK(shape(softmax(s, 0)).empty());
  CHECK(shape(softmax(zeros({2, 0}), 1)) == std::vector<int64_t>{2, 0});
  CHECK(shape(log_softmax(zeros({0, 3}), 1)) == std::vector<int64_t>{0, 3});
  // -inf logits get probability 0 (log_softmax -inf); all -inf is NaN as in PyTorch.
  check_close(softmax(tensor({-kInf, 0.0}, kDouble), 0), {0.0, 1.0});
  check_close(log_softmax(tensor({-kInf, 0.0}, kDouble), 0), {-kInf, 0.0});
  CHECK(std::isnan(values(softmax(tensor({-kInf, -kInf}, kDouble), 0))[0]));
}

TEST_CASE("softmax: errors") {
  check_error([] { softmax(tensor({1, 2}), 0); }, "\"softmax_lastdim_kernel_impl\" not implemented for 'Long'");
  check_error([] { log_softmax(tensor({1, 2}), 0); }, "\"log_softmax_lastdim_kernel_impl\" not implemented for 'Long'");
  check_error([] { softmax(tensor({{1, 2}}), 0); }, "\"softmax_kernel_impl\" not implemented for 'Long'");
  check_error([] { softmax(zeros({2, 3}), 2); },
              "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
  check_error([] { softmax(scalar_tensor(1.0), 1); },
              "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
}

TEST_CASE("softmax: backward values by hand and node names") {
  // y = softmax([0, log 3]) = [1/4, 3/4]; with g = [1, 0]: sum(g y) = 1/4,
  // dx = y (g - 1/4) = [1/4 * 3/4, 3/4 * -1/4] = [3/16, -3/16].
  Tensor x = tensor({0.0, std::log(3.0)}, kDouble).requires_grad_();
  Tensor y = softmax(x, 0);
  CHECK(y.grad_fn()->name() == "SoftmaxBackward0");
  (y * tensor({1.0, 0.0}, kDouble)).sum().backward();
  check_close(x.grad(), {3.0 / 16, -3.0 / 16}, 1e-15);
  // log_softmax with g = [1, 0]: dx = g - exp(y) sum(g) = [1 - 1/4, -3/4].
  Tensor x2 = tensor({0.0, std::log(3.0)}, kDouble).requires_grad_();
  Tensor z = log_softmax(x2, 0);
  CHECK(z.grad_fn()->name() == "LogSoftmaxBackward0");
  (z * tensor({1.0, 0.0}, kDouble)).sum().backward();
  check_close(x2.grad(), {0.75, -0.75}, 1e-15);
}

TEST_CASE("softmax: gradcheck, every dim, non-contiguous, 0-dim") {
  for (int64_t d : {0, 1, 2, -1}) {
    check_grad([d](const TensorList& in) { return softmax(in[0], d); }, {rand_leaf({2, 3, 4}, -2, 2)});
    check_grad([d](const TensorList& in) { return log_softmax(in[0], d); }, {rand_leaf({2, 3, 4}, -2, 2)});
  }
  Tensor nc = rand_leaf({4, 3}, -2, 2);
  check_grad([](const TensorList& in) { return softmax(in[0].t(), 1); }, {nc});
  check_grad([](const TensorList& in) { return log_softmax(in[0].t(), 0); }, {nc});
  check_grad([](const TensorList& in) { return softmax(in[0].t(), 1) * in[0].t(); }, {nc});
  check_grad([](const TensorList& in) { return log_softmax(in[0], 0); }, {rand_leaf({})});
  // The backward ops on their own, both inputs (the gradient and the output).
  Tensor g = rand_leaf({3, 4}), y = softmax(rand_leaf({3, 4}), 1).detach().requires_grad_();
  check_grad([](const TensorList& in) { return _softmax_backward_data(in[0], in[1], 1); }, {g, y});
  check_grad([](const TensorList& in) { return _log_softmax_backward_data(in[0], in[1], 0); }, {g, y.log().detach().requires_grad_()});
}

TEST_CASE("softmax: gradgradcheck") {
  check_gradgrad([](const TensorList& in) { return softmax(in[0], 1); }, {rand_leaf({3, 4}, -2, 2)});
  check_gradgrad([](const TensorList& in) { return log_softmax(in[0], 1); }, {rand_leaf({3, 4}, -2, 2)});
  check_gradgrad([](const TensorList& in) { return softmax(in[0].t(), 1); }, {rand_leaf({4, 3}, -2, 2)});
  check_gradgrad([](const TensorList& in) { return log_softmax(in[0], 0); }, {rand_leaf({3, 2, 2}, -2, 2)});
}
