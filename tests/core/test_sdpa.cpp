// scaled_dot_product_attention (core/ops/attention.cpp, kernels in core/cpu/attention.cpp):
// a hand-worked value, the fused op equal to the plain composition across masks, causal,
// odd lengths, head sizes, batch broadcasting, GQA, fully masked rows and 16-bit dtypes (in
// values and gradients), float64 gradcheck of both paths, the fused path's memory staying
// below one [L, S] matrix, autocast, and PyTorch's error texts. PyTorch fixture values are in
// tests/nn/test_attention.cpp.
#include <cmath>
#include <cstdlib>
#include <limits>

#include "ember/autograd/grad_mode.h"
#include "ember/core/allocator.h"
#include "ember/core/autocast.h"
#include "ember/core/ops/attention.h"
#include "ember/core/ops/creation.h"
#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::from_values;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor leaf(IntArrayRef shape, ScalarType dt = kDouble) {
  return (randn(shape, kDouble)).to(dt).detach().requires_grad_(true);
}

/// One call's output and input gradients for a fixed upstream gradient.
struct Result {
  Tensor out, gq, gk, gv;
};

template <class F>
Result run(F&& f, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& gout_seed) {
  Tensor q2 = q.detach().requires_grad_(true), k2 = k.detach().requires_grad_(true),
         v2 = v.detach().requires_grad_(true);
  Tensor out = f(q2, k2, v2);
  Tensor g = gout_seed.defined() ? gout_seed.to(out.dtype()) : ones_like(out);
  (out * g).sum().backward();
  return {out.detach(), q2.grad(), k2.grad(), v2.grad()};
}

/// One CHECK that |a - b| <= atol + rtol |b| everywhere (the sweeps compare many elements).
void check_all_close(const Tensor& a, const Tensor& b, double atol, double rtol) {
  REQUIRE(a.sizes().equals(b.sizes()));
  Tensor excess = (a.to(kDouble) - b.to(kDouble)).abs() - (b.to(kDouble).abs() * rtol + atol);
  const double worst = excess.numel() ? excess.max().item<double>() : -1.0;
  INFO("worst excess over the tolerance: " << worst);
  CHECK(worst <= 0);
}

/// The fused path against the plain composition on the same inputs (values and gradients).
void check_fused_equals_math(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                             bool causal, bool gqa = false, double atol = 1e-10, double rtol = 1e-8) {
  Tensor g =
      randn(ember::detail::sdpa_math(q.detach(), k.detach(), v.detach(), mask, 0.0, causal, std::nullopt, gqa)
                .sizes(),
            kDouble);
  Result fused = run(
      [&](auto& a, auto& b, auto& c) { return ember::detail::sdpa_fused(a, b, c, mask, causal, {}, gqa); }, q,
      k, v, g);
  Result math = run([&](auto& a, auto& b,
                        auto& c) { return ember::detail::sdpa_math(a, b, c, mask, 0.0, causal, {}, gqa); },
                    q, k, v, g);
  check_all_close(fused.out, math.out, atol, rtol);
  check_all_close(fused.gq, math.gq, atol, rtol);
  check_all_close(fused.gk, math.gk, atol, rtol);
  check_all_close(fused.gv, math.gv, atol, rtol);
}

}  // namespace

TEST_CASE("test_sdpa: a hand-worked case") {
  // q = [1, 0], k = [[1, 0], [0, 1]], v = [[1, 2], [3, 4]], scale 1/sqrt(2): scores
  // [1/sqrt(2), 0], p = softmax, out = p0 [1, 2] + p1 [3, 4].
  Tensor q = from_values({1, 0}, {1, 2}), k = from_values({1, 0, 0, 1}, {2, 2}),
         v = from_values({1, 2, 3, 4}, {2, 2});
  const double e = std::exp(1 / std::sqrt(2.0)), p0 = e / (e + 1), p1 = 1 / (e + 1);
  std::vector<double> expected{p0 + 3 * p1, 2 * p0 + 4 * p1};
  check_close(scaled_dot_product_attention(q, k, v), expected, 1e-12, 1e-12);
  check_close(ember::detail::sdpa_math(q, k, v), expected, 1e-12, 1e-12);
  check_close(ember::detail::sdpa_fused(q, k, v), expected, 1e-12, 1e-12);
}

TEST_CASE("test_sdpa: fused equals the plain composition across lengths, head sizes and masks") {
  manual_seed(1);
  const std::vector<std::pair<int64_t, int64_t>> lengths{{1, 1},    {7, 7}, {65, 130},
                                                         {130, 65}, {7, 1}, {1, 65}};
  for (auto [L, S] : lengths) {
    for (int64_t E : {1, 8, 64, 80, 130}) {
      if (L * S * E > 130 * 65 * 80) continue;  // keep the sweep quick
      const int64_t Ev = E == 8 ? 5 : E;
      Tensor q = randn({2, 2, L, E}, kDouble), k = randn({2, 2, S, E}, kDouble),
             v = randn({2, 2, S, Ev}, kDouble);
      INFO("L=" << L << " S=" << S << " E=" << E);
      check_fused_equals_math(q, k, v, {}, false);
      check_fused_equals_math(q, k, v, {}, true);
      check_fused_equals_math(q, k, v, rand({L, S}) > 0.3, false);
      check_fused_equals_math(q, k, v, randn({2, 1, L, S}, kDouble), false);
    }
  }
}

TEST_CASE("test_sdpa: fused equals plain in float32, with odd batch shapes, broadcasting and GQA") {
  manual_seed(2);
  Tensor q = randn({3, 65, 64}), k = randn({3, 130, 64}), v = randn({3, 130, 64});
  check_fused_equals_math(q, k, v, rand({3, 65, 130}) > 0.5, false, false, 1e-5, 1e-4);
  // 2-d (unbatched), 5-d, batch broadcast between q and k/v.
  check_fused_equals_math(randn({7, 8}), randn({9, 8}), randn({9, 3}), {}, true, false, 1e-5, 1e-4);
  check_fused_equals_math(randn({2, 2, 3, 5, 8}), randn({2, 2, 3, 6, 8}), randn({2, 2, 3, 6, 4}),
                          randn({2, 1, 1, 5, 6}), false, false, 1e-5, 1e-4);
  check_fused_equals_math(randn({2, 1, 5, 8}), randn({1, 3, 6, 8}), randn({1, 3, 6, 8}), {}, false, false,
                          1e-5, 1e-4);
  // Grouped-query attention: 6 query heads on 3 key heads and 2 value heads.
  check_fused_equals_math(randn({2, 6, 5, 8}), randn({2, 3, 7, 8}), randn({2, 2, 7, 4}), {}, false, true,
                          1e-5, 1e-4);
  check_fused_equals_math(randn({1, 4, 9, 8}), randn({1, 1, 9, 8}), randn({1, 1, 9, 8}), {}, true, true, 1e-5,
                          1e-4);
}

TEST_CASE("test_sdpa: a query that sees no key gives zeros and zero gradients on both paths") {
  manual_seed(3);
  Tensor q = randn({1, 2, 4, 8}, kDouble), k = randn({1, 2, 5, 8}, kDouble), v = randn({1, 2, 5, 3}, kDouble);
  Tensor bmask = ones({4, 5}, TensorOptions().dtype(kBool));
  bmask.select(0, 2).fill_(0);  // query 2 sees nothing
  Tensor fmask = zeros({4, 5}, kDouble);
  fmask.select(0, 1).fill_(-kInf);  // query 1 sees nothing
  for (const Tensor& mask : {bmask, fmask}) {
    const int64_t dead = mask.dtype() == kBool ? 2 : 1;
    for (bool fused : {true, false}) {
      Result r = run(
          [&](auto& a, auto& b, auto& c) {
            return fused ? ember::detail::sdpa_fused(a, b, c, mask) : ember::detail::sdpa_math(a, b, c, mask);
          },
          q, k, v, Tensor());
      INFO("fused=" << fused);
      check_close(r.out.select(2, dead), std::vector<double>(6, 0.0), 0, 0);
      check_close(r.gq.select(2, dead), std::vector<double>(16, 0.0), 0, 0);
      CHECK(r.gk.isfinite().all().item<bool>());
      CHECK(r.gv.isfinite().all().item<bool>());
    }
    check_fused_equals_math(q, k, v, mask, false);
  }
  // S = 0: every query sees nothing.
  Tensor out = scaled_dot_product_attention(randn({1, 3, 4}), randn({1, 0, 4}), randn({1, 0, 2}));
  check_close(out, std::vector<double>(6, 0.0), 0, 0);
}

TEST_CASE("test_sdpa: float16 and bfloat16 accumulate in float") {
  manual_seed(4);
  for (ScalarType dt : {kHalf, kBFloat16}) {
    Tensor q = randn({2, 2, 65, 64}).to(dt), k = randn({2, 2, 70, 64}).to(dt),
           v = randn({2, 2, 70, 64}).to(dt);
    Tensor mask = rand({65, 70}) > 0.2;
    Tensor g = randn({2, 2, 65, 64});
    Result fused =
        run([&](auto& a, auto& b, auto& c) { return ember::detail::sdpa_fused(a, b, c, mask); }, q, k, v, g);
    // The reference: the plain composition in float64 on the same (rounded) inputs.
    Result ref = run([&](auto& a, auto& b, auto& c) { return ember::detail::sdpa_math(a, b, c, mask); },
                     q.to(kDouble), k.to(kDouble), v.to(kDouble), g);
    CHECK(fused.out.dtype() == dt);
    CHECK(fused.gq.dtype() == dt);
    const double tol = dt == kHalf ? 4e-3 : 3e-2;
    check_all_close(fused.out, ref.out, tol, tol);
    check_all_close(fused.gq, ref.gq, tol, tol);
    check_all_close(fused.gk, ref.gk, tol, tol);
    check_all_close(fused.gv, ref.gv, tol, tol);
  }
}

TEST_CASE("test_sdpa: gradcheck of the fused and plain paths in float64") {
  manual_seed(5);
  Tensor q = leaf({1, 2, 3, 4}), k = leaf({1, 2, 5, 4}), v = leaf({1, 2, 5, 3});
  Tensor bmask = rand({3, 5}) > 0.3;
  bmask.select(0, 0).fill_(0);
  Tensor fmask = randn({1, 2, 3, 5}, kDouble);
  for (bool causal : {false, true}) {
    check_grad([&](const TensorList& x) { return ember::detail::sdpa_fused(x[0], x[1], x[2], {}, causal); },
               {q, k, v});
    check_grad(
        [&](const TensorList& x) { return ember::detail::sdpa_math(x[0], x[1], x[2], {}, 0.0, causal); },
        {q, k, v});
  }
  for (const Tensor& mask : {bmask, fmask}) {
    check_grad([&](const TensorList& x) { return ember::detail::sdpa_fused(x[0], x[1], x[2], mask); },
               {q, k, v});
    check_grad([&](const TensorList& x) { return ember::detail::sdpa_math(x[0], x[1], x[2], mask); },
               {q, k, v});
  }
  // A float mask that requires grad takes the plain path and gets its gradient.
  Tensor m = fmask.detach().requires_grad_(true);
  check_grad([&](const TensorList& x) { return scaled_dot_product_attention(x[0], x[1], x[2], x[3]); },
             {q, k, v, m});
  // GQA and a scale, through the public function.
  Tensor kg = leaf({1, 1, 5, 4}), vg = leaf({1, 1, 5, 3});
  check_grad(
      [&](const TensorList& x) {
        return scaled_dot_product_attention(x[0], x[1], x[2], {}, 0.0, false, 0.7, true);
      },
      {q, kg, vg});
}

TEST_CASE("test_sdpa: the public function's paths and the fused op's node") {
  manual_seed(6);
  Tensor q = leaf({1, 1, 3, 4}, kFloat), k = leaf({1, 1, 3, 4}, kFloat), v = leaf({1, 1, 3, 4}, kFloat);
  Tensor out = scaled_dot_product_attention(q, k, v);
  CHECK(out.grad_fn()->name().find("ScaledDotProductFlashAttentionForCpuBackward0") != std::string::npos);
  auto [o, lse] = _scaled_dot_product_fused_attention(q, k, v, {}, false, 0.5);
  CHECK(lse.dtype() == kFloat);
  CHECK(lse.sizes().equals({1, 1, 3}));
  // logsumexp of the scores, by its definition.
  Tensor scores = q.detach().matmul(k.detach().transpose(-2, -1)) * 0.5;
  check_close(lse, scores.logsumexp({-1}), 1e-5, 1e-5);
  // The fused backward has no derivative of its own (PyTorch's neither): double backward says so.
  Tensor g = autograd::grad({(out * out).sum()}, {q}, {}, true, true)[0];
  check_error([&] { g.sum().backward(); },
              "the derivative for '_scaled_dot_product_flash_attention_for_cpu_backward'");
  // Dropout runs in the fused op too (tests/core/test_sdpa_dropout.cpp): p = 1 drops everything.
  Tensor dropped = scaled_dot_product_attention(q, k, v, {}, 1.0);
  CHECK(dropped.grad_fn()->name().find("ScaledDotProductFlashAttentionForCpuBackward0") != std::string::npos);
  check_close(dropped, std::vector<double>(12, 0.0), 0, 0);
}

TEST_CASE("test_sdpa: the fused path never holds an [L, S] matrix") {
  // The footprint is read from the caching allocator's high-water blocks; with the cache off
  // (CI's sanitizer run) nothing stays behind to measure.
  if (std::getenv("EMBER_NO_ALLOCATOR_CACHE") != nullptr) {
    MESSAGE("skipped: EMBER_NO_ALLOCATOR_CACHE is set (no cache to measure the footprint with)");
    return;
  }
  NoGradGuard no_grad;
  const int64_t L = 1024, E = 64;
  Tensor q = randn({1, 1, L, E}), k = randn({1, 1, L, E}), v = randn({1, 1, L, E});
  auto footprint = [&](auto&& f) {
    cpu_empty_cache();
    const size_t before = cpu_allocator_stats().allocated_bytes;
    { Tensor out = f(); }
    CpuAllocatorStats s = cpu_allocator_stats();
    return s.allocated_bytes + s.cached_bytes - before;  // the cache keeps the high-water blocks
  };
  const size_t fused = footprint([&] { return ember::detail::sdpa_fused(q, k, v, {}, true); });
  const size_t math = footprint([&] { return ember::detail::sdpa_math(q, k, v, {}, 0.0, true); });
  const size_t matrix = L * L * sizeof(float);
  INFO("fused " << fused << " bytes, plain " << math << " bytes");
  CHECK(fused < matrix / 2);
  CHECK(math >= matrix);
}

TEST_CASE("test_sdpa: autocast runs attention in the lower precision on CPU") {
  Tensor q = randn({1, 2, 3, 4}), k = randn({1, 2, 3, 4}), v = randn({1, 2, 3, 4});
  AutocastGuard guard(kCPU, kBFloat16);
  CHECK(scaled_dot_product_attention(q, k, v).dtype() == kBFloat16);
  CHECK(scaled_dot_product_attention(q, k, v, zeros({3, 3})).dtype() == kBFloat16);
  CHECK(scaled_dot_product_attention(q, k.to(kBFloat16), v).dtype() == kBFloat16);
  CHECK(scaled_dot_product_attention(q.to(kDouble), k.to(kDouble), v.to(kDouble)).dtype() == kDouble);
}

TEST_CASE("test_sdpa: PyTorch's error texts") {
  Tensor q = randn({2, 3, 4, 5}), k = randn({2, 3, 6, 5}), v = randn({2, 3, 6, 7});
  check_error(
      [&] {
        scaled_dot_product_attention(q, k, v, ones({4, 6}, TensorOptions().dtype(kBool)), 0.0, true);
      },
      "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True");
  check_error(
      [&] { scaled_dot_product_attention(q, k.to(kDouble), v); },
      "Expected query, key, and value to have the same dtype, but got query.dtype: float key.dtype: double "
      "and value.dtype: float instead.");
  check_error(
      [&] { scaled_dot_product_attention(randn({5}), randn({5}), randn({5})); },
      "Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: 1 key.dim: 1 and "
      "value.dim: 1 instead.");
  check_error([&] { scaled_dot_product_attention(q.to(kLong), k.to(kLong), v.to(kLong)); },
              "expected scalar type Float but found Long");
  check_error(
      [&] {
        scaled_dot_product_attention(q, randn({2, 3, 6, 4}), v);
      },
      "Expected size for first two dimensions of batch2 tensor to be: [6, 5] but got: [6, 4].");
  check_error(
      [&] {
        scaled_dot_product_attention(q, k, randn({2, 3, 5, 7}));
      },
      "Expected size for first two dimensions of batch2 tensor to be: [6, 6] but got: [6, 5].");
  check_error(
      [&] {
        scaled_dot_product_attention(randn({4, 5}), randn({6, 4}), randn({6, 7}));
      },
      "mat1 and mat2 shapes cannot be multiplied (4x5 and 4x6)");
  check_error(
      [&] {
        scaled_dot_product_attention(q, randn({3, 3, 6, 5}), randn({3, 3, 6, 7}));
      },
      "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0");
  check_error(
      [&] {
        scaled_dot_product_attention(q, k, v, ones({4, 5}, TensorOptions().dtype(kBool)));
      },
      "The size of tensor a (6) must match the size of tensor b (5) at non-singleton dimension 3");
  check_error(
      [&] {
        scaled_dot_product_attention(q, k, v, zeros({1, 1, 1, 4, 6}));
      },
      "output with shape [2, 3, 4, 6] doesn't match the broadcast shape [1, 2, 3, 4, 6]");
  check_error(
      [&] {
        scaled_dot_product_attention(q, k, v, zeros({4, 6}, kDouble));
      },
      "Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: double "
      "and  query.dtype: float instead.");
  check_error(
      [&] {
        scaled_dot_product_attention(q, k, v, zeros({4, 6}, kLong));
      },
      "but got attn_mask.dtype: long int and  query.dtype: float instead.");
  check_error(
      [&] {
        scaled_dot_product_attention(randn({2, 5, 4, 5}), k, randn({2, 3, 6, 7}), {}, 0.0, false, {}, true);
      },
      "Number of heads in key and value must divide the number of heads in ");
  check_error(
      [&] {
        scaled_dot_product_attention(randn({2, 6, 4, 5}), k, v);
      },
      "The size of tensor a (6) must match the size of tensor b (3) at non-singleton dimension 1");
}
