// EmbeddingBag and F::embedding_bag (core/ops/embedding_bag.cpp): every mode against PyTorch
// 2.9's numbers for the same table and bags (F.embedding_bag(inp, w, off, mode=m).flatten()
// .tolist() with w = arange(12).view(4, 3), inp = [1, 2, 0, 3, 3, 1], off = [0, 2, 2, 5]), with
// an empty bag, per_sample_weights, padding_idx, include_last_offset and 2-d input; gradients
// by float64 gradcheck; repr and errors as PyTorch's.
#include <sstream>

#include "ember/nn/functional/embedding.h"
#include "ember/nn/modules/embedding.h"
#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::longs;
using ember::test::rand_leaf;
namespace F = ember::nn::functional;

namespace {
Tensor table() { return arange(12, kFloat).view({4, 3}); }
Tensor bag_input() { return longs({1, 2, 0, 3, 3, 1}); }
Tensor bag_offsets() { return longs({0, 2, 2, 5}); }
F::EmbeddingBagFuncOptions opts() { return F::EmbeddingBagFuncOptions().offsets(bag_offsets()); }
}  // namespace

TEST_CASE("test_embedding_bag: sum, mean and max match PyTorch, an empty bag is zeros") {
  check_close(F::embedding_bag(bag_input(), table(), opts().mode(kSum)), {9, 11, 13, 0, 0, 0, 18, 21, 24, 3, 4, 5});
  check_close(F::embedding_bag(bag_input(), table(), opts()), {4.5, 5.5, 6.5, 0, 0, 0, 6, 7, 8, 3, 4, 5});
  check_close(F::embedding_bag(bag_input(), table(), opts().mode(kMax)), {6, 7, 8, 0, 0, 0, 9, 10, 11, 3, 4, 5});
}

TEST_CASE("test_embedding_bag: per_sample_weights, padding_idx, include_last_offset, 2-d input") {
  check_close(F::embedding_bag(bag_input(), table(),
                               opts().mode(kSum).per_sample_weights(tensor({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}))),
              {15, 18, 21, 0, 0, 0, 81, 93, 105, 18, 24, 30});
  check_close(F::embedding_bag(bag_input(), table(), opts().padding_idx(3)), {4.5, 5.5, 6.5, 0, 0, 0, 0, 1, 2, 3, 4, 5});
  check_close(F::embedding_bag(bag_input(), table(), F::EmbeddingBagFuncOptions()
                                                         .offsets(longs({0, 2, 2, 5, 6}))
                                                         .mode(kSum)
                                                         .include_last_offset(true)),
              {9, 11, 13, 0, 0, 0, 18, 21, 24, 3, 4, 5});
  check_close(F::embedding_bag(longs({1, 2, 0, 3}).view({2, 2}), table(), F::EmbeddingBagFuncOptions().mode(kMax)),
              {6, 7, 8, 9, 10, 11});
}

TEST_CASE("test_embedding_bag: gradients reach weight and per_sample_weights (float64 gradcheck)") {
  for (int mode = 0; mode < 3; ++mode) {
    CAPTURE(mode);
    check_grad(
        [mode](const TensorList& t) {
          auto o = opts();
          if (mode == 0) o.mode(kSum);
          if (mode == 2) o.mode(kMax);
          return F::embedding_bag(bag_input(), t[0], o);
        },
        {rand_leaf({4, 3})});
  }
  check_grad(
      [](const TensorList& t) {
        return F::embedding_bag(bag_input(), t[0], opts().mode(kSum).per_sample_weights(t[1]));
      },
      {rand_leaf({4, 3}), rand_leaf({6})});
}

TEST_CASE("test_embedding_bag: the module, its repr and from_pretrained") {
  nn::EmbeddingBag bag(nn::EmbeddingBagOptions(4, 3).mode(kSum).padding_idx(0));
  CHECK(bag->weight.sizes().vec() == std::vector<int64_t>{4, 3});
  check_close(bag->weight[0], {0, 0, 0});
  std::ostringstream s;
  s << *bag;
  CHECK(s.str() == "EmbeddingBag(4, 3, mode='sum', padding_idx=0)");
  std::ostringstream d;
  d << *nn::EmbeddingBag(4, 3);
  CHECK(d.str() == "EmbeddingBag(4, 3, mode='mean')");
  auto pre = nn::EmbeddingBag::from_pretrained(table(), nn::EmbeddingBagFromPretrainedOptions().mode(kMax));
  CHECK_FALSE(pre->weight.requires_grad());
  check_close(pre->forward(bag_input(), bag_offsets()), {6, 7, 8, 0, 0, 0, 9, 10, 11, 3, 4, 5});
}

TEST_CASE("test_embedding_bag: errors use PyTorch's texts") {
  check_error([] { F::embedding_bag(bag_input(), table()); }, "offsets has to be a 1D Tensor but got None");
  check_error([] { F::embedding_bag(longs({1, 2}).view({1, 2}), table(), opts()); },
              "if input is 2D, then offsets has to be None");
  check_error([] { F::embedding_bag(bag_input(), table(), opts().per_sample_weights(ones({6}))); },
              "per_sample_weights is only supported for mode='sum' (got mode='mean')");
  check_error([] { F::embedding_bag(bag_input(), table(), F::EmbeddingBagFuncOptions().offsets(longs({1, 2}))); },
              "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. "
              "However, got 1");
  check_error([] { F::embedding_bag(bag_input().to(kFloat), table(), opts()); },
              "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but "
              "got torch.FloatTensor instead (while checking arguments for embedding_bag)");
  check_error([] { F::embedding_bag(longs({1, 9}), table(), F::EmbeddingBagFuncOptions().offsets(longs({0}))); },
              "Index 1 of input takes value 9 which is not in the valid range [0, 4)");
  check_error([] { F::embedding_bag(bag_input(), table(), opts().mode(kMax).scale_grad_by_freq(true)); },
              "max mode does not support scaling the gradient by the frequency");
}
