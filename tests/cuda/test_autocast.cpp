// CUDA autocast (core/autocast.h): the float16 dtype table of each op family (from
// PyTorch's CUDA lists in ATen/autocast_mode.h: lower_precision_fp, fp32, fp32_set_opt_dtype,
// fp32_append_dtype, promote, and binary_cross_entropy's ban), values against the same op
// run on the explicitly cast inputs on CPU, gradients reaching float32 leaves in float32, and
// CPU tensors left alone by a CUDA region.
#include "cuda/parity.h"

using namespace ember;
using namespace ember::test;
namespace F = ember::nn::functional;

namespace {

Tensor on_cuda(IntArrayRef shape, ScalarType t, uint64_t seed = 0) {
  return make_input(shape, kFloat, 0.5, 1.5, seed).to(cuda_device()).to(t);
}

struct Case {
  const char* name;
  std::function<Tensor()> run;
  ScalarType expected;
};

}  // namespace

TEST_CASE("autocast cuda: float16 dtype table") {
  AutocastGuard guard(kCUDA, kHalf);
  const Tensor idx = tensor(std::vector<int64_t>{0, 1, 1}).to(cuda_device());
  auto f32 = [](IntArrayRef s) { return on_cuda(s, kFloat); };
  auto f16 = [](IntArrayRef s) { return on_cuda(s, kHalf); };
  const std::vector<Case> cases = {
      // lower_precision_fp: float32 in, float16 out
      {"mm", [&] { return mm(f32({2, 3}), f32({3, 4})); }, kHalf},
      {"bmm", [&] { return bmm(f32({2, 2, 3}), f32({2, 3, 4})); }, kHalf},
      {"addmm", [&] { return addmm(f32({4}), f32({2, 3}), f32({3, 4})); }, kHalf},
      {"baddbmm", [&] { return baddbmm(f32({4}), f32({2, 2, 3}), f32({2, 3, 4})); }, kHalf},
      {"matmul", [&] { return matmul(f32({2, 2, 3}), f32({3, 4})); }, kHalf},
      {"linear", [&] { return F::linear(f32({2, 3}), f32({4, 3}), f32({4})); }, kHalf},
      {"mv", [&] { return mv(f32({2, 3}), f32({3})); }, kHalf},
      {"conv2d", [&] { return conv2d(f32({1, 2, 5, 5}), f32({3, 2, 2, 2})); }, kHalf},
      {"conv_transpose1d", [&] { return conv_transpose1d(f32({1, 2, 4}), f32({2, 3, 2})); }, kHalf},
      // fp32 / fp32_set_opt_dtype / fp32_append_dtype: float16 in, float32 out
      {"softmax", [&] { return softmax(f16({2, 3}), 1); }, kFloat},
      {"log_softmax", [&] { return log_softmax(f16({2, 3}), 1); }, kFloat},
      {"layer_norm", [&] { return layer_norm(f16({2, 3}), {3}, f32({3}), f32({3})); }, kFloat},
      {"group_norm", [&] { return group_norm(f16({2, 4, 3}), 2, f16({4}), f16({4})); }, kFloat},
      {"exp", [&] { return exp(f16({3})); }, kFloat},
      {"log", [&] { return log(f16({3})); }, kFloat},
      {"rsqrt", [&] { return rsqrt(f16({3})); }, kFloat},
      {"pow", [&] { return pow(f16({3}), 2.0); }, kFloat},
      {"softplus", [&] { return softplus(f16({3})); }, kFloat},
      {"sum", [&] { return sum(f16({3})); }, kFloat},
      {"sum dtype", [&] { return sum(f16({3}), kHalf); }, kHalf},  // an explicit dtype wins
      {"prod", [&] { return prod(f16({3})); }, kFloat},
      {"cumsum", [&] { return cumsum(f16({3}), 0); }, kFloat},
      {"norm", [&] { return norm(f16({3})); }, kFloat},
      {"logsumexp", [&] { return logsumexp(f16({3}), {0}); }, kFloat},
      {"mse_loss", [&] { return mse_loss(f16({3}), f16({3})); }, kFloat},
      {"nll_loss", [&] { return nll_loss(f16({3, 2}), idx); }, kFloat},
      {"cross_entropy", [&] { return cross_entropy_loss(f16({3, 2}), idx); }, kFloat},
      {"bce_with_logits", [&] { return binary_cross_entropy_with_logits(f16({3}), f16({3}) * 0.5); }, kFloat},
      // promote: the widest floating input
      {"addcmul", [&] { return addcmul(f16({3}), f32({3}), f16({3})); }, kFloat},
      {"atan2", [&] { return atan2(f16({3}), f32({3})); }, kFloat},
      {"dot", [&] { return dot(f16({3}), f32({3})); }, kFloat},
      {"index_put", [&] { return index_put(f16({3}), {idx.slice(0, 0, 2)}, f32({2})); }, kFloat},
      {"scatter_add", [&] { return scatter_add(f16({3}), 0, idx, f32({3})); }, kFloat},
      // on no list
      {"relu", [&] { return relu(f16({3})); }, kHalf},
      {"add", [&] { return f16({3}) + f16({3}); }, kHalf},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    Tensor out = c.run();
    CHECK(out.is_cuda());
    CHECK(out.dtype() == c.expected);
  }
  CHECK_THROWS_WITH_AS(binary_cross_entropy(f16({3}) * 0.5, f16({3}) * 0.5),
                       doctest::Contains("unsafe to autocast"), Error);
}

TEST_CASE("autocast cuda: values equal the op on explicitly cast inputs") {
  Tensor a = make_input({8, 16}, kFloat, -1, 1, 1), b = make_input({16, 4}, kFloat, -1, 1, 2);
  Tensor expect = mm(a.to(kHalf), b.to(kHalf));  // CPU half GEMM as the reference
  Tensor got;
  {
    AutocastGuard guard(kCUDA, kHalf);
    got = mm(a.to(cuda_device()), b.to(cuda_device()));
  }
  check_same(got, expect);
  Tensor s = make_input({4, 7}, kHalf, -3, 3, 3);
  Tensor sm;
  {
    AutocastGuard guard(kCUDA, kHalf);
    sm = softmax(s.to(cuda_device()), 1);
  }
  check_same(sm, softmax(s.to(kFloat), 1));
}

TEST_CASE("autocast cuda: gradients reach float32 leaves in float32") {
  Tensor x = make_input({4, 3}, kFloat).to(cuda_device()).requires_grad_();
  Tensor w = make_input({5, 3}, kFloat, -1, 1, 1).to(cuda_device()).requires_grad_();
  Tensor loss;
  {
    AutocastGuard guard(kCUDA, kHalf);
    Tensor h = F::linear(x, w);
    CHECK(h.dtype() == kHalf);
    loss = log_softmax(h, 1).sum();
    CHECK(loss.dtype() == kFloat);
    CHECK(autocast::cached_cast_count() == 2);  // both are float32 leaves that require grad
  }
  CHECK(autocast::cached_cast_count() == 0);
  loss.backward();
  CHECK(x.grad().dtype() == kFloat);
  CHECK(w.grad().dtype() == kFloat);
  CHECK(x.grad().is_cuda());
}

TEST_CASE("autocast cuda: a CUDA region leaves CPU tensors alone, and the reverse") {
  {
    AutocastGuard guard(kCUDA, kHalf);
    CHECK(mm(ones({2, 2}), ones({2, 2})).dtype() == kFloat);
  }
  {
    AutocastGuard guard(kCPU, kBFloat16);
    Tensor c = ones({2, 2}).to(cuda_device());
    CHECK(mm(c, c).dtype() == kFloat);
  }
  {
    AutocastGuard guard(kCUDA, kBFloat16);
    Tensor c = ones({2, 2}).to(cuda_device());
    CHECK(mm(c, c).dtype() == kBFloat16);
  }
}
