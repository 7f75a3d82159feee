// embedding, embedding_renorm_, one_hot (core/ops/embedding.cpp): row lookup against a plain
// loop, gradients (repeated indices, padding_idx, scale_grad_by_freq), gradcheck, errors.
#include <cmath>

#include "ember/core/ops/embedding.h"
#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::check_gradgrad;
using ember::test::longs;
using ember::test::rand_leaf;
using ember::test::seq;
using ember::test::values;

TEST_CASE("embedding gathers rows (plain loop)") {
  Tensor w = seq({5, 3});  // row k holds 3k, 3k+1, 3k+2
  Tensor idx = tensor({{4, 0}, {2, 2}});
  Tensor out = embedding(w, idx);
  CHECK(out.sizes().vec() == std::vector<int64_t>{2, 2, 3});
  std::vector<double> expected;
  for (int64_t k : {4, 0, 2, 2})
    for (int64_t j = 0; j < 3; ++j) expected.push_back(3.0 * k + j);
  check_close(out, expected);
  check_close(embedding(w.to(kFloat), idx.to(kInt)), expected);             // int32 indices
  check_close(embedding(w.t().contiguous().t(), longs({1})), {3, 4, 5});    // strided weight
  CHECK(embedding(w, tensor(3)).sizes().vec() == std::vector<int64_t>{3});  // 0-d index
  CHECK(embedding(w, empty({0}, kLong)).sizes().vec() == std::vector<int64_t>{0, 3});
}

TEST_CASE("embedding backward sums repeated rows, skips padding_idx, scales by frequency") {
  Tensor w = rand_leaf({4, 2});
  Tensor idx = longs({1, 3, 1, 0, 1});
  Tensor go = seq({5, 2}) + 1;  // rows (1,2) (3,4) (5,6) (7,8) (9,10)
  embedding(w, idx).backward(go);
  // Row 1 receives rows 0, 2 and 4 of go; row 3 row 1; row 0 row 3; row 2 nothing.
  check_close(w.grad(), {7, 8, 1 + 5 + 9, 2 + 6 + 10, 0, 0, 3, 4});
  w.mutable_grad().reset();
  embedding(w, idx, /*padding_idx=*/1).backward(go);
  check_close(w.grad(), {7, 8, 0, 0, 0, 0, 3, 4});
  w.mutable_grad().reset();
  embedding(w, idx, -1, /*scale_grad_by_freq=*/true).backward(go);
  check_close(w.grad(), {7, 8, 15.0 / 3, 18.0 / 3, 0, 0, 3, 4});  // index 1 occurs 3 times
  // The padding row still reads its values forward.
  check_close(embedding(w, longs({1}), 1), values(w[1]));

  check_grad([&](const TensorList& t) { return embedding(t[0], idx); }, {rand_leaf({4, 3})});
  // padding_idx 2 is not among the indices, so the gradient is the true one (with the
  // padding row or scale_grad_by_freq in play it deliberately is not).
  check_grad([&](const TensorList& t) { return embedding(t[0].t(), idx, 2); }, {rand_leaf({3, 4})});
  check_gradgrad([&](const TensorList& t) { return embedding(t[0] * t[0], idx, 3, true); },
                 {rand_leaf({4, 2})});
  CHECK(embedding(w, idx).grad_fn()->name() == "EmbeddingBackward0");
}

TEST_CASE("embedding_renorm_ rescales rows whose norm exceeds max_norm") {
  Tensor w = tensor({{3.0, 4.0}, {0.3, 0.4}, {6.0, 8.0}}, kDouble);
  embedding_renorm_(w, longs({0, 1, 0}), 1.0, 2.0);
  // Row 0 (norm 5) becomes (3, 4) / (5 + 1e-7); row 1 (norm 0.5) stays; row 2 not indexed.
  check_close(w, {3 / (5 + 1e-7), 4 / (5 + 1e-7), 0.3, 0.4, 6, 8}, 1e-12);
}

TEST_CASE("one_hot") {
  check_close(one_hot(longs({0, 2, 1})), {1, 0, 0, 0, 0, 1, 0, 1, 0});
  Tensor h = one_hot(tensor({{1, 0}}), 4);
  CHECK(h.dtype() == kLong);
  CHECK(h.sizes().vec() == std::vector<int64_t>{1, 2, 4});
  check_close(h, {0, 1, 0, 0, 1, 0, 0, 0});
  CHECK(one_hot(empty({0}, kLong), 3).sizes().vec() == std::vector<int64_t>{0, 3});
  check_error([] { one_hot(longs({-1, 0})); }, "Class values must be non-negative.");
  check_error([] { one_hot(longs({3}), 3); }, "Class values must be smaller than num_classes.");
  check_error([] { one_hot(tensor({1.0})); }, "one_hot is only applicable to index tensor.");
  check_error([] { one_hot(empty({0}, kLong)); }, "Can not infer total number of classes from empty tensor.");
}

TEST_CASE("embedding errors") {
  Tensor w = ones({4, 2});
  check_error([&] { embedding(w, longs({4})); }, "index out of range in self");
  check_error([&] { embedding(w, longs({-1})); }, "index out of range in self");
  check_error([&] { embedding(ones({4}), longs({0})); }, "'weight' must be 2-D");
  check_error([&] { embedding(w, tensor({1.0})); },
              "Expected tensor for argument #1 'indices' to have one of the "
              "following scalar types: Long, Int");
}
