// where, lerp, addcmul, addcdiv, masked_fill: values, broadcasting, dtypes, errors, in-place
// forms, empty tensors and gradients (gradcheck, gradgradcheck for where).
#include <cmath>

#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::check_gradgrad;
using ember::test::from_values;
using ember::test::rand_leaf;
using ember::test::values;

namespace {
std::vector<int64_t> shape_of(const Tensor& t) { return t.sizes().vec(); }
}  // namespace

TEST_CASE("test_ternary: where") {
  Tensor c = tensor({true, false, true});
  Tensor a = tensor({1.0, 2.0, 3.0}), b = tensor({-1.0, -2.0, -3.0});
  check_close(where(c, a, b), {1, -2, 3});
  check_close(where(c, 9.0, b), {9, -2, 9});
  check_close(where(c, a, 9), {1, 9, 3});
  check_close(where(c, 1, 0), {1, 0, 1});
  check_close(a.where(c, b), {1, -2, 3});
  // Broadcasting all three: cond [2, 1], a [3], b [] -> [2, 3].
  Tensor c2 = tensor({true, false}).view({2, 1});
  Tensor r = where(c2, a, tensor(0.0));
  CHECK(shape_of(r) == std::vector<int64_t>{2, 3});
  check_close(r, {1, 2, 3, 0, 0, 0});
  check_error([&] { where(a, a, b); },
              "where expected condition to be a boolean tensor, but got a tensor with dtype Float");
  check_error(
      [&] {
        where(tensor({1, 0, 1}), a, b);
      },
      "where expected condition to be a boolean tensor, but got a tensor with dtype Long");
  check_error(
      [&] {
        where(tensor({true, false}), a, b);
      },
      "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0");
  CHECK(shape_of(where(zeros({0, 3}, kBool), a, b)) == std::vector<int64_t>{0, 3});
  // Non-contiguous operands and integer dtypes.
  Tensor m = arange(6).view({2, 3});
  check_close(where(m.t() > 2, m.t(), -m.t()), {0, 3, -1, 4, -2, 5});
}

TEST_CASE("test_ternary: lerp") {
  Tensor s = tensor({0.0, 1.0, -2.0, 4.0}), e = tensor({10.0, 3.0, 2.0, 4.0});
  // start + w (end - start)
  check_close(lerp(s, e, 0.25), {2.5, 1.5, -1, 4});
  check_close(lerp(s, e, 0.75), {7.5, 2.5, 1, 4});
  check_close(s.lerp(e, tensor({0.0, 0.5, 1.0, 2.0})), {0, 2, 2, 4});
  check_close(lerp(s, e, -1.0), {-10, -1, -6, 4});
  // w = 1 gives end exactly (the formula switches ends at 0.5).
  Tensor f1 = tensor({0.1f}, kFloat), f2 = tensor({0.7f}, kFloat);
  CHECK(values(lerp(f1, f2, 1.0)) == values(f2));
  // Broadcasting and a float64 loop reference with a tensor weight.
  manual_seed(5);
  Tensor a = randn({2, 3}, kDouble), b = randn({3}, kDouble), w = rand({2, 1}, kDouble);
  std::vector<double> va = values(a), vb = values(b), vw = values(w), want;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) want.push_back(va[i * 3 + j] + vw[i] * (vb[j] - va[i * 3 + j]));
  check_close(lerp(a, b, w), want, 1e-12);
  check_close(lerp(tensor({1.0, 2.0}, kHalf), tensor({3.0, 6.0}, kHalf), 0.5), {2, 4});
  check_error([&] { lerp(tensor({1.0}), tensor({1.0}, kDouble), 0.5); },
              "expected dtype float for `end` but got dtype double");
  check_error([&] { lerp(tensor({1.0}), tensor({1.0}), tensor({1}, kLong)); },
              "expected dtype float for `weight` but got dtype long int");
  check_error([&] { lerp(tensor({1}), tensor({1}), 0.5); },
              "\"lerp_kernel_scalar\" not implemented for 'Long'");
  check_error([&] { lerp(tensor({1}), tensor({1}), tensor({1})); },
              "\"lerp_kernel_tensor\" not implemented for 'Long'");
  // In place.
  Tensor x = tensor({0.0, 10.0});
  x.lerp_(tensor({10.0, 0.0}), 0.1);
  check_close(x, {1, 9});
  x.lerp_(tensor({3.0}), tensor({0.5, 1.0}));
  check_close(x, {2, 3});
  check_error(
      [&] {
        x.lerp_(zeros({2, 2}), 0.5);
      },
      "output with shape [2] doesn't match the broadcast shape [2, 2]");
  CHECK(lerp(zeros({0}), zeros({0}), 0.5).numel() == 0);
}

TEST_CASE("test_ternary: addcmul and addcdiv") {
  Tensor s = tensor({1.0, 2.0}), t1 = tensor({3.0, -4.0}), t2 = tensor({2.0, 8.0});
  check_close(addcmul(s, t1, t2), {7, -30});  // 1 + 3*2, 2 + (-4)(8)
  check_close(addcmul(s, t1, t2, 0.5), {4, -14});
  check_close(addcdiv(s, t1, t2), {2.5, 1.5});  // 1 + 3/2, 2 + (-4)/8
  check_close(s.addcdiv(t1, t2, -2), {-2, 3});
  check_close(s.addcmul(t1, t2, 2), {13, -62});
  // Integers: value converts to the integer dtype (2.5 -> 2), as PyTorch: 5 + 2*25, -3 + 2*9.
  Tensor i = tensor({5, -3});
  check_close(addcmul(i, i, i, 2.5), {55, 15});
  check_error([&] { addcdiv(i, i, i); }, "Integer division with addcdiv is no longer supported");
  check_error([&] { addcdiv(s, i, i); }, "Integer division with addcdiv is no longer supported");
  check_error([&] { addcdiv(s, tensor({true}), tensor({true})); },
              "Integer division with addcdiv is no longer supported");
  check_close(addcdiv(i, tensor({1.5, -2.5}), tensor({1.5, -2.5})), {6, -2});
  Tensor b = tensor({true, false});
  check_error([&] { addcmul(b, b, b); }, "\"addcmul_cpu_out\" not implemented for 'Bool'");
  // Broadcasting all three, against a loop.
  manual_seed(6);
  Tensor a = randn({2, 1}, kDouble), x = randn({3}, kDouble), y = rand({2, 3}, kDouble) + 0.5;
  std::vector<double> va = values(a), vx = values(x), vy = values(y), wm, wd;
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c) {
      wm.push_back(va[r] + 0.3 * vx[c] * vy[r * 3 + c]);
      wd.push_back(va[r] + 0.3 * vx[c] / vy[r * 3 + c]);
    }
  check_close(addcmul(a, x, y, 0.3), wm, 1e-12);
  check_close(addcdiv(a, x, y, 0.3), wd, 1e-12);
  // In place.
  Tensor z = tensor({1.0, 2.0});
  z.addcmul_(t1, t2).addcdiv_(tensor({1.0, 1.0}), tensor({2.0, 4.0}), 2);  // [7, -30] + [1, 0.5]
  check_close(z, {8, -29.5});
  check_error(
      [&] {
        z.addcmul_(zeros({3, 2}), zeros({2}));
      },
      "output with shape [2] doesn't match the broadcast shape [3, 2]");
  Tensor zi = tensor({1, 2});
  check_error([&] { zi.addcdiv_(zi, zi); }, "Integer division with addcdiv is no longer supported");
  zi.addcmul_(tensor({2, 3}), tensor({4, 5}));
  check_close(zi, {9, 17});
  CHECK(addcmul(zeros({0, 2}), zeros({2}), zeros({1})).numel() == 0);
}

TEST_CASE("test_ternary: masked_fill") {
  Tensor x = tensor({1.0, 2.0, 3.0}), m = tensor({true, false, true});
  check_close(x.masked_fill(m, -1.0), {-1, 2, -1});
  check_close(masked_fill(x, m, tensor(7.0)), {7, 2, 7});
  check_close(x, {1, 2, 3});  // out of place
  // The value converts to self's dtype: 2.5 -> 2 for int64, -> true for bool.
  check_close(tensor({5, 6}).masked_fill(tensor({true, false}), 2.5), {2, 6});
  check_close(tensor({5, 6}).masked_fill(tensor({true, false}), tensor(2.7)), {2, 6});
  CHECK(values(tensor({false, false}).masked_fill(tensor({true, false}), 2.5)) == std::vector<double>{1, 0});
  // Out of place broadcasts self with the mask: [2] with [3, 2] -> [3, 2].
  Tensor big =
      tensor({1.0, 2.0}).masked_fill(tensor({true, false, false, true, true, true}).view({3, 2}), 0.0);
  CHECK(shape_of(big) == std::vector<int64_t>{3, 2});
  check_close(big, {0, 2, 1, 0, 0, 0});
  // In place: the mask broadcasts to self, not the other way round.
  Tensor y = zeros({2, 3});
  y.masked_fill_(tensor({true, false, true}), 5.0)
      .masked_fill_(tensor({false, true}).view({2, 1}), tensor(1.0));
  check_close(y, {5, 0, 5, 1, 1, 1});
  Tensor t = zeros({3, 2}).t();  // non-contiguous self
  t.masked_fill_(tensor({true, false, true}), 4.0);
  check_close(t, {4, 0, 4, 4, 0, 4});
  check_error(
      [&] {
        tensor({1.0, 2.0}).masked_fill_(zeros({3, 2}, kBool), 1.0);
      },
      "output with shape [2] doesn't match the broadcast shape [3, 2]");
  check_error(
      [&] {
        x.masked_fill(tensor({1.0, 0.0, 1.0}), 1.0);
      },
      "masked_fill_ only supports boolean masks, but got mask with dtype Float");
  check_error(
      [&] {
        x.masked_fill(tensor({1, 0, 1}, kByte), 1.0);
      },
      "masked_fill_ only supports boolean masks, but got mask with dtype Byte");
  check_error(
      [&] {
        x.masked_fill(m, tensor({1.0, 2.0}));
      },
      "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 dimension(s).");
  CHECK(zeros({0, 2}).masked_fill(zeros({2}, kBool), 1.0).numel() == 0);
  Tensor s = tensor(3.0).masked_fill(tensor(true), 1.0);
  CHECK(s.dim() == 0);
  check_close(s, {1});
}

TEST_CASE("test_ternary: gradients") {
  manual_seed(9);
  Tensor a = rand_leaf({2, 3}), b = rand_leaf({2, 3}), w = rand_leaf({2, 3});
  Tensor row = rand_leaf({3}), col = rand_leaf({2, 1}), pos = rand_leaf({2, 3}, 0.5, 1.5);
  Tensor cond = tensor({true, false, true, false, false, true}).view({2, 3});
  Tensor cond_row = tensor({false, true, true});

  auto where_fn = [&](const TensorList& in) { return where(cond, in[0], in[1]); };
  check_grad(where_fn, {a, b});
  check_grad(where_fn, {row, col});
  check_grad([&](const TensorList& in) { return where(cond_row, in[0], 2.0); }, {a});
  check_grad([&](const TensorList& in) { return where(cond, 2.0, in[0]); }, {row});
  check_grad([&](const TensorList& in) { return where(cond.t(), in[0].t(), in[1]); }, {a, rand_leaf({3, 2})});
  check_gradgrad([&](const TensorList& in) { return where(cond, in[0] * in[1], in[1]); }, {a, b});

  check_grad([](const TensorList& in) { return lerp(in[0], in[1], 0.3); }, {a, row});
  check_grad([](const TensorList& in) { return lerp(in[0], in[1], 0.8); }, {col, b});
  check_grad([](const TensorList& in) { return lerp(in[0], in[1], in[2]); }, {a, b, w});
  check_grad([](const TensorList& in) { return lerp(in[0], in[1], in[2]); }, {row, col, w});
  check_grad([](const TensorList& in) { return lerp(in[0].t(), in[1], in[2]); }, {rand_leaf({3, 2}), b, w});
  check_gradgrad([](const TensorList& in) { return lerp(in[0], in[1], in[2]); }, {a, b, w});

  check_grad([](const TensorList& in) { return addcmul(in[0], in[1], in[2], 0.7); }, {a, b, w});
  check_grad([](const TensorList& in) { return addcmul(in[0], in[1], in[2], -2); }, {col, row, w});
  check_grad([](const TensorList& in) { return addcdiv(in[0], in[1], in[2], 0.7); }, {a, b, pos});
  check_grad([](const TensorList& in) { return addcdiv(in[0], in[1], in[2]); }, {row, col, pos});
  check_grad([](const TensorList& in) { return addcdiv(in[0], in[1].t(), in[2]); },
             {a, rand_leaf({3, 2}), pos});
  check_gradgrad([](const TensorList& in) { return addcdiv(in[0], in[1], in[2], 0.7); }, {a, b, pos});

  check_grad([&](const TensorList& in) { return in[0].masked_fill(cond, 0.5); }, {a});
  check_grad([&](const TensorList& in) { return in[0].masked_fill(cond_row, in[1]); }, {col, rand_leaf({})});
  check_grad([&](const TensorList& in) { return in[0].t().masked_fill(cond.t(), in[1]); },
             {a, rand_leaf({})});

  // masked_fill zeroes the gradient under the mask; the value gets the sum of the rest.
  Tensor x = tensor({1.0, 2.0, 3.0}, requires_grad()), v = tensor(0.0, requires_grad());
  Tensor m = tensor({true, false, true});
  (x.masked_fill(m, v) * tensor({1.0, 10.0, 100.0})).sum().backward();
  check_close(x.grad(), {0, 10, 0});
  check_close(v.grad(), {101});
  // where routes the gradient by the condition; lerp splits it by the weight.
  Tensor p = tensor({1.0, 2.0}, requires_grad()), q = tensor({3.0, 4.0}, requires_grad());
  where(tensor({true, false}), p, q).sum().backward();
  check_close(p.grad(), {1, 0});
  check_close(q.grad(), {0, 1});
  Tensor s = tensor({1.0, 2.0}, requires_grad()), e = tensor({3.0, 6.0}, requires_grad());
  Tensor wt = tensor({0.25, 0.75}, requires_grad());
  lerp(s, e, wt).sum().backward();
  check_close(s.grad(), {0.75, 0.25});
  check_close(e.grad(), {0.25, 0.75});
  check_close(wt.grad(), {2, 4});  // end - start
  // Node names follow PyTorch's overload numbering.
  CHECK(where(tensor({true, false}), p, q).grad_fn()->name() == "WhereBackward0");
  CHECK(lerp(s, e, 0.5).grad_fn()->name() == "LerpBackward0");
  CHECK(lerp(s, e, wt).grad_fn()->name() == "LerpBackward1");
  CHECK(s.masked_fill(tensor({true, false}), 1.0).grad_fn()->name() == "MaskedFillBackward0");
  CHECK(s.masked_fill(tensor({true, false}), tensor(1.0)).grad_fn()->name() == "MaskedFillBackward1");
  CHECK(addcmul(s, e, wt).grad_fn()->name() == "AddcmulBackward0");
  CHECK(addcdiv(s, e, wt).grad_fn()->name() == "AddcdivBackward0");
  // In-place forms record gradients too: y = x * 1 then y.masked_fill_ / addcmul_ / lerp_.
  Tensor xi = tensor({1.0, 2.0}, requires_grad());
  Tensor yi = xi * 1;
  yi.addcmul_(xi, xi, 2).masked_fill_(tensor({false, true}), 0.0);  // y0 = x0 + 2 x0^2
  yi.sum().backward();
  check_close(xi.grad(), {1 + 4 * 1.0, 0});
}
