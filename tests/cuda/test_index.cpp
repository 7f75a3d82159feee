// Indexing on CUDA against the CPU: advanced indexing with integer tensors and masks,
// index_put_ (assignment and deterministic accumulation), index_select, masked_select,
// nonzero, and the out-of-range errors (the same ember::Error text as the CPU's).
#include "cuda/parity.h"

using namespace ember;
using namespace ember::indexing;
using namespace ember::test;

namespace {

/// Distinct indices in [0, n): the first k of a seeded permutation (for assignments, whose
/// result with repeated indices is unspecified on both devices).
Tensor distinct(int64_t n, int64_t k, uint64_t seed = 7) {
  manual_seed(seed);
  return randperm(n).slice(0, 0, k);
}

Tensor longs(std::initializer_list<int64_t> v) { return tensor(std::vector<int64_t>(v)); }

Tensor bools(std::initializer_list<int> v, IntArrayRef shape) {
  std::vector<int64_t> x(v.begin(), v.end());
  return tensor(x).reshape(shape) != 0;
}

}  // namespace

TEST_CASE("cuda index: integer index tensors, every dtype") {
  for (ScalarType t : kAllTypes) {
    INFO("dtype " << t);
    Tensor x = make_input({5, 6, 7}, t), i = make_input({4}, kLong, -5, 5), j = make_input({4}, kLong, 0, 7);
    check_parity([](const TensorList& a) { return a[0].index({a[1]}); }, {x, i});
    // Adjacent index tensors stay in place; separated ones go first (numpy's rule).
    check_parity(
        [](const TensorList& a) {
          return a[0].index({Slice(), a[1], a[2]});
        },
        {x, make_input({4}, kLong, -6, 6), j});
    check_parity([](const TensorList& a) { return a[0].index({a[1], Slice(), a[2]}); }, {x, i, j});
  }
}

TEST_CASE("cuda index: broadcast, 2-d and int32 index tensors, strided self, basic indices around them") {
  Tensor x = make_input({6, 5, 4}, kFloat);
  check_parity(
      [](const TensorList& a) {
        return a[0].index({a[1], a[2]});
      },
      {x, make_input({3, 1}, kLong, 0, 6), make_input({1, 2}, kLong, -5, 5)});
  check_parity([](const TensorList& a) { return a[0].index({a[1]}); }, {x, make_input({2, 3}, kLong, 0, 6)});
  check_parity([](const TensorList& a) { return a[0].index({a[1]}); }, {x, make_input({5}, kInt, 0, 6)});
  // Non-contiguous self: a transposed, step-sliced view.
  check_parity(
      [](const TensorList& a) {
        return a[0].transpose(0, 2).slice(1, 0, 5, 2).index({Slice(), a[1]});
      },
      {x, make_input({4}, kLong, 0, 3)});
  check_parity(
      [](const TensorList& a) {
        return a[0].index({1, None, Ellipsis, a[1]});
      },
      {x, make_input({3}, kLong, 0, 4)});
  // Empty index, empty self.
  check_parity([](const TensorList& a) { return a[0].index({a[1]}); }, {x, empty({0}, kLong)});
  check_parity(
      [](const TensorList& a) {
        return a[0].index({Slice(), a[1]});
      },
      {empty({0, 5}, kFloat), make_input({3}, kLong, 0, 5)});
}

TEST_CASE("cuda index: boolean and byte masks") {
  for (ScalarType t : {kFloat, kHalf, kBFloat16, kInt64, kBool}) {
    Tensor x = make_input({4, 5, 3}, t);
    check_parity([](const TensorList& a) { return a[0].index({a[1]}); }, {x, make_input({4}, kBool)});
    check_parity([](const TensorList& a) { return a[0].index({a[1]}); }, {x, make_input({4, 5}, kBool)});
    check_parity(
        [](const TensorList& a) {
          return a[0].index({Slice(), a[1], 2});
        },
        {x, make_input({5}, kBool)});
    check_parity([](const TensorList& a) { return a[0].index({a[1].to(kUInt8)}); },
                 {x, make_input({4}, kBool)});
    check_parity(
        [](const TensorList& a) {
          return a[0].index({a[1], a[2]});
        },
        {x, make_input({4, 5}, kBool), make_input({1}, kLong, 0, 3)});
  }
  // All false, all true, and a 0-dim self with a 0-dim mask.
  Tensor x = make_input({3, 4}, kFloat);
  check_parity([](const TensorList& a) { return a[0].index({a[1]}); }, {x, zeros({3, 4}, kBool)});
  check_parity([](const TensorList& a) { return a[0].index({a[1]}); }, {x, ones({3}, kBool)});
  check_parity([](const TensorList& a) { return a[0].index({a[1]}); },
               {make_input({}, kFloat), ones({}, kBool)});
}

TEST_CASE("cuda index: CPU index tensors index a CUDA tensor") {
  Tensor x = make_input({5, 4}, kFloat), i = longs({4, 0, -1});
  Tensor got = x.to(cuda_device()).index({i});
  check_same(got, x.index({i}));
  Tensor m = bools({1, 0, 1, 1, 0}, {5});
  check_same(x.to(cuda_device()).index({m}), x.index({m}));
  // A CUDA index for a CPU tensor is refused, as PyTorch does.
  try {
    (void)x.index({i.to(cuda_device())});
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) ==
          "indices should be either on cpu or on the same device as the indexed tensor (cpu)");
  }
}

TEST_CASE("cuda index: more than 1<<20 elements") {
  const int64_t n = (int64_t{1} << 20) + 3;
  check_parity([](const TensorList& a) { return a[0].index({a[1]}); },
               {make_input({n}, kFloat), make_input({n}, kLong, -n, n)});
  check_parity([](const TensorList& a) { return a[0].index({a[1]}); },
               {make_input({n}, kHalf), make_input({n}, kBool)});
  check_parity(
      [](const TensorList& a) {
        return a[0].index({Slice(), a[1]});
      },
      {make_input({3, n / 3 + 1}, kDouble), make_input({5}, kLong, 0, n / 3)});
}

TEST_CASE("cuda index: gradient (an accumulating index_put_ of grad)") {
  for (ScalarType t : kFloatTypes) {
    check_grad_parity([](const TensorList& a) { return a[0].index({a[1]}); },
                      {make_input({5, 3}, t), longs({0, 4, 0, 0, -1, 2})});
    check_grad_parity(
        [](const TensorList& a) {
          return a[0].index({Slice(), a[1], a[2]});
        },
        {make_input({2, 4, 3}, t), make_input({7}, kLong, 0, 4), make_input({7}, kLong, 0, 3)});
    check_grad_parity([](const TensorList& a) { return a[0].index({a[1]}); },
                      {make_input({4, 3}, t), make_input({4, 3}, kBool)});
  }
}

TEST_CASE("cuda index_put_: assignment with distinct indices, every dtype") {
  for (ScalarType t : kAllTypes) {
    INFO("dtype " << t);
    check_parity(
        [](const TensorList& a) {
          Tensor y = a[0].clone();
          return index_put_(y, {a[1]}, a[2]);
        },
        {make_input({6, 5}, t), distinct(6, 4), make_input({4, 5}, t)});
    // Broadcast value, two index tensors, a strided destination.
    check_parity(
        [](const TensorList& a) {
          Tensor y = a[0].clone(), yt = y.t();
          index_put_(yt, {a[1], a[2]}, a[3]);
          return y;
        },
        {make_input({7, 5}, t), distinct(5, 3), distinct(7, 3, 9), make_input({1}, t)});
  }
}

TEST_CASE("cuda index_put_: accumulate with repeated indices is exact and deterministic") {
  for (ScalarType t : kAllTypes) {
    INFO("dtype " << t);
    // 200 writes into 5 rows: long runs of repeats, summed in the CPU's order bit for bit.
    check_parity([](const TensorList& a) { return index_put(a[0], {a[1]}, a[2], /*accumulate=*/true); },
                 {make_input({5, 3}, t), make_input({200}, kLong, -5, 5), make_input({200, 3}, t)},
                 Tol{0, 0});
    check_parity(
        [](const TensorList& a) {
          Tensor y = a[0].clone();
          index_put_(y, {a[1], a[2]}, a[3], /*accumulate=*/true);
          return y;
        },
        {make_input({4, 6}, t), make_input({50}, kLong, 0, 4), make_input({50}, kLong, 0, 6),
         make_input({}, t)},
        Tol{0, 0});
  }
  // Twice on the GPU: the same bits.
  const int64_t n = (int64_t{1} << 20) + 3;
  Tensor dst = zeros({1000}, TensorOptions().device(cuda_device()));
  Tensor idx = make_input({n}, kLong, 0, 1000).to(cuda_device());
  Tensor val = make_input({n}, kFloat).to(cuda_device());
  Tensor r1 = index_put(dst, {idx}, val, true), r2 = index_put(dst, {idx}, val, true);
  check_same(r1, r2.cpu(), Tol{0, 0});
  check_same(r1, index_put(dst.cpu(), {idx.cpu()}, val.cpu(), true), Tol{0, 0});
}

TEST_CASE("cuda index_put_: masks, TensorIndex assignment, CPU scalar values") {
  check_parity(
      [](const TensorList& a) {
        Tensor y = a[0].clone();
        y.index_put_({a[1]}, 7.5);
        y.index_put_({Slice(), a[2]}, a[3]);
        return y;
      },
      {make_input({4, 6}, kFloat), make_input({4, 6}, kBool), distinct(6, 2), make_input({4, 1}, kFloat)});
  Tensor x = make_input({5}, kFloat);
  Tensor on_gpu = x.to(cuda_device());
  index_put_(on_gpu, {longs({1, 3})}, tensor(2.0f));  // a CPU 0-dim value
  Tensor want = x.clone();
  index_put_(want, {longs({1, 3})}, tensor(2.0f));
  check_same(on_gpu, want);
}

TEST_CASE("cuda index_put: gradients of self and value") {
  for (ScalarType t : {kFloat, kDouble, kHalf}) {
    check_grad_parity([](const TensorList& a) { return index_put(a[0], {a[2]}, a[1], false); },
                      {make_input({6, 3}, t), make_input({4, 3}, t), distinct(6, 4)});
    check_grad_parity([](const TensorList& a) { return index_put(a[0], {a[2]}, a[1], true); },
                      {make_input({6, 3}, t), make_input({9, 3}, t), make_input({9}, kLong, 0, 6)});
  }
}

TEST_CASE("cuda index_select: every dtype, each dim, strided inputs, 0-dim") {
  for (ScalarType t : kAllTypes) {
    INFO("dtype " << t);
    Tensor x = make_input({4, 5, 6}, t);
    for (int64_t dim : {0, 1, 2, -1})
      check_parity([dim](const TensorList& a) { return a[0].index_select(dim, a[1]); },
                   {x, make_input({7}, kLong, 0, 4)});
  }
  Tensor x = make_input({8, 6}, kFloat);
  check_parity([](const TensorList& a) { return a[0].t().index_select(1, a[1].slice(0, 0, 6, 2)); },
               {x, make_input({6}, kLong, 0, 8)});
  check_parity([](const TensorList& a) { return a[0].index_select(0, a[1]); },
               {x, make_input({3}, kInt, 0, 8)});
  check_parity([](const TensorList& a) { return a[0].index_select(0, a[1]); }, {x, empty({0}, kLong)});
  check_parity([](const TensorList& a) { return a[0].index_select(0, a[1]); },
               {make_input({}, kFloat), zeros({1}, kLong)});
  const int64_t n = (int64_t{1} << 20) + 3;
  check_parity([](const TensorList& a) { return a[0].index_select(0, a[1]); },
               {make_input({n / 4 + 1, 4}, kHalf), make_input({n / 4 + 1}, kLong, 0, n / 4 + 1)});
}

TEST_CASE("cuda index_select: gradient (index_add of grad)") {
  for (ScalarType t : kFloatTypes)
    check_grad_parity([](const TensorList& a) { return a[0].index_select(1, a[1]); },
                      {make_input({3, 5}, t), longs({4, 0, 4, 4, 2})});
}

TEST_CASE("cuda masked_select: every dtype, broadcasting mask and self") {
  for (ScalarType t : kAllTypes)
    check_parity([](const TensorList& a) { return a[0].masked_select(a[1]); },
                 {make_input({4, 5}, t), make_input({4, 5}, kBool)});
  check_parity([](const TensorList& a) { return a[0].masked_select(a[1]); },
               {make_input({4, 1}, kFloat), make_input({3, 1, 5}, kBool)});
  check_parity([](const TensorList& a) { return a[0].t().masked_select(a[1].to(kUInt8)); },
               {make_input({5, 4}, kDouble), make_input({4, 5}, kBool)});
  check_parity([](const TensorList& a) { return a[0].masked_select(a[1]); },
               {make_input({}, kFloat), ones({}, kBool)});
  check_grad_parity([](const TensorList& a) { return a[0].masked_select(a[1]); },
                    {make_input({3, 1}, kFloat), make_input({3, 4}, kBool)});
}

TEST_CASE("cuda nonzero: every dtype, strided, 0-dim, empty, large") {
  for (ScalarType t : kAllTypes) {
    INFO("dtype " << t);
    check_parity([](const TensorList& a) { return a[0].nonzero(); }, {make_input({4, 5, 3}, t, -1, 2)});
  }
  check_parity([](const TensorList& a) { return a[0].t().slice(0, 0, 6, 2).nonzero(); },
               {make_input({5, 6}, kInt32, -1, 2)});
  check_parity([](const TensorList& a) { return a[0].nonzero(); }, {ones({}, kFloat)});
  check_parity([](const TensorList& a) { return a[0].nonzero(); }, {zeros({}, kFloat)});
  check_parity([](const TensorList& a) { return a[0].nonzero(); }, {zeros({3, 4}, kHalf)});
  check_parity([](const TensorList& a) { return a[0].nonzero(); }, {empty({0, 3}, kFloat)});
  check_parity([](const TensorList& a) { return a[0].nonzero(); }, {full({2, 2}, NAN, kFloat)});
  const int64_t n = (int64_t{1} << 20) + 3;
  check_parity([](const TensorList& a) { return a[0].nonzero(); }, {make_input({n}, kBool)});
  check_parity([](const TensorList& a) { return a[0].nonzero(); }, {make_input({3, n / 3}, kInt8, -1, 2)});
}

TEST_CASE("cuda indexing errors: the CPU's texts") {
  Tensor x = make_input({3, 4}, kFloat);
  // Out of range, positive and negative, in the first or a later index tensor.
  check_error_parity([](const TensorList& a) { return a[0].index({a[1]}); }, {x, longs({0, 3, 1})});
  check_error_parity([](const TensorList& a) { return a[0].index({a[1]}); }, {x, longs({-4})});
  check_error_parity([](const TensorList& a) { return a[0].index({Slice(), a[1]}); }, {x, longs({1, 9, 12})});
  check_error_parity(
      [](const TensorList& a) {
        return a[0].index({a[1], a[2]});
      },
      {x, longs({0, 1}), longs({3, 4})});
  check_error_parity([](const TensorList& a) { return a[0].index({a[1]}); }, {empty({0, 2}), longs({0})});
  check_error_parity(
      [](const TensorList& a) {
        Tensor y = a[0].clone();
        return index_put_(y, {a[1]}, a[2], true);
      },
      {x, longs({5}), zeros({4})});
  check_error_parity([](const TensorList& a) { return a[0].index_select(1, a[1]); }, {x, longs({0, 4})});
  check_error_parity([](const TensorList& a) { return a[0].index_select(0, a[1]); }, {x, longs({-1})});
  // Shapes and dtypes.
  check_error_parity([](const TensorList& a) { return a[0].index({a[1]}); }, {x, make_input({4}, kBool)});
  check_error_parity([](const TensorList& a) { return a[0].index({a[1], a[1], a[1]}); }, {x, longs({0})});
  check_error_parity([](const TensorList& a) { return a[0].index({a[1]}); }, {x, make_input({2}, kFloat)});
  check_error_parity(
      [](const TensorList& a) {
        return a[0].index({a[1], a[2]});
      },
      {x, longs({0, 1}), longs({0, 1, 2})});
  check_error_parity([](const TensorList& a) { return a[0].masked_select(a[1]); }, {x, zeros({3, 4}, kInt)});
  check_error_parity(
      [](const TensorList& a) {
        Tensor y = a[0].clone();
        return index_put_(y, {a[1]}, a[2]);
      },
      {x, longs({0}), zeros({4}, kDouble)});
  // After an error the device is still usable (no in-kernel assert killed the context).
  Tensor ok = x.to(cuda_device()).index({longs({2})});
  check_same(ok, x.index({longs({2})}));
}
