// A float64 reference of scaled-dot-product attention and its backward by plain loops over
// the whole [L, S] score matrix, for the tests of the fused kernels (cuda/attention.cu:
// tests/cuda/test_attention_kernels.cpp; their CPU emulation: tests/core/
// test_cuda_attention_plan.cpp). Independent of ember's ops: vectors in, vectors out.
//
// Shapes (row-major, bh = batch x heads): q [bh][L][E], k [bh][S][E], v [bh][S][Ev],
// mask empty or [bh][L][S] (additive), dout [bh][L][Ev]. Key j is visible to query i unless
// causal and j > i; a row whose every score is -inf gets out 0, lse -inf and zero gradients
// (PyTorch 2.9's math path, _safe_softmax).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace ember::test {

struct AttnProblem {
  int64_t bh = 1, L = 1, S = 1, E = 1, Ev = 1;
  bool causal = false;
  double scale = 1;
  std::vector<double> q, k, v, mask, dout;
};

struct AttnRef {
  std::vector<double> out, lse;  // [bh][L][Ev], [bh][L]
  std::vector<double> dq, dk, dv;
};

/// The scores of row i of slice b (size S; -inf where hidden or masked to -inf).
inline std::vector<double> attn_ref_scores(const AttnProblem& p, int64_t b, int64_t i) {
  std::vector<double> s(p.S);
  for (int64_t j = 0; j < p.S; ++j) {
    if (p.causal && j > i) {
      s[j] = -std::numeric_limits<double>::infinity();
      continue;
    }
    double acc = 0;
    for (int64_t e = 0; e < p.E; ++e) acc += p.q[(b * p.L + i) * p.E + e] * p.k[(b * p.S + j) * p.E + e];
    s[j] = acc * p.scale + (p.mask.empty() ? 0.0 : p.mask[(b * p.L + i) * p.S + j]);
  }
  return s;
}

/// Forward always; the backward too when p.dout is given.
inline AttnRef attn_reference(const AttnProblem& p) {
  const double ninf = -std::numeric_limits<double>::infinity();
  AttnRef r;
  r.out.assign(p.bh * p.L * p.Ev, 0.0);
  r.lse.assign(p.bh * p.L, ninf);
  const bool backward = !p.dout.empty();
  if (backward) {
    r.dq.assign(p.bh * p.L * p.E, 0.0);
    r.dk.assign(p.bh * p.S * p.E, 0.0);
    r.dv.assign(p.bh * p.S * p.Ev, 0.0);
  }
  for (int64_t b = 0; b < p.bh; ++b)
    for (int64_t i = 0; i < p.L; ++i) {
      std::vector<double> s = attn_ref_scores(p, b, i);
      double mx = ninf;
      for (double x : s) mx = std::fmax(mx, x);
      if (mx == ninf) continue;  // sees no key: out 0, lse -inf, no gradient
      double sum = 0;
      for (double x : s) sum += std::exp(x - mx);
      r.lse[b * p.L + i] = mx + std::log(sum);
      std::vector<double> P(p.S);
      for (int64_t j = 0; j < p.S; ++j) P[j] = std::exp(s[j] - mx) / sum;
      for (int64_t j = 0; j < p.S; ++j)
        for (int64_t d = 0; d < p.Ev; ++d)
          r.out[(b * p.L + i) * p.Ev + d] += P[j] * p.v[(b * p.S + j) * p.Ev + d];
      if (!backward) continue;
      const double* go = &p.dout[(b * p.L + i) * p.Ev];
      std::vector<double> dP(p.S, 0.0);
      double D = 0;
      for (int64_t j = 0; j < p.S; ++j) {
        for (int64_t d = 0; d < p.Ev; ++d) dP[j] += go[d] * p.v[(b * p.S + j) * p.Ev + d];
        D += P[j] * dP[j];
      }
      for (int64_t j = 0; j < p.S; ++j) {
        const double ds = P[j] * (dP[j] - D);
        for (int64_t e = 0; e < p.E; ++e) {
          r.dq[(b * p.L + i) * p.E + e] += p.scale * ds * p.k[(b * p.S + j) * p.E + e];
          r.dk[(b * p.S + j) * p.E + e] += p.scale * ds * p.q[(b * p.L + i) * p.E + e];
        }
        for (int64_t d = 0; d < p.Ev; ++d) r.dv[(b * p.S + j) * p.Ev + d] += P[j] * go[d];
      }
    }
  return r;
}

}  // namespace ember::test
