// CUDA parity of the scans and sorts (core/ops/scan.cpp, sort.cpp; kernels in cuda/scan.cu,
// cuda/sort.cu): cumsum/cumprod along each dim for every dtype (integers to int64, the dtype
// argument), lines split into runs above 1 << 20 elements, reverse scans through backward;
// sort/argsort/topk for every dtype, ascending and descending, stable ties, NaN above
// everything, -0.0 tied with 0, one long line (device-wide sort), a few long lines and many
// short ones (segmented sort); 0-dim and empty tensors, gradients, and refused inputs.
#include "cuda/reduce_layouts.h"

using namespace ember;
using namespace ember::test;

namespace {

/// sort's values and indices as one list.
OneInputOp sorted(int64_t dim, bool descending) {
  return [=](const Tensor& x) {
    auto [v, i] = x.sort(dim, descending);
    return cat({v.to(kDouble).flatten(), i.to(kDouble).flatten()});
  };
}

OneInputOp top(int64_t k, int64_t dim, bool largest) {
  return [=](const Tensor& x) {
    int64_t kk = std::min<int64_t>(k, x.dim() == 0 ? 1 : x.size(dim));
    auto [v, i] = x.topk(kk, dim, largest);
    return cat({v.to(kDouble).flatten(), i.to(kDouble).flatten()});
  };
}

}  // namespace

TEST_CASE("cuda cumsum/cumprod: every dtype and layout, along each dim, dtype argument") {
  for (ScalarType t : kAllTypes) {
    check_reduce_layouts([](const Tensor& x) { return x.cumsum(0); }, t);
    check_reduce_layouts([](const Tensor& x) { return x.cumsum(-1); }, t);
    check_reduce_layouts([](const Tensor& x) { return x.cumprod(-1); }, t, {.lo = 0.5, .hi = 1.5});
    check_reduce_layouts([](const Tensor& x) { return x.cumprod(0); }, t, {.lo = -2, .hi = 3});
    check_parity([](const TensorList& x) { return x[0].cumsum(1, kDouble); }, {make_input({3, 7}, t)});
    check_parity(
        [](const TensorList& x) {
          return TensorList{x[0].cumsum(0), x[0].cumprod(-1)};
        },
        {make_input({}, t)});
  }
  for (ScalarType t : kFloatTypes)
    check_parity(
        [](const TensorList& x) {
          return TensorList{x[0].cumsum(1), x[0].cumprod(0)};
        },
        {special_input({6, 40}, t)});
}

TEST_CASE("cuda cumsum/cumprod: long lines split into runs") {
  for (ScalarType t : {kFloat, kHalf, kInt32, kInt64, kDouble}) {
    check_reduce_layouts([](const Tensor& x) { return x.cumsum(0); }, t,
                         {.lo = -1, .hi = 2, .empty = false, .big = true});
    check_reduce_layouts([](const Tensor& x) { return x.cumsum(-1); }, t,
                         {.lo = -1, .hi = 2, .empty = false, .big = true});
  }
  // Values near 1: a million-long product stays finite.
  check_reduce_layouts([](const Tensor& x) { return x.cumprod(0); }, kDouble,
                       {.lo = 0.99, .hi = 1.01, .big = true});
  check_reduce_layouts([](const Tensor& x) { return x.cumprod(0); }, kFloat,
                       {.lo = 0.999, .hi = 1.001, .big = true});
  check_parity([](const TensorList& x) { return x[0].cumsum(1); }, {make_input({2, 300000}, kFloat)});
  check_parity([](const TensorList& x) { return x[0].cumsum(0); }, {make_input({300000, 2}, kInt64)});
}

TEST_CASE("cuda cumsum/cumprod gradients (reverse scans), with zeros") {
  for (ScalarType t : {kFloat, kDouble}) {
    check_grad_parity([](const TensorList& x) { return x[0].cumsum(1); }, {make_input({4, 9}, t)});
    check_grad_parity([](const TensorList& x) { return x[0].t().cumsum(0); }, {make_input({4, 9}, t)});
    check_grad_parity([](const TensorList& x) { return x[0].cumprod(1); }, {make_input({3, 8}, t, 0.5, 1.5)});
    check_grad_parity([](const TensorList& x) { return (x[0] * (x[0] > 0)).cumprod(0); },
                      {make_input({6, 3}, t)});
  }
  check_grad_parity([](const TensorList& x) { return x[0].cumsum(0); },
                    {make_input({(1 << 20) + 3}, kFloat)});
}

TEST_CASE("cuda sort/argsort: every dtype and layout, both orders, stable ties") {
  for (ScalarType t : kAllTypes) {
    LayoutOptions ties{.lo = -2, .hi = 3};
    for (bool desc : {false, true}) {
      check_reduce_layouts(sorted(-1, desc), t, ties);
      check_reduce_layouts(sorted(0, desc), t, ties);
      check_reduce_layouts([desc](const Tensor& x) { return x.argsort(0, desc); }, t, ties);
    }
    check_parity([](const TensorList& x) { return sorted(0, true)(x[0]); }, {make_input({}, t)});
  }
}

TEST_CASE("cuda sort: NaN above every number, -0.0 ties with 0, infinities") {
  for (ScalarType t : kFloatTypes)
    for (bool desc : {false, true}) {
      check_parity([desc](const TensorList& x) { return sorted(1, desc)(x[0]); },
                   {special_input({5, 60}, t)});
      check_parity([desc](const TensorList& x) { return sorted(0, desc)(x[0]); },
                   {special_input({300, 3}, t)});
      check_parity([desc](const TensorList& x) { return top(7, 1, desc)(x[0]); },
                   {special_input({5, 60}, t)});
    }
}

TEST_CASE("cuda sort: one long line, a few long lines, many short lines") {
  for (ScalarType t : {kFloat, kHalf, kInt64, kInt8, kDouble, kBool}) {
    for (bool desc : {false, true}) {
      INFO("dtype " << scalar_type_name(t) << ", descending " << desc);
      check_parity([desc](const TensorList& x) { return sorted(0, desc)(x[0]); },
                   {make_input({(1 << 20) + 3}, t)});
      check_parity([desc](const TensorList& x) { return sorted(1, desc)(x[0]); },
                   {make_input({3, 70000}, t)});
      check_parity([desc](const TensorList& x) { return sorted(1, desc)(x[0]); },
                   {make_input({20000, 50}, t)});
      check_parity([desc](const TensorList& x) { return sorted(0, desc)(x[0]); }, {make_input({5000, 7}, t)});
    }
  }
}

TEST_CASE("cuda topk: k, dim, largest and smallest, every dtype but bool") {
  for (ScalarType t : kNumericTypes) {
    LayoutOptions ties{.lo = -2, .hi = 3};
    for (bool largest : {true, false}) {
      check_reduce_layouts(top(3, -1, largest), t, ties);
      check_reduce_layouts(top(1, 0, largest), t, ties);
      check_reduce_layouts(top(0, -1, largest), t, ties);
    }
    check_parity([](const TensorList& x) { return top(1, 0, true)(x[0]); }, {make_input({}, t)});
  }
  check_parity([](const TensorList& x) { return top(5, 0, true)(x[0]); },
               {make_input({(1 << 20) + 3}, kFloat)});
  check_parity([](const TensorList& x) { return top(10, 1, false)(x[0]); }, {make_input({4, 100000}, kHalf)});
  check_error_parity([](const TensorList& x) { return std::get<0>(x[0].topk(1)); }, {make_input({4}, kBool)});
  check_error_parity([](const TensorList& x) { return std::get<0>(x[0].topk(5)); },
                     {make_input({4}, kFloat)});
}

TEST_CASE("cuda sort/topk gradients go back to the source positions") {
  for (ScalarType t : {kFloat, kDouble}) {
    check_grad_parity([](const TensorList& x) { return std::get<0>(x[0].sort(1)); }, {make_input({4, 9}, t)});
    check_grad_parity([](const TensorList& x) { return std::get<0>(x[0].sort(0, true)); },
                      {make_input({4, 9}, t)});
    check_grad_parity([](const TensorList& x) { return std::get<0>(x[0].topk(3, 1)); },
                      {make_input({4, 9}, t)});
    check_grad_parity([](const TensorList& x) { return std::get<0>(x[0].topk(2, 0, false)); },
                      {make_input({4, 9}, t)});
  }
}
