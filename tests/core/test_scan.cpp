// cumsum and cumprod (core/ops/scan.cpp): values along every dim against plain loops, on
// contiguous and transposed inputs; dtype rules (integers scan in int64); gradients,
// including cumprod through zeros; 0-dim and empty tensors; error texts.
#include <cmath>

#include "op_check.h"
#include "reduce_ref.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::check_gradgrad;
using ember::test::from_values;
using ember::test::lines_along;
using ember::test::rand_leaf;
using ember::test::shape;
using ember::test::values;

namespace {

/// The inclusive scan of each line of x along dim, laid out as x (row-major).
std::vector<double> ref_scan(const Tensor& x, int64_t dim, bool product) {
  int64_t d = dim < 0 ? dim + x.dim() : dim;
  std::vector<std::vector<double>> lines = lines_along(x, d);
  for (auto& l : lines)
    for (size_t j = 1; j < l.size(); ++j) l[j] = product ? l[j - 1] * l[j] : l[j - 1] + l[j];
  // Lines are ordered as x.movedim(d, -1); put the values back in x's own order.
  DimVector moved_shape(x.sizes());
  moved_shape.erase(d);
  moved_shape.push_back(x.size(d));
  std::vector<double> flat;
  for (auto& l : lines) flat.insert(flat.end(), l.begin(), l.end());
  return values(from_values(flat, moved_shape).movedim(-1, d));
}

}  // namespace

TEST_CASE("cumsum and cumprod along each dim") {
  manual_seed(21);
  Tensor a = randn({2, 3, 4}, kDouble);
  Tensor b = randn({4, 3, 2}, kDouble).permute({2, 1, 0});
  for (const Tensor& x : {a, b}) {
    for (int64_t d : {0, 1, 2, -1}) {
      check_close(x.cumsum(d), ref_scan(x, d, false), 1e-12);
      check_close(x.cumprod(d), ref_scan(x, d, true), 1e-12);
      CHECK(shape(x.cumsum(d)) == shape(x));
    }
  }
  // [1, 2, 3, 4] -> sums [1, 3, 6, 10], products [1, 2, 6, 24].
  check_close(tensor({1.0, 2.0, 3.0, 4.0}).cumsum(0), {1, 3, 6, 10});
  check_close(tensor({1.0, 2.0, 3.0, 4.0}).cumprod(0), {1, 2, 6, 24});
  check_close(tensor({{1.0, 2.0}, {3.0, 4.0}}).cumsum(0), {1, 2, 4, 6});
}

TEST_CASE("scan dtypes, 0-dim, empty and errors") {
  Tensor i8 = tensor({100, 100, 100}, kInt8);
  CHECK(i8.cumsum(0).dtype() == kLong);
  check_close(i8.cumsum(0), {100, 200, 300});
  CHECK(tensor({true, false, true}).cumsum(0).dtype() == kLong);
  check_close(tensor({true, false, true}).cumsum(0), {1, 1, 2});
  CHECK(tensor({true}).cumprod(0).dtype() == kLong);
  CHECK(tensor({1, 2}, kInt8).cumsum(0, kInt16).dtype() == kInt16);
  Tensor f = tensor({1.5, 2.5}).cumsum(0, kInt32);  // the input is cast first: [1, 2] -> [1, 3]
  CHECK(f.dtype() == kInt32);
  check_close(f, {1, 3});
  CHECK(tensor({1.0f}, kHalf).cumsum(0).dtype() == kHalf);
  check_close(tensor(5.0).cumsum(0), {5});
  check_close(tensor(5).cumprod(-1), {5});
  CHECK(tensor(5.0).cumsum(0).dim() == 0);
  CHECK(shape(zeros({0, 3}).cumsum(0)) == std::vector<int64_t>{0, 3});
  CHECK(shape(zeros({2, 0}).cumprod(1)) == std::vector<int64_t>{2, 0});
  check_error(
      [] {
        zeros({2, 3}).cumsum(2);
      },
      "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
  check_error([] { zeros({2, 3}).cumprod(-3); }, "Dimension out of range");
}

TEST_CASE("cumsum gradients") {
  check_grad([](const TensorList& in) { return in[0].cumsum(1); }, {rand_leaf({3, 4})});
  check_grad([](const TensorList& in) { return in[0].t().cumsum(1); }, {rand_leaf({3, 4})});
  check_grad([](const TensorList& in) { return in[0].cumsum(0); }, {rand_leaf({})});
  check_gradgrad([](const TensorList& in) { return in[0].cumsum(0) * in[0]; }, {rand_leaf({3, 4})});
  // d/dx_k sum_j cumsum(x)_j = (number of j >= k): [3, 2, 1].
  Tensor x = zeros({3}, kDouble).requires_grad_();
  x.cumsum(0).sum().backward();
  check_close(x.grad(), {3, 2, 1});
}

TEST_CASE("cumprod gradients, with and without zeros") {
  check_grad([](const TensorList& in) { return in[0].cumprod(1); }, {rand_leaf({3, 4}, 0.5, 1.5)});
  check_grad([](const TensorList& in) { return in[0].t().cumprod(0); }, {rand_leaf({3, 4}, -1.5, -0.5)});
  check_gradgrad([](const TensorList& in) { return in[0].cumprod(1); }, {rand_leaf({2, 4}, 0.5, 1.5)});
  // python: y = torch.tensor([1., 0, 2, 0], requires_grad=True); y.cumprod(0).sum().backward()
  // -> y.grad = [1, 3, 0, 0]: d/dy_1 = y_0 (1 + y_2 + y_2 y_3) = 3, after the first zero 0.
  Tensor y = tensor({1.0, 0.0, 2.0, 0.0}, kDouble).requires_grad_();
  y.cumprod(0).sum().backward();
  check_close(y.grad(), {1, 3, 0, 0});
  // One zero, two zeros, a zero first and last, along either dim.
  Tensor z = from_values({0.5, 0, 2, -1.5, 0, 1.2, 0, 0.8, 1.1, -0.7, 0.9, 0}, {3, 4}).requires_grad_();
  check_grad([](const TensorList& in) { return in[0].cumprod(1); }, {z});
  check_grad([](const TensorList& in) { return in[0].cumprod(0); }, {z});
  check_gradgrad([](const TensorList& in) { return in[0].cumprod(1); }, {z});
}
