// select/slice/diagonal_scatter, masked_scatter and copy (core/ops/view_scatter.cpp): values by
// hand, the input left untouched, float64 gradcheck in both tensor inputs, PyTorch's errors
// (texts from PyTorch 2.9, including masked_scatter's missing space).
#include "ember/core/ops/view_scatter.h"
#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::from_values;
using ember::test::rand_leaf;
using ember::test::seq;
using ember::test::values;

TEST_CASE("test_view_scatter: select_scatter and slice_scatter replace one view of a copy") {
  Tensor x = seq({3, 4});
  check_close(select_scatter(x, from_values({-1, -2, -3}, {3}), 1, 2), {0, 1, -1, 3, 4, 5, -2, 7, 8, 9, -3, 11});
  check_close(select_scatter(x, full({4}, 9.0, kDouble), 0, -1), {0, 1, 2, 3, 4, 5, 6, 7, 9, 9, 9, 9});
  check_close(slice_scatter(x, zeros({3, 2}, kDouble), 1, 0, std::nullopt, 2), {0, 1, 0, 3, 0, 5, 0, 7, 0, 9, 0, 11});
  check_close(slice_scatter(x, zeros({1, 4}, kDouble), 0, 1, 2), {0, 1, 2, 3, 0, 0, 0, 0, 8, 9, 10, 11});
  check_close(diagonal_scatter(x, from_values({-1, -2, -3}, {3}), 1), {0, -1, 2, 3, 4, 5, -2, 7, 8, 9, 10, -3});
  check_close(x, seq({3, 4}));  // the input is not written
}

TEST_CASE("test_view_scatter: gradients flow to the input outside the view and to src") {
  check_grad([](const TensorList& t) { return select_scatter(t[0], t[1], 1, 1) * 2; },
             {rand_leaf({3, 4}), rand_leaf({3})});
  check_grad([](const TensorList& t) { return slice_scatter(t[0], t[1], 0, 1, 4, 2).sin(); },
             {rand_leaf({5, 2}), rand_leaf({2, 2})});
  check_grad([](const TensorList& t) { return diagonal_scatter(t[0], t[1], -1).exp(); },
             {rand_leaf({4, 3}), rand_leaf({3})});
  Tensor x = rand_leaf({2, 3}), src = rand_leaf({3});
  select_scatter(x, src, 0, 0).sum().backward();
  check_close(x.grad(), {0, 0, 0, 1, 1, 1});
  check_close(src.grad(), {1, 1, 1});
}

TEST_CASE("test_view_scatter: masked_scatter fills the true positions in order, broadcasting") {
  Tensor mask = from_values({1, 0, 1}, {3}).to(kBool);
  check_close(masked_scatter(zeros({2, 3}, kDouble), mask, arange(10, kDouble)), {0, 0, 1, 2, 0, 3});
  check_grad(
      [](const TensorList& t) {
        return masked_scatter(t[0], from_values({1, 0, 0, 1, 1, 0}, {2, 3}).to(kBool), t[1]) * 3;
      },
      {rand_leaf({2, 3}), rand_leaf({4})});
}

TEST_CASE("test_view_scatter: copy converts, broadcasts and leaves self alone") {
  Tensor self = zeros({2, 3}, kLong);
  Tensor out = copy(self, from_values({1.7, 2.2, 3.9}, {3}));
  CHECK(out.dtype() == kLong);
  CHECK(values(out) == std::vector<double>{1, 2, 3, 1, 2, 3});
  CHECK(values(self) == std::vector<double>{0, 0, 0, 0, 0, 0});
  check_grad([](const TensorList& t) { return copy(t[0], t[1]); }, {rand_leaf({2, 3}), rand_leaf({3})});
}

TEST_CASE("test_view_scatter: errors use PyTorch's texts") {
  Tensor x = zeros({3, 4});
  check_error([&] { select_scatter(x, ones({3}), 0, 0); },
              "expected src to have a size equal to the slice of self. src size = [3], slice size = [4]");
  check_error([&] { select_scatter(x, ones({4}), 0, 5); }, "index 5 out of range for tensor of size [3, 4] at dimension 0");
  check_error([&] { slice_scatter(x, ones({2, 4}), 0, 0, 1); },
              "expected src to have a size equal to the slice of self. src size = [2, 4], slice size = [1, 4]");
  check_error([&] { masked_scatter(x, ones({3, 4}), ones({12})); },
              "masked_scatter_ only supports boolean masks, but got mask with dtype Float");
  check_error([&] { masked_scatter(x, ones({3, 4}, kBool), ones({11})); },
              "Number of elements of source < number of ones in mask");
  check_error([&] { masked_scatter(x, ones({3, 4}, kBool), ones({12}, kDouble)); },
              "masked_scatter: expected self and source to have same dtypes but gotFloat and Double");
  check_error([&] { masked_scatter(x, ones({2, 4}, kBool), ones({12})); },
              "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0");
  check_error([&] { copy(zeros({2, 3}), ones({4})); }, "must match the size of tensor b");
}
