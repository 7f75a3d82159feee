// Dropout inside the fused scaled-dot-product attention (core/ops/attention.cpp, kernels in
// core/cpu/attention.cpp, mask in core/attention_dropout.h): the fused output and all three
// input gradients against the plain composition with the same mask rebuilt from the call's
// (seed, offset) by a plain loop (tests/sdpa_dropout_ref.h), across dtypes, masks, causal, odd
// lengths, head sizes, batch shapes and GQA; float64 gradcheck at a fixed seed; the mask's
// statistics and PyTorch's p = 0 / p = 1 behaviour; the generator's offsets; and the O(L)
// footprint with dropout on.
#include <cmath>
#include <cstdlib>

#include "ember/autograd/grad_mode.h"
#include "ember/core/allocator.h"
#include "ember/core/ops/attention.h"
#include "ember/core/ops/binary.h"
#include "ember/core/ops/creation.h"
#include "ember/core/tensor_iter.h"
#include "op_check.h"
#include "sdpa_dropout_ref.h"

using namespace ember;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::next_philox;
using ember::test::PhiloxState;
using ember::test::reference_keep_mask;
using ember::test::sdpa_dropout_reference;

namespace {

/// One call's output and input gradients for a fixed upstream gradient.
struct Result {
  Tensor out, gq, gk, gv;
};

template <class F>
Result run(F&& f, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& gout) {
  Tensor q2 = q.detach().requires_grad_(true), k2 = k.detach().requires_grad_(true),
         v2 = v.detach().requires_grad_(true);
  Tensor out = f(q2, k2, v2);
  (out * gout.to(out.dtype())).sum().backward();
  return {out.detach(), q2.grad(), k2.grad(), v2.grad()};
}

void check_all_close(const Tensor& a, const Tensor& b, double atol, double rtol) {
  REQUIRE(a.sizes().equals(b.sizes()));
  Tensor excess = (a.to(kDouble) - b.to(kDouble)).abs() - (b.to(kDouble).abs() * rtol + atol);
  const double worst = excess.numel() ? excess.max().item<double>() : -1.0;
  INFO("worst excess over the tolerance: " << worst);
  CHECK(worst <= 0);
}

bool took_fused_path(const Tensor& out) {
  return out.grad_fn() &&
         out.grad_fn()->name().find("ScaledDotProductFlashAttentionForCpuBackward") != std::string::npos;
}

/// The public function with dropout (the fused path) against the reference composition with
/// the mask rebuilt from the generator state the call drew from: values and gradients.
void check_against_oracle(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, bool causal,
                          double p, bool gqa = false, double atol = 1e-10, double rtol = 1e-8) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  DimVector out_shape(q.sizes());
  out_shape.back() = v.size(-1);
  Tensor g = randn(out_shape, kDouble);
  const PhiloxState st = next_philox(q.device());
  bool fused_path = false;
  Result fused = run(
      [&](auto& a, auto& b, auto& c) {
        Tensor out = scaled_dot_product_attention(a, b, c, mask, p, causal, {}, gqa);
        fused_path = q.dim() != 4 || took_fused_path(out);
        return out;
      },
      q, k, v, g);
  CHECK(fused_path);
  Result ref = run([&](auto& a, auto& b,
                       auto& c) { return sdpa_dropout_reference(a, b, c, mask, causal, scale, p, st, gqa); },
                   q, k, v, g);
  check_all_close(fused.out, ref.out, atol, rtol);
  check_all_close(fused.gq, ref.gq, atol, rtol);
  check_all_close(fused.gk, ref.gk, atol, rtol);
  check_all_close(fused.gv, ref.gv, atol, rtol);
}

/// The keep mask the fused forward applied, read back from its output: with q = 0 every key
/// has probability 1 / S, and v = I (S x S) makes out[i, j] = Z_ij / S, so
/// out * S * (1 - p) is the 0/1 mask. The call draws from next_philox(kCPU).
Tensor fused_keep_mask(int64_t BH, int64_t L, int64_t S, double p) {
  Tensor q = zeros({1, BH, L, 8}), k = zeros({1, BH, S, 8});
  Tensor v = eye(S).expand({1, BH, S, S}).contiguous();
  return (scaled_dot_product_attention(q, k, v, {}, p) * (static_cast<double>(S) * (1 - p))).to(kDouble);
}

}  // namespace

TEST_CASE("test_sdpa_dropout: fused equals the plain composition with the same mask, float64") {
  manual_seed(11);
  const std::vector<std::pair<int64_t, int64_t>> lengths{{1, 1},    {7, 7}, {65, 130},
                                                         {130, 65}, {7, 1}, {3, 67}};
  int shapes = 0;
  for (auto [L, S] : lengths) {
    for (int64_t E : {1, 8, 64, 80}) {
      if (L * S * E > 130 * 65 * 64) continue;  // keep the sweep quick
      const int64_t Ev = E == 8 ? 5 : E;
      Tensor q = randn({2, 2, L, E}, kDouble), k = randn({2, 2, S, E}, kDouble),
             v = randn({2, 2, S, Ev}, kDouble);
      INFO("L=" << L << " S=" << S << " E=" << E);
      // Each variant at a light and a heavy p, alternating with the shape.
      const double p = ++shapes % 2 == 0 ? 0.1 : 0.6, p2 = 0.7 - p;
      INFO("p=" << p << ", " << p2 << " with the masks");
      check_against_oracle(q, k, v, {}, false, p);
      check_against_oracle(q, k, v, {}, true, p2);  // key 0 is visible to every query
      Tensor bmask = rand({L, S}) > 0.3;
      bmask.select(1, 0).fill_(true);  // no query without a key
      check_against_oracle(q, k, v, bmask, false, p);
      check_against_oracle(q, k, v, randn({2, 1, L, S}, kDouble), false, p2);
    }
  }
}

TEST_CASE("test_sdpa_dropout: fused equals the oracle in float32, odd batch shapes and GQA") {
  manual_seed(12);
  const double a = 2e-5, r = 2e-4;
  check_against_oracle(randn({2, 3, 65, 64}), randn({2, 3, 130, 64}), randn({2, 3, 130, 64}), {}, true, 0.1,
                       false, a, r);
  check_against_oracle(randn({1, 2, 130, 32}), randn({1, 2, 97, 32}), randn({1, 2, 97, 16}), randn({130, 97}),
                       false, 0.25, false, a, r);
  // 3-d, 2-d (unbatched), 5-d with a broadcast mask, batch broadcast between q and k/v.
  check_against_oracle(randn({3, 9, 8}), randn({3, 11, 8}), randn({3, 11, 4}), {}, false, 0.5, false, a, r);
  check_against_oracle(randn({7, 8}), randn({9, 8}), randn({9, 3}), {}, true, 0.3, false, a, r);
  check_against_oracle(randn({2, 2, 3, 5, 8}), randn({2, 2, 3, 6, 8}), randn({2, 2, 3, 6, 4}),
                       randn({2, 1, 1, 5, 6}), false, 0.2, false, a, r);
  check_against_oracle(randn({2, 1, 5, 8}), randn({1, 3, 6, 8}), randn({1, 3, 6, 8}), {}, false, 0.2, false,
                       a, r);
  // Grouped-query attention: 6 query heads on 3 key heads and 2 value heads.
  check_against_oracle(randn({2, 6, 5, 8}), randn({2, 3, 7, 8}), randn({2, 2, 7, 4}), {}, false, 0.3, true, a,
                       r);
  check_against_oracle(randn({1, 4, 70, 16}), randn({1, 1, 70, 16}), randn({1, 1, 70, 16}), {}, true, 0.3,
                       true, a, r);
}

TEST_CASE("test_sdpa_dropout: gradcheck of the fused op with dropout at a fixed seed, float64") {
  manual_seed(13);
  auto leaf = [](IntArrayRef s) { return randn(s, kDouble).detach().requires_grad_(true); };
  Tensor q = leaf({1, 2, 5, 4}), k = leaf({1, 2, 6, 4}), v = leaf({1, 2, 6, 3});
  Tensor fmask = randn({5, 6}, kDouble);
  // Every evaluation reseeds, so the finite differences see the one mask the backward regenerates.
  for (bool causal : {false, true}) {
    check_grad(
        [&](const TensorList& x) {
          manual_seed(99);
          return scaled_dot_product_attention(x[0], x[1], x[2], {}, 0.4, causal);
        },
        {q, k, v});
  }
  check_grad(
      [&](const TensorList& x) {
        manual_seed(98);
        return scaled_dot_product_attention(x[0], x[1], x[2], fmask, 0.4);
      },
      {q, k, v});
  Tensor kg = leaf({1, 1, 6, 4}), vg = leaf({1, 1, 6, 3});
  check_grad(
      [&](const TensorList& x) {
        manual_seed(97);
        return scaled_dot_product_attention(x[0], x[1], x[2], {}, 0.3, false, 0.7, true);
      },
      {q, kg, vg});
  manual_seed(99);
  CHECK(took_fused_path(scaled_dot_product_attention(q, k, v, {}, 0.4)));
}

TEST_CASE("test_sdpa_dropout: the kept fraction is 1 - p and the mask is the oracle's") {
  manual_seed(14);
  for (double p : {0.1, 0.5, 0.9}) {
    INFO("p=" << p);
    const int64_t BH = 4, L = 300, S = 257;  // 308,400 elements, rows not a multiple of 4
    const PhiloxState st = next_philox(kCPU);
    Tensor keep = fused_keep_mask(BH, L, S, p);
    // Every element is 0 or 1 (to float32 rounding) and the very mask of the plain loop.
    Tensor ref = reference_keep_mask({1, BH, L, S}, st, p);
    check_all_close(keep, ref, 1e-4, 0);
    const double frac = ref.mean().item<double>();
    const double sigma = std::sqrt(p * (1 - p) / static_cast<double>(ref.numel()));
    INFO("kept " << frac << ", expected " << 1 - p << " +- " << sigma);
    CHECK(std::fabs(frac - (1 - p)) < 5 * sigma);
    // Neighbours are independent: P(both kept) of adjacent keys (same Philox block or not).
    Tensor both = (ref.narrow(3, 0, S - 1) * ref.narrow(3, 1, S - 1)).mean();
    CHECK(std::fabs(both.item<double>() - (1 - p) * (1 - p)) < 10 * sigma);
    // The call reserved a Philox block for every four attention elements.
    CHECK(next_philox(kCPU).offset == st.offset + (BH * L * S + 3) / 4);
  }
}

TEST_CASE("test_sdpa_dropout: a word equal to the keep threshold drops its element, one below keeps it") {
  // Element 0 is decided by word 0 of block `offset`: kept iff word < ceil((1 - p) 2^32). With
  // p = 1 - w / 2^32 (exact in double) the threshold is w itself.
  for (int64_t S : {32, 5}) {  // the eight-blocks-at-once path and the one-block path
    INFO("S=" << S);
    manual_seed(21);
    const PhiloxState st = next_philox(kCPU);
    uint32_t w[4];
    philox::block(st.seed, st.offset, w);
    const double two32 = 4294967296.0;
    const double p_drop = 1.0 - w[0] / two32, p_keep = 1.0 - (w[0] + 1.0) / two32;
    CHECK(fused_keep_mask(1, 1, S, p_drop)[0][0][0][0].item<double>() < 0.5);
    manual_seed(21);  // the same block again
    CHECK(fused_keep_mask(1, 1, S, p_keep)[0][0][0][0].item<double>() > 0.5);
  }
}

TEST_CASE("test_sdpa_dropout: p = 0 is no dropout, p = 1 gives zeros, calls differ, manual_seed repeats") {
  manual_seed(15);
  Tensor q = randn({2, 2, 33, 16}), k = randn({2, 2, 40, 16}), v = randn({2, 2, 40, 8});
  Tensor g = randn({2, 2, 33, 8});
  // p = 0: the same bits as the fused op without dropout, and no draw from the generator.
  const uint64_t offset = next_philox(kCPU).offset;
  Result none = run([](auto& a, auto& b, auto& c) { return ember::detail::sdpa_fused(a, b, c); }, q, k, v, g);
  Result zero = run([](auto& a, auto& b, auto& c) { return scaled_dot_product_attention(a, b, c, {}, 0.0); },
                    q, k, v, g);
  CHECK(next_philox(kCPU).offset == offset);
  CHECK(equal(zero.out, none.out));
  CHECK(equal(zero.gq, none.gq));
  CHECK(equal(zero.gk, none.gk));
  CHECK(equal(zero.gv, none.gv));
  // p = 1: every element dropped (PyTorch's dropout gives zeros), zero gradients, no NaN.
  Result all =
      run([](auto& a, auto& b, auto& c) { return scaled_dot_product_attention(a, b, c, {}, 1.0, true); }, q,
          k, v, g);
  CHECK(all.out.eq(0).all().item<bool>());
  CHECK(all.gq.eq(0).all().item<bool>());
  CHECK(all.gk.eq(0).all().item<bool>());
  CHECK(all.gv.eq(0).all().item<bool>());
  // Two calls draw different masks; the same seed draws the same one again.
  auto drop = [&](auto& a, auto& b, auto& c) { return scaled_dot_product_attention(a, b, c, {}, 0.3); };
  manual_seed(77);
  Result first = run(drop, q, k, v, g);
  Result second = run(drop, q, k, v, g);
  manual_seed(77);
  Result again = run(drop, q, k, v, g);
  CHECK_FALSE(equal(first.out, second.out));
  CHECK(equal(first.out, again.out));
  CHECK(equal(first.gq, again.gq));
  CHECK(equal(first.gk, again.gk));
  CHECK(equal(first.gv, again.gv));
  // The mask names elements, not threads: one thread draws what two do (a case big enough
  // for the kernels to split over heads and query tiles).
  Tensor qb = randn({1, 8, 256, 64}), kb = randn({1, 8, 256, 64}), vb = randn({1, 8, 256, 64});
  Tensor gb = randn({1, 8, 256, 64});
  const int threads = get_num_threads();
  Result by[2];
  for (int n : {1, 2}) {
    set_num_threads(n);
    manual_seed(78);
    by[n - 1] = run(drop, qb, kb, vb, gb);
  }
  set_num_threads(threads);
  CHECK(equal(by[0].out, by[1].out));
  CHECK(equal(by[0].gq, by[1].gq));
  CHECK(equal(by[0].gk, by[1].gk));
  CHECK(equal(by[0].gv, by[1].gv));
  // p > 1 is refused with dropout's text (as the plain path's dropout does).
  check_error([&] { scaled_dot_product_attention(q, k, v, {}, 1.5); },
              "dropout probability has to be between 0 and 1, but got 1.5");
}

TEST_CASE("test_sdpa_dropout: the fused path with dropout never holds an [L, S] matrix") {
  if (std::getenv("EMBER_NO_ALLOCATOR_CACHE") != nullptr) {
    MESSAGE("skipped: EMBER_NO_ALLOCATOR_CACHE is set (no cache to measure the footprint with)");
    return;
  }
  const int64_t L = 1024, E = 64;
  Tensor q = randn({1, 1, L, E}).requires_grad_(true), k = randn({1, 1, L, E}).requires_grad_(true),
         v = randn({1, 1, L, E}).requires_grad_(true);
  Tensor g = randn({1, 1, L, E});
  // Forward and backward: the backward regenerates the mask rather than reading a saved one.
  auto footprint = [&](auto&& f) {
    cpu_empty_cache();
    const size_t before = cpu_allocator_stats().allocated_bytes;
    {
      Tensor out = f();
      autograd::grad({out}, {q, k, v}, {g});
    }
    CpuAllocatorStats s = cpu_allocator_stats();
    return s.allocated_bytes + s.cached_bytes - before;  // the cache keeps the high-water blocks
  };
  const size_t fused = footprint([&] { return scaled_dot_product_attention(q, k, v, {}, 0.1, true); });
  const size_t math = footprint([&] { return ember::detail::sdpa_math(q, k, v, {}, 0.1, true); });
  const size_t matrix = L * L * sizeof(float);
  INFO("fused " << fused << " bytes, plain " << math << " bytes");
  CHECK(fused < matrix / 2);
  CHECK(math >= matrix);
}
