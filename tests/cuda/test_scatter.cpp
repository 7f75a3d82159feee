// gather, scatter (src and value), scatter_add and index_add on CUDA against the CPU, for every
// dtype, with strided and 0-dim operands, repeated indices (accumulation is exact and
// deterministic on CUDA: Note [Deterministic indexed accumulation]), gradients and errors.
#include "cuda/parity.h"

using namespace ember;
using namespace ember::test;

namespace {

/// An int64 index of `shape` with values in [0, n), distinct along `dim` (k = shape[dim] <= n
/// and 3 coprime to n), so that an assigning scatter has one writer per destination.
Tensor distinct_along(IntArrayRef shape, int64_t dim, int64_t n) {
  DimVector view(shape.size(), 1);
  view[dim] = shape[dim];
  Tensor steps = arange(shape[dim], kLong).view(view) * 3;
  Tensor offset = make_input(shape, kLong, 0, static_cast<double>(n)).narrow(dim, 0, 1);
  return remainder(steps + offset, n);
}

Tensor longs(std::initializer_list<int64_t> v) { return tensor(std::vector<int64_t>(v)); }

}  // namespace

TEST_CASE("cuda gather: every dtype and dim, narrower and wider index") {
  for (ScalarType t : kAllTypes) {
    INFO("dtype " << t);
    Tensor x = make_input({4, 5, 6}, t);
    check_parity([](const TensorList& a) { return a[0].gather(0, a[1]); },
                 {x, make_input({7, 5, 6}, kLong, 0, 4)});
    check_parity([](const TensorList& a) { return a[0].gather(1, a[1]); },
                 {x, make_input({2, 9, 3}, kLong, 0, 5)});
    check_parity([](const TensorList& a) { return a[0].gather(-1, a[1]); },
                 {x, make_input({4, 5, 2}, kLong, 0, 6)});
  }
}

TEST_CASE("cuda gather: strided operands, 0-dim, empty, large") {
  Tensor x = make_input({6, 8}, kFloat);
  check_parity([](const TensorList& a) { return a[0].t().gather(0, a[1]); },
               {x, make_input({3, 6}, kLong, 0, 8)});
  check_parity([](const TensorList& a) { return a[0].gather(1, a[1].t()); },
               {x, make_input({4, 6}, kLong, 0, 8)});
  check_parity([](const TensorList& a) { return a[0].slice(1, 0, 8, 3).gather(1, a[1]); },
               {x, make_input({6, 5}, kLong, 0, 3)});
  check_parity([](const TensorList& a) { return a[0].gather(0, a[1]); },
               {make_input({}, kHalf), zeros({}, kLong)});
  check_parity([](const TensorList& a) { return a[0].gather(0, a[1]); },
               {make_input({5}, kInt8), longs({4, 0, 4})});
  check_parity([](const TensorList& a) { return a[0].gather(1, a[1]); }, {x, empty({0, 2}, kLong)});
  const int64_t n = (int64_t{1} << 20) + 3;
  check_parity([](const TensorList& a) { return a[0].gather(0, a[1]); },
               {make_input({1000}, kBFloat16), make_input({n}, kLong, 0, 1000)});
  check_parity([](const TensorList& a) { return a[0].gather(1, a[1]); },
               {make_input({3, n / 3 + 1}, kDouble), make_input({3, n / 3 + 1}, kLong, 0, n / 3 + 1)});
}

TEST_CASE("cuda gather: gradient (a scatter_add of grad)") {
  for (ScalarType t : kFloatTypes)
    check_grad_parity([](const TensorList& a) { return a[0].gather(1, a[1]); },
                      {make_input({3, 4}, t), make_input({3, 9}, kLong, 0, 4)});
}

TEST_CASE("cuda scatter: src and value forms, every dtype and dim, in place and not") {
  for (ScalarType t : kAllTypes) {
    INFO("dtype " << t);
    Tensor x = make_input({5, 4, 7}, t);
    check_parity([](const TensorList& a) { return a[0].scatter(0, a[1], a[2]); },
                 {x, distinct_along({4, 3, 7}, 0, 5), make_input({6, 4, 7}, t)});  // src larger than index
    check_parity([](const TensorList& a) { return a[0].scatter(2, a[1], a[2]); },
                 {x, distinct_along({5, 4, 4}, 2, 7), make_input({5, 4, 4}, t)});
    check_parity([](const TensorList& a) { return a[0].scatter(1, a[1], 1); },
                 {x, make_input({2, 6, 3}, kLong, 0, 4)});
    check_parity(
        [](const TensorList& a) {
          Tensor y = a[0].clone();
          y.scatter_(-1, a[1], a[2]);
          y.scatter_(0, a[3], 0);
          return y;
        },
        {x, distinct_along({5, 4, 5}, 2, 7), make_input({5, 4, 5}, t), make_input({1, 4, 2}, kLong, 0, 5)});
  }
}

TEST_CASE("cuda scatter: strided operands, 0-dim, empty, large") {
  Tensor x = make_input({7, 5}, kFloat);
  check_parity([](const TensorList& a) { return a[0].t().scatter(1, a[1].t(), a[2].t()); },
               {x, distinct_along({5, 5}, 0, 7), make_input({5, 5}, kFloat)});
  check_parity(
      [](const TensorList& a) {
        Tensor y = a[0].clone();
        y.slice(1, 0, 5, 2).scatter_(0, a[1], a[2]);
        return y;
      },
      {x, distinct_along({4, 3}, 0, 7), make_input({4, 3}, kFloat)});
  check_parity([](const TensorList& a) { return a[0].scatter(0, a[1], a[2]); },
               {make_input({}, kFloat), zeros({}, kLong), make_input({}, kFloat)});
  check_parity([](const TensorList& a) { return a[0].scatter(0, a[1], a[2]); },
               {x, empty({0, 5}, kLong), make_input({2, 5}, kFloat)});
  const int64_t n = (int64_t{1} << 20) + 3;
  check_parity([](const TensorList& a) { return a[0].scatter(0, a[1], a[2]); },
               {make_input({n}, kHalf), randperm(n), make_input({n}, kHalf)});
}

TEST_CASE("cuda scatter: gradients of self and src") {
  for (ScalarType t : {kFloat, kDouble, kBFloat16})
    check_grad_parity([](const TensorList& a) { return a[0].scatter(1, a[2], a[1]); },
                      {make_input({3, 6}, t), make_input({3, 4}, t), distinct_along({3, 4}, 1, 5)});
}

TEST_CASE("cuda scatter_add: repeated indices sum exactly as on the CPU, every dtype") {
  for (ScalarType t : kAllTypes) {
    INFO("dtype " << t);
    Tensor x = make_input({4, 6}, t);
    check_parity([](const TensorList& a) { return a[0].scatter_add(0, a[1], a[2]); },
                 {x, make_input({40, 6}, kLong, 0, 4), make_input({40, 6}, t)}, Tol{0, 0});
    check_parity(
        [](const TensorList& a) {
          Tensor y = a[0].clone();
          return y.t().scatter_add_(0, a[1], a[2]);
        },
        {x, make_input({30, 3}, kLong, 0, 6), make_input({31, 4}, t)}, Tol{0, 0});
  }
  check_parity([](const TensorList& a) { return a[0].scatter_add(0, a[1], a[2]); },
               {make_input({}, kFloat), zeros({}, kLong), make_input({}, kFloat)});
  // Many threads, long runs of repeats, twice the same bits.
  const int64_t n = (int64_t{1} << 20) + 3;
  Tensor idx = make_input({n}, kLong, 0, 100), src = make_input({n}, kFloat);
  check_parity([](const TensorList& a) { return a[0].scatter_add(0, a[1], a[2]); }, {zeros({100}), idx, src},
               Tol{0, 0});
  Tensor d_idx = idx.to(cuda_device()), d_src = src.to(cuda_device());
  Tensor dst = zeros({100}, TensorOptions().device(cuda_device()));
  check_same(dst.scatter_add(0, d_idx, d_src), dst.scatter_add(0, d_idx, d_src).cpu(), Tol{0, 0});
}

TEST_CASE("cuda scatter_add: gradient") {
  for (ScalarType t : kFloatTypes)
    check_grad_parity([](const TensorList& a) { return a[0].scatter_add(1, a[2], a[1]); },
                      {make_input({3, 5}, t), make_input({3, 8}, t), make_input({3, 8}, kLong, 0, 5)});
}

TEST_CASE("cuda index_add: repeated indices, alpha, every dtype, in place") {
  for (ScalarType t : kAllTypes) {
    INFO("dtype " << t);
    Tensor x = make_input({5, 4, 3}, t);
    check_parity([](const TensorList& a) { return a[0].index_add(1, a[1], a[2]); },
                 {x, make_input({9}, kLong, 0, 4), make_input({5, 9, 3}, t)}, Tol{0, 0});
    Scalar alpha = is_floating_point(t) ? Scalar(0.37) : t == kBool ? Scalar(true) : Scalar(3);
    check_parity(
        [alpha](const TensorList& a) {
          Tensor y = a[0].clone();
          return y.index_add_(0, a[1], a[2], alpha);
        },
        {x, make_input({12}, kInt, 0, 5), make_input({12, 4, 3}, t)}, Tol{0, 0});
  }
  Tensor x = make_input({6, 4}, kFloat);
  check_parity([](const TensorList& a) { return a[0].t().index_add(0, a[1], a[2].t()); },
               {x, longs({1, 1, 3}), make_input({6, 3}, kFloat)}, Tol{0, 0});
  check_parity([](const TensorList& a) { return a[0].index_add(0, a[1], a[2]); },
               {make_input({}, kDouble), longs({0}), make_input({}, kDouble)}, Tol{0, 0});
  check_parity([](const TensorList& a) { return a[0].index_add(0, a[1], a[2]); },
               {x, empty({0}, kLong), empty({0, 4}, kFloat)});
  const int64_t n = (int64_t{1} << 18) + 1;
  check_parity([](const TensorList& a) { return a[0].index_add(0, a[1], a[2], 2); },
               {zeros({10, 4}, kHalf), make_input({n}, kLong, 0, 10), make_input({n, 4}, kHalf)}, Tol{0, 0});
}

TEST_CASE("cuda index_add: gradients of self and source") {
  for (ScalarType t : kFloatTypes)
    check_grad_parity([](const TensorList& a) { return a[0].index_add(0, a[2], a[1], 2.0); },
                      {make_input({4, 3}, t), make_input({6, 3}, t), longs({3, 0, 3, 3, 1, 0})});
}

TEST_CASE("cuda gather/scatter errors: the CPU's texts") {
  Tensor x = make_input({3, 4}, kFloat);
  check_error_parity([](const TensorList& a) { return a[0].gather(0, a[1]); }, {x, tensor({{0, 3}})});
  check_error_parity([](const TensorList& a) { return a[0].gather(1, a[1]); }, {x, tensor({{0, -1}})});
  check_error_parity([](const TensorList& a) { return a[0].scatter(0, a[1], a[2]); },
                     {x, tensor({{1, 5}}), make_input({1, 2}, kFloat)});
  check_error_parity([](const TensorList& a) { return a[0].scatter(1, a[1], 2.0); }, {x, tensor({{4}})});
  check_error_parity([](const TensorList& a) { return a[0].scatter_add(0, a[1], a[2]); },
                     {x, tensor({{0, 0, 7}}), make_input({1, 3}, kFloat)});
  check_error_parity([](const TensorList& a) { return a[0].index_add(0, a[1], a[2]); },
                     {x, longs({0, 3}), make_input({2, 4}, kFloat)});
  check_error_parity([](const TensorList& a) { return a[0].gather(0, a[1]); }, {x, tensor({{0}}, kInt)});
  check_error_parity([](const TensorList& a) { return a[0].scatter(0, a[1], a[2]); },
                     {x, tensor({{0}}), make_input({1, 1}, kDouble)});
  check_error_parity([](const TensorList& a) { return a[0].index_add(0, a[1], a[2]); },
                     {x, longs({0}), make_input({1, 3}, kFloat)});
  // An index on another device is refused before any kernel reads it.
  Tensor on_gpu = x.to(cuda_device());
  for (auto f : std::vector<std::function<Tensor()>>{
           [&] { return on_gpu.gather(0, tensor({{0}})); },
           [&] { return on_gpu.scatter(0, tensor({{0}}), 1.0); },
           [&] {
             return on_gpu.index_add(0, longs({0}), ones({1, 4}, TensorOptions().device(cuda_device())));
           },
           [&] { return on_gpu.index_select(0, longs({0})); }}) {
    try {
      (void)f();
      FAIL("expected an error");
    } catch (const Error& e) {
      CHECK(std::string(e.what()) ==
            "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!");
    }
  }
}
