// CUDA parity of fused scaled-dot-product attention (core/ops/attention.cpp -> cuda/attention.h):
// the CUDA fused kernels against the CPU fused kernels (themselves tested against the plain
// composition and PyTorch in tests/core/test_sdpa.cpp, tests/nn/test_attention.cpp), values and
// gradients, for float32/float16/bfloat16, no mask / boolean / additive broadcast masks, causal,
// L != S, odd lengths, several head sizes, fully masked rows, GQA, and MultiheadAttention's SDPA
// path; plus that CUDA really takes the fused path where sdpa_fused_supported says so; and
// dropout inside the kernels against the CPU oracle (tests/sdpa_dropout_ref.h) at the CUDA
// generator's (seed, offset): the very mask, the output and the gradients.
#include "cuda/parity.h"
#include "ember/core/ops/attention.h"
#include "ember/cuda/attention.h"
#include "ember/nn/modules/attention.h"
#include "sdpa_dropout_ref.h"

using namespace ember;
using namespace ember::test;

namespace {

Tol attention_tol(ScalarType t) {
  switch (t) {
    case kHalf:
      return {2e-3, 2e-3};
    case kBFloat16:
      return {1.6e-2, 1.6e-2};
    default:
      return {2e-5, 2e-4};
  }
}

bool fused_on_cuda(int64_t E, int64_t Ev, ScalarType t) {
  return cuda::sdpa_fused_supported(E, Ev, static_cast<int>(t));
}

}  // namespace

TEST_CASE("cuda attention: the fused path's outputs and gradients match the CPU's") {
  const std::vector<std::pair<int64_t, int64_t>> lengths{{1, 1}, {7, 7}, {65, 130}, {130, 65}, {257, 100}};
  for (ScalarType t : {kFloat, kHalf, kBFloat16}) {
    for (int64_t E : {16, 32, 64, 80, 128}) {
      if (!fused_on_cuda(E, E, t)) continue;
      for (auto [L, S] : lengths) {
        INFO(scalar_type_name(t) << " E=" << E << " L=" << L << " S=" << S);
        TensorList in{make_input({2, 3, L, E}, t, -1, 1), make_input({2, 3, S, E}, t, -1, 1),
                      make_input({2, 3, S, E}, t, -1, 1)};
        Tensor bmask = make_input({L, S}, kBool);
        Tensor fmask = make_input({2, 1, L, S}, t, -2, 2);
        for (int variant = 0; variant < 4; ++variant) {
          INFO("variant " << variant);  // none, causal, bool mask, float mask
          check_grad_parity(
              [&](const TensorList& x) {
                Tensor m = variant == 2   ? bmask.to(x[0].device())
                           : variant == 3 ? fmask.to(x[0].device())
                                          : Tensor();
                return ember::detail::sdpa_fused(x[0], x[1], x[2], m, variant == 1);
              },
              in, attention_tol(t));
        }
      }
    }
  }
}

TEST_CASE("cuda attention: logsumexp, fully masked rows, GQA and the path taken") {
  for (ScalarType t : {kFloat, kHalf, kBFloat16}) {
    if (!fused_on_cuda(64, 64, t)) continue;
    INFO(scalar_type_name(t));
    TensorList in{make_input({1, 2, 9, 64}, t, -1, 1), make_input({1, 2, 11, 64}, t, -1, 1),
                  make_input({1, 2, 11, 64}, t, -1, 1)};
    check_parity(
        [](const TensorList& x) {
          auto [o, lse] = _scaled_dot_product_fused_attention(x[0], x[1], x[2], {}, true, 0.125);
          return TensorList{o, lse};
        },
        in, attention_tol(t));
    // Query 3 sees no key: zeros and zero gradients on both devices.
    Tensor mask = make_input({9, 11}, kBool);
    mask.select(0, 3).fill_(false);
    check_grad_parity(
        [&](const TensorList& x) {
          return ember::detail::sdpa_fused(x[0], x[1], x[2], mask.to(x[0].device()));
        },
        in, attention_tol(t));
    // Grouped-query: 4 query heads on 2 key/value heads.
    TensorList gqa{make_input({1, 4, 9, 64}, t, -1, 1), make_input({1, 2, 11, 64}, t, -1, 1),
                   make_input({1, 2, 11, 64}, t, -1, 1)};
    check_grad_parity(
        [](const TensorList& x) {
          return scaled_dot_product_attention(x[0], x[1], x[2], {}, 0.0, false, {}, true);
        },
        gqa, attention_tol(t));
    // The public function takes the fused kernels on CUDA.
    Tensor q = in[0].to(cuda_device()).requires_grad_(true);
    Tensor out = scaled_dot_product_attention(q, in[1].to(cuda_device()), in[2].to(cuda_device()));
    CHECK(out.grad_fn()->name() == "ScaledDotProductFlashAttentionBackward0");
  }
}

TEST_CASE("cuda attention: MultiheadAttention's SDPA path matches the CPU") {
  manual_seed(3);
  nn::MultiheadAttention m(nn::MultiheadAttentionOptions(64, 4).batch_first(true));
  nn::MultiheadAttention mc(nn::MultiheadAttentionOptions(64, 4).batch_first(true));
  mc->load_state_dict(m->state_dict());
  mc->to(cuda_device());
  Tensor x = make_input({2, 33, 64}, kFloat, -1, 1);
  Tensor kpm = make_input({2, 33}, kBool);
  kpm.select(1, 0).fill_(false);  // every row keeps a key
  Tensor a = std::get<0>(m->forward(x, x, x, kpm, false));
  Tensor xc = x.to(cuda_device());
  Tensor b = std::get<0>(mc->forward(xc, xc, xc, kpm.to(cuda_device()), false));
  check_same(b, a, attention_tol(kFloat));
}

TEST_CASE("cuda attention: dropout in the fused kernels equals the CPU oracle at the same seed and offset") {
  // The mask itself: q = 0 gives every key probability 1 / S, v = I makes out[i, j] = Z_ij / S.
  {
    const int64_t BH = 3, L = 70, S = 67;
    manual_seed(31);
    Tensor q = zeros({1, BH, L, 16}, TensorOptions().device(cuda_device()));
    Tensor k = randn({1, BH, S, 16}).to(cuda_device());
    Tensor v = eye(S).expand({1, BH, S, S}).contiguous().to(cuda_device());
    const PhiloxState st = next_philox(cuda_device());
    Tensor keep = (scaled_dot_product_attention(q, k, v, {}, 0.3) * (S * 0.7)).to(Device(kCPU)).to(kDouble);
    Tensor ref = reference_keep_mask({1, BH, L, S}, st, 0.3);
    CHECK((keep - ref).abs().max().item<double>() < 1e-4);
    CHECK(next_philox(cuda_device()).offset == st.offset + (BH * L * S + 3) / 4);
  }
  // Values and gradients against the float64 plain composition with that mask.
  for (ScalarType t : {kFloat, kHalf, kBFloat16}) {
    if (!fused_on_cuda(64, 64, t)) continue;
    const Tol tol = t == kFloat ? Tol{5e-5, 5e-4} : t == kHalf ? Tol{4e-3, 4e-3} : Tol{3e-2, 3e-2};
    for (bool causal : {false, true}) {
      INFO(scalar_type_name(t) << (causal ? " causal" : ""));
      Tensor q = make_input({2, 3, 65, 64}, t, -1, 1), k = make_input({2, 3, 130, 64}, t, -1, 1),
             v = make_input({2, 3, 130, 64}, t, -1, 1), g = make_input({2, 3, 65, 64}, t, -1, 1);
      Tensor qc = q.to(cuda_device()).requires_grad_(true), kc = k.to(cuda_device()).requires_grad_(true),
             vc = v.to(cuda_device()).requires_grad_(true);
      const PhiloxState st = next_philox(cuda_device());
      Tensor out = scaled_dot_product_attention(qc, kc, vc, {}, 0.2, causal);
      CHECK(out.grad_fn()->name() == "ScaledDotProductFlashAttentionBackward0");
      (out * g.to(cuda_device())).sum().backward();
      Tensor qr = q.to(kDouble).requires_grad_(true), kr = k.to(kDouble).requires_grad_(true),
             vr = v.to(kDouble).requires_grad_(true);
      Tensor ref = sdpa_dropout_reference(qr, kr, vr, {}, causal, 0.125, 0.2, st);
      (ref * g.to(kDouble)).sum().backward();
      check_same(out, ref.to(t), tol, "output");
      check_same(qc.grad(), qr.grad().to(t), tol, "grad_q");
      check_same(kc.grad(), kr.grad().to(t), tol, "grad_k");
      check_same(vc.grad(), vr.grad().to(t), tol, "grad_v");
    }
  }
}
