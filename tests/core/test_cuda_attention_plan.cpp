// The launch plans of the fused attention kernels (cuda/attention_plan.h) on the CPU: the tile
// and shared-memory layout of every supported head size (within sm_90's opt-in limit, regions
// disjoint), smaller devices' limits, the grid fold of huge batch x heads, the mask's stride
// map, and the kernels' loops (run here exactly as the kernels run them) visiting every visible
// (query, key) pair exactly once with causal tile skipping, and writing every output row once.
// Then the kernels' algorithm itself, emulated in float with the plan's maps and the steps of
// cuda/attention_math.h, against the float64 reference (tests/cuda/attention_ref.h): masks with
// -inf, fully masked rows, causal with L != S, sizes off the tile. No GPU involved.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "cuda/attention_ref.h"
#include "ember/cuda/attention_math.h"
#include "ember/cuda/attention_plan.h"
#include "ember/ember.h"

using namespace ember::cuda;
using ember::test::AttnProblem;
using ember::test::AttnRef;

namespace {

constexpr AttnKernel kKernels[] = {AttnKernel::kForward, AttnKernel::kBackwardDq, AttnKernel::kBackwardDkv};

/// The regions of a layout as (offset, size in floats), the absent ones left out.
std::vector<std::pair<int64_t, int64_t>> regions(const AttnPlan& p) {
  const AttnSmemLayout& s = p.smem;
  const int64_t t = p.tile, qk = t * p.ld_qk, vv = t * p.ld_v, ss = t * p.ld_s;
  std::vector<std::pair<int64_t, int64_t>> r;
  auto add = [&](int64_t off, int64_t n) {
    if (off >= 0) r.push_back({off, n});
  };
  add(s.q, qk), add(s.k, qk), add(s.v, vv), add(s.dout, vv);
  add(s.acc, p.kernel == AttnKernel::kForward ? vv : qk), add(s.acc_v, vv);
  add(s.p, ss), add(s.ds, ss), add(s.row0, t), add(s.row1, t), add(s.row2, t);
  return r;
}

/// The tiles each kernel reads and writes are all present, inside the total, and disjoint.
void check_layout(const AttnPlan& p) {
  const AttnSmemLayout& s = p.smem;
  CHECK(s.q >= 0);
  CHECK(s.k >= 0);
  CHECK(s.v >= 0);
  CHECK(s.acc >= 0);
  CHECK(s.row0 >= 0);
  CHECK(s.row1 >= 0);
  switch (p.kernel) {
    case AttnKernel::kForward:
      CHECK((s.p >= 0 && s.row2 >= 0));
      break;
    case AttnKernel::kBackwardDq:
      CHECK((s.dout >= 0 && s.ds >= 0));
      break;
    case AttnKernel::kBackwardDkv:
      CHECK((s.dout >= 0 && s.acc_v >= 0 && s.p >= 0 && s.ds >= 0));
      break;
  }
  auto r = regions(p);
  int64_t total = 0;
  for (size_t a = 0; a < r.size(); ++a) {
    CHECK(r[a].first + r[a].second <= s.floats);
    total += r[a].second;
    for (size_t b = a + 1; b < r.size(); ++b)
      CHECK((r[a].first + r[a].second <= r[b].first || r[b].first + r[b].second <= r[a].first));
  }
  CHECK(total == s.floats);
  CHECK(p.smem_bytes == s.floats * 4);
}

/// Runs the loops of the kernel of p (cuda/attention.cu) over the grid: how often each
/// visible (bh, i, j) pair is visited, how often an invisible pair inside a visited tile is
/// (those are masked, not counted), and how often each output row is written.
struct Visits {
  std::vector<int> pairs;    // [bh][L][S]: visible pairs visited
  std::vector<int> written;  // forward / dq: [bh][L]; dkv: [bh][S]
};

Visits simulate(const AttnPlan& p) {
  Visits v;
  v.pairs.assign(p.bh * p.L * p.S, 0);
  const bool dkv = p.kernel == AttnKernel::kBackwardDkv;
  v.written.assign(p.bh * (dkv ? p.S : p.L), 0);
  const int64_t t = p.tile;
  for (int64_t z = 0; z < p.grid_z; ++z)
    for (int64_t y = 0; y < p.grid_y; ++y)
      for (int64_t x = 0; x < p.grid_x; ++x) {
        const int64_t bh = p.bh_of(y, z);
        if (bh >= p.bh) continue;
        const int64_t own = p.tile_of(x);
        REQUIRE(own >= 0);
        REQUIRE(own < p.tiles);
        auto visit_tile = [&](int64_t qt, int64_t kt) {
          for (int64_t r = 0; r < t; ++r)
            for (int64_t c = 0; c < t; ++c) {
              const int64_t i = qt * t + r, j = kt * t + c;
              if (p.visible(i, j)) ++v.pairs[(bh * p.L + i) * p.S + j];
            }
        };
        if (!dkv) {
          for (int64_t kt = 0; kt < p.key_tile_end(own); ++kt) visit_tile(own, kt);
          for (int64_t r = 0; r < t; ++r)
            if (own * t + r < p.L) ++v.written[bh * p.L + own * t + r];
        } else {
          for (int64_t qt = p.query_tile_begin(own); qt < p.q_tiles; ++qt) visit_tile(qt, own);
          for (int64_t c = 0; c < t; ++c)
            if (own * t + c < p.S) ++v.written[bh * p.S + own * t + c];
        }
      }
  return v;
}

void check_coverage(AttnKernel kernel, int64_t bh, int64_t L, int64_t S, int64_t E, bool causal) {
  INFO("kernel " << static_cast<int>(kernel) << ", bh " << bh << ", L " << L << ", S " << S << ", E " << E
                 << ", causal " << causal);
  AttnPlan p = plan_attention(kernel, bh, L, S, E, E, causal);
  REQUIRE(p.tile > 0);
  Visits v = simulate(p);
  int bad_pairs = 0, bad_rows = 0;
  for (int64_t b = 0; b < bh; ++b)
    for (int64_t i = 0; i < L; ++i)
      for (int64_t j = 0; j < S; ++j) {
        const int want = (!causal || j <= i) ? 1 : 0;
        if (v.pairs[(b * L + i) * S + j] != want) ++bad_pairs;
      }
  for (int w : v.written)
    if (w != 1) ++bad_rows;
  CHECK(bad_pairs == 0);
  CHECK(bad_rows == 0);
  // Causal skipping is tight: a query tile loops over no key tile that lies wholly above the
  // diagonal, and a key tile over no query tile wholly before it.
  if (causal && kernel != AttnKernel::kBackwardDkv)
    for (int64_t qt = 0; qt < p.q_tiles; ++qt) CHECK(p.key_tile_end(qt) == std::min(p.k_tiles, qt + 1));
  if (causal && kernel == AttnKernel::kBackwardDkv)
    for (int64_t kt = 0; kt < p.k_tiles; ++kt) CHECK(p.query_tile_begin(kt) == std::min(p.q_tiles, kt));
}

// ---- the kernels' algorithm, emulated in float ----------------------------------------------

using namespace ember::cuda::attn_math;

float fscore(const AttnPlan& p, const AttnProblem& pr, const std::vector<float>& sq,
             const std::vector<float>& sk, int64_t bh, int r, int c, int64_t i, int64_t j) {
  if (!p.visible(i, j)) return -INFINITY;
  float s = 0;
  for (int e = 0; e < p.E; ++e) s = std::fma(sq[r * p.ld_qk + e], sk[c * p.ld_qk + e], s);
  s *= static_cast<float>(pr.scale);
  if (!pr.mask.empty()) s += static_cast<float>(pr.mask[(bh * p.L + i) * p.S + j]);
  return s;
}

/// A tile of rows [row0, row0 + t) of a [rows][cols] slice as float with stride ld, zeros past rows.
std::vector<float> tile_rows(const std::vector<double>& src, int64_t base, int64_t cols, int ld, int64_t row0,
                             int64_t rows, int t) {
  std::vector<float> d(static_cast<size_t>(t) * ld, 0.f);
  for (int r = 0; r < t; ++r)
    for (int64_t c = 0; c < cols; ++c)
      if (row0 + r < rows) d[r * ld + c] = static_cast<float>(src[base + (row0 + r) * cols + c]);
  return d;
}

struct Emulated {
  std::vector<float> out, lse, dq, dk, dv;
};

/// The three kernels' loops of cuda/attention.cu on the CPU (one block at a time).
Emulated emulate(const AttnProblem& pr) {
  Emulated em;
  const AttnPlan pf = plan_attention(AttnKernel::kForward, pr.bh, pr.L, pr.S, pr.E, pr.Ev, pr.causal);
  const AttnPlan pq = plan_attention(AttnKernel::kBackwardDq, pr.bh, pr.L, pr.S, pr.E, pr.Ev, pr.causal);
  const AttnPlan pk = plan_attention(AttnKernel::kBackwardDkv, pr.bh, pr.L, pr.S, pr.E, pr.Ev, pr.causal);
  REQUIRE(pf.tile > 0);
  REQUIRE(pq.tile > 0);
  REQUIRE(pk.tile > 0);
  em.out.assign(pr.bh * pr.L * pr.Ev, NAN);
  em.lse.assign(pr.bh * pr.L, NAN);
  // forward
  for (int64_t bh = 0; bh < pr.bh; ++bh)
    for (int64_t x = 0; x < pf.grid_x; ++x) {
      const AttnPlan& p = pf;
      const int t = p.tile;
      const int64_t qt = p.tile_of(x), i0 = qt * t;
      std::vector<float> sq = tile_rows(pr.q, bh * p.L * p.E, p.E, p.ld_qk, i0, p.L, t);
      std::vector<float> so(t * p.ld_v, 0.f), sm(t, -INFINITY), sl(t, 0.f), sp(t * p.ld_s);
      for (int64_t kt = 0; kt < p.key_tile_end(qt); ++kt) {
        const int64_t j0 = kt * t;
        std::vector<float> sk = tile_rows(pr.k, bh * p.S * p.E, p.E, p.ld_qk, j0, p.S, t);
        std::vector<float> sv = tile_rows(pr.v, bh * p.S * p.Ev, p.Ev, p.ld_v, j0, p.S, t);
        for (int r = 0; r < t; ++r)
          for (int c = 0; c < t; ++c) sp[r * p.ld_s + c] = fscore(p, pr, sq, sk, bh, r, c, i0 + r, j0 + c);
        for (int r = 0; r < t; ++r) {
          float mx = -INFINITY;
          for (int c = 0; c < t; ++c) mx = std::fmax(mx, sp[r * p.ld_s + c]);
          const float m_new = new_max(sm[r], mx);
          float sum = 0;
          for (int c = 0; c < t; ++c) sum += (sp[r * p.ld_s + c] = prob_against(sp[r * p.ld_s + c], m_new));
          const float alpha = rescale(sm[r], m_new);
          sl[r] = sl[r] * alpha + sum;
          sm[r] = m_new;
          for (int d = 0; d < p.Ev; ++d) {
            float acc = 0;
            for (int c = 0; c < t; ++c) acc = std::fma(sp[r * p.ld_s + c], sv[c * p.ld_v + d], acc);
            so[r * p.ld_v + d] = so[r * p.ld_v + d] * alpha + acc;
          }
        }
      }
      for (int r = 0; r < t && i0 + r < p.L; ++r) {
        for (int d = 0; d < p.Ev; ++d)
          em.out[(bh * p.L + i0 + r) * p.Ev + d] = finish_out(so[r * p.ld_v + d], sl[r]);
        em.lse[bh * p.L + i0 + r] = finish_lse(sm[r], sl[r]);
      }
    }
  if (pr.dout.empty()) return em;
  // D = rowsum(dout * out), from the emulated out
  std::vector<double> D(pr.bh * pr.L, 0.0), lse(em.lse.begin(), em.lse.end());
  for (int64_t row = 0; row < pr.bh * pr.L; ++row) {
    float s = 0;
    for (int64_t d = 0; d < pr.Ev; ++d)
      s = std::fma(static_cast<float>(pr.dout[row * pr.Ev + d]), em.out[row * pr.Ev + d], s);
    D[row] = s;
  }
  // dS of (r, c) from tiles, as score_grad
  auto dscore = [&](const AttnPlan& p, int64_t bh, const std::vector<float>& sq,
                    const std::vector<float>& sdo, const std::vector<float>& sk, const std::vector<float>& sv,
                    const std::vector<float>& slse, const std::vector<float>& sD, int r, int c, int64_t i,
                    int64_t j, float* P) {
    *P = 0;
    if (!p.visible(i, j)) return 0.f;
    *P = prob_from_lse(fscore(p, pr, sq, sk, bh, r, c, i, j), slse[r]);
    float dp = 0;
    for (int d = 0; d < p.Ev; ++d) dp = std::fma(sdo[r * p.ld_v + d], sv[c * p.ld_v + d], dp);
    return *P * (dp - sD[r]);
  };
  em.dq.assign(pr.bh * pr.L * pr.E, NAN);
  for (int64_t bh = 0; bh < pr.bh; ++bh)
    for (int64_t x = 0; x < pq.grid_x; ++x) {
      const AttnPlan& p = pq;
      const int t = p.tile;
      const int64_t qt = p.tile_of(x), i0 = qt * t;
      std::vector<float> sq = tile_rows(pr.q, bh * p.L * p.E, p.E, p.ld_qk, i0, p.L, t);
      std::vector<float> sdo = tile_rows(pr.dout, bh * p.L * p.Ev, p.Ev, p.ld_v, i0, p.L, t);
      std::vector<float> slse(t, -INFINITY), sD(t, 0.f), sdq(t * p.ld_qk, 0.f);
      for (int r = 0; r < t && i0 + r < p.L; ++r)
        slse[r] = static_cast<float>(lse[bh * p.L + i0 + r]),
        sD[r] = static_cast<float>(D[bh * p.L + i0 + r]);
      for (int64_t kt = 0; kt < p.key_tile_end(qt); ++kt) {
        const int64_t j0 = kt * t;
        std::vector<float> sk = tile_rows(pr.k, bh * p.S * p.E, p.E, p.ld_qk, j0, p.S, t);
        std::vector<float> sv = tile_rows(pr.v, bh * p.S * p.Ev, p.Ev, p.ld_v, j0, p.S, t);
        std::vector<float> sds(t * p.ld_s);
        float P;
        for (int r = 0; r < t; ++r)
          for (int c = 0; c < t; ++c)
            sds[r * p.ld_s + c] = dscore(p, bh, sq, sdo, sk, sv, slse, sD, r, c, i0 + r, j0 + c, &P);
        for (int r = 0; r < t; ++r)
          for (int e = 0; e < p.E; ++e) {
            float acc = 0;
            for (int c = 0; c < t; ++c) acc = std::fma(sds[r * p.ld_s + c], sk[c * p.ld_qk + e], acc);
            sdq[r * p.ld_qk + e] += acc * static_cast<float>(pr.scale);
          }
      }
      for (int r = 0; r < t && i0 + r < p.L; ++r)
        for (int e = 0; e < p.E; ++e) em.dq[(bh * p.L + i0 + r) * p.E + e] = sdq[r * p.ld_qk + e];
    }
  em.dk.assign(pr.bh * pr.S * pr.E, NAN);
  em.dv.assign(pr.bh * pr.S * pr.Ev, NAN);
  for (int64_t bh = 0; bh < pr.bh; ++bh)
    for (int64_t x = 0; x < pk.grid_x; ++x) {
      const AttnPlan& p = pk;
      const int t = p.tile;
      const int64_t kt = p.tile_of(x), j0 = kt * t;
      std::vector<float> sk = tile_rows(pr.k, bh * p.S * p.E, p.E, p.ld_qk, j0, p.S, t);
      std::vector<float> sv = tile_rows(pr.v, bh * p.S * p.Ev, p.Ev, p.ld_v, j0, p.S, t);
      std::vector<float> sdk(t * p.ld_qk, 0.f), sdv(t * p.ld_v, 0.f);
      for (int64_t qt = p.query_tile_begin(kt); qt < p.q_tiles; ++qt) {
        const int64_t i0 = qt * t;
        std::vector<float> sq = tile_rows(pr.q, bh * p.L * p.E, p.E, p.ld_qk, i0, p.L, t);
        std::vector<float> sdo = tile_rows(pr.dout, bh * p.L * p.Ev, p.Ev, p.ld_v, i0, p.L, t);
        std::vector<float> slse(t, -INFINITY), sD(t, 0.f), sp(t * p.ld_s), sds(t * p.ld_s);
        for (int r = 0; r < t && i0 + r < p.L; ++r)
          slse[r] = static_cast<float>(lse[bh * p.L + i0 + r]),
          sD[r] = static_cast<float>(D[bh * p.L + i0 + r]);
        for (int r = 0; r < t; ++r)
          for (int c = 0; c < t; ++c)
            sds[r * p.ld_s + c] =
                dscore(p, bh, sq, sdo, sk, sv, slse, sD, r, c, i0 + r, j0 + c, &sp[r * p.ld_s + c]);
        for (int c = 0; c < t; ++c) {
          for (int d = 0; d < p.Ev; ++d) {
            float acc = 0;
            for (int r = 0; r < t; ++r) acc = std::fma(sp[r * p.ld_s + c], sdo[r * p.ld_v + d], acc);
            sdv[c * p.ld_v + d] += acc;
          }
          for (int e = 0; e < p.E; ++e) {
            float acc = 0;
            for (int r = 0; r < t; ++r) acc = std::fma(sds[r * p.ld_s + c], sq[r * p.ld_qk + e], acc);
            sdk[c * p.ld_qk + e] += acc * static_cast<float>(pr.scale);
          }
        }
      }
      for (int c = 0; c < t && j0 + c < p.S; ++c) {
        for (int e = 0; e < p.E; ++e) em.dk[(bh * p.S + j0 + c) * p.E + e] = sdk[c * p.ld_qk + e];
        for (int d = 0; d < p.Ev; ++d) em.dv[(bh * p.S + j0 + c) * p.Ev + d] = sdv[c * p.ld_v + d];
      }
    }
  return em;
}

std::vector<double> randoms(int64_t n, std::mt19937& g, double lo = -1, double hi = 1) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(n);
  for (double& x : v) x = u(g);
  return v;
}

AttnProblem problem(int64_t bh, int64_t L, int64_t S, int64_t E, int64_t Ev, bool causal, uint32_t seed) {
  std::mt19937 g(seed);
  AttnProblem p;
  p.bh = bh, p.L = L, p.S = S, p.E = E, p.Ev = Ev, p.causal = causal;
  p.scale = 1.0 / std::sqrt(static_cast<double>(E));
  p.q = randoms(bh * L * E, g, -2, 2);
  p.k = randoms(bh * S * E, g, -2, 2);
  p.v = randoms(bh * S * Ev, g);
  p.dout = randoms(bh * L * Ev, g);
  return p;
}

/// |got - want| <= atol + rtol |want|, -inf only where -inf is wanted, no NaN anywhere.
void check_close(const std::vector<float>& got, const std::vector<double>& want, const char* what,
                 double tol = 2e-5) {
  INFO(what);
  REQUIRE(got.size() == want.size());
  int bad = 0;
  for (size_t n = 0; n < got.size(); ++n) {
    const double g = got[n], w = want[n];
    const bool ok = std::isinf(w) ? g == w : (!std::isnan(g) && std::fabs(g - w) <= tol + tol * std::fabs(w));
    if (!ok && bad++ < 5) {
      INFO("element " << n << ": got " << g << ", want " << w);
      CHECK(ok);
    }
  }
  CHECK(bad == 0);
}

void check_emulation(const AttnProblem& pr) {
  INFO("bh " << pr.bh << ", L " << pr.L << ", S " << pr.S << ", E " << pr.E << ", Ev " << pr.Ev << ", causal "
             << pr.causal << ", mask " << !pr.mask.empty());
  Emulated em = emulate(pr);
  AttnRef ref = attn_reference(pr);
  check_close(em.out, ref.out, "out");
  check_close(em.lse, ref.lse, "logsumexp");
  check_close(em.dq, ref.dq, "grad_q");
  check_close(em.dk, ref.dk, "grad_k");
  check_close(em.dv, ref.dv, "grad_v");
}

}  // namespace

TEST_CASE("cuda attention plan: supported head sizes and dtype-free tiles within sm_90's shared memory") {
  CHECK(attn_head_dims_supported(1, 1));
  CHECK(attn_head_dims_supported(256, 256));
  CHECK(attn_head_dims_supported(64, 256));
  CHECK_FALSE(attn_head_dims_supported(0, 64));
  CHECK_FALSE(attn_head_dims_supported(64, 0));
  CHECK_FALSE(attn_head_dims_supported(257, 64));
  CHECK_FALSE(attn_head_dims_supported(64, 257));
  // Hand values: head 64 takes 64-tiles everywhere (2 blocks an SM); head 256's dkv kernel
  // (six [tile][257] float tiles) 16-rows to stay under half of 227 KB.
  CHECK(attn_tile(AttnKernel::kForward, 64, 64, kAttnSm90SmemOptin) == 64);
  CHECK(plan_attention(AttnKernel::kForward, 1, 1, 1, 64, 64, false).smem_bytes ==
        4 * (3 * 64 * 65 + 64 * 65 + 64 * 65 + 3 * 64));
  CHECK(attn_tile(AttnKernel::kBackwardDkv, 256, 256, kAttnSm90SmemOptin) == 16);
  int64_t most = 0;
  for (AttnKernel k : kKernels)
    for (int64_t E = 1; E <= kAttnMaxHeadDim; ++E)
      for (int64_t Ev = 1; Ev <= kAttnMaxHeadDim; Ev += (Ev < 16 ? 1 : 15)) {
        AttnPlan p = plan_attention(k, 2, 100, 70, E, Ev, false);
        INFO("kernel " << static_cast<int>(k) << ", E " << E << ", Ev " << Ev);
        REQUIRE(p.tile > 0);
        CHECK(p.smem_bytes <= kAttnSm90SmemOptin);
        // The rule: no larger candidate fits half the limit (else it would have been taken).
        for (int t : kAttnTileCandidates)
          if (t > p.tile)
            CHECK(attn_plan_detail::bytes_of(attn_plan_detail::layout(k, t, E, Ev)) > kAttnSm90SmemOptin / 2);
        most = std::max(most, p.smem_bytes);
        check_layout(p);
        CHECK(p.ld_qk == E + 1);
        CHECK(p.ld_v == Ev + 1);
        CHECK(p.ld_s == p.tile + 1);
        CHECK(kAttnThreads % 32 == 0);
      }
  CHECK(most > kAttnDefaultSmem);  // the launch must opt in past 48 KB
}

TEST_CASE("cuda attention plan: smaller devices' shared-memory limits") {
  // sm_86 (99 KB): every head size still has a tile; 48 KB without opting in: not head 256.
  const int64_t sm86 = 99 * 1024, plain = 48 * 1024;
  for (int64_t E : {8, 64, 128, 256}) {
    CHECK(attn_head_dims_supported(E, E, sm86));
    for (AttnKernel k : kKernels) CHECK(plan_attention(k, 1, 10, 10, E, E, true, sm86).smem_bytes <= sm86);
  }
  CHECK(attn_head_dims_supported(64, 64, plain));
  CHECK_FALSE(attn_head_dims_supported(256, 256, plain));
  CHECK(plan_attention(AttnKernel::kBackwardDkv, 1, 10, 10, 256, 256, false, plain).tile == 0);
}

TEST_CASE("cuda attention plan: the grid folds batch x heads into y and z") {
  AttnPlan p = plan_attention(AttnKernel::kForward, 65535 * 2 + 5, 1, 1, 64, 64, false);
  REQUIRE(p.tile > 0);
  CHECK(p.grid_y == 65535);
  CHECK(p.grid_z == 3);
  CHECK(p.grid_x == 1);
  std::vector<int> seen(p.bh, 0);
  int padding = 0;
  for (int64_t z = 0; z < p.grid_z; ++z)
    for (int64_t y = 0; y < p.grid_y; ++y) {
      int64_t bh = p.bh_of(y, z);
      if (bh < p.bh)
        ++seen[bh];
      else
        ++padding;
    }
  for (int s : seen) CHECK(s == 1);
  CHECK(padding == 65535 - 5);
  AttnPlan small = plan_attention(AttnKernel::kBackwardDkv, 6, 130, 7, 64, 64, false);
  CHECK(small.grid_y == 6);
  CHECK(small.grid_z == 1);
  CHECK(small.grid_x == 1);  // one key tile of 7 keys
  CHECK(small.tile == 32);   // dkv at head 64: eight [64][65] float tiles pass half of 227 KB
  CHECK(small.q_tiles == 5);
  // Past the hardware: more slices than y x z can hold, or more tiles than x can.
  CHECK(plan_attention(AttnKernel::kForward, 65535LL * 65535 + 1, 1, 1, 64, 64, false).tile == 0);
  CHECK(plan_attention(AttnKernel::kForward, 1, (int64_t{1} << 31) * 64, 1, 64, 64, false).tile == 0);
  CHECK(plan_attention(AttnKernel::kForward, 1, (int64_t{1} << 31) * 32, 1, 64, 64, false).tile > 0);
  // Empty problems launch nothing along x.
  CHECK(plan_attention(AttnKernel::kForward, 3, 0, 5, 64, 64, false).grid_x == 0);
  CHECK(plan_attention(AttnKernel::kBackwardDkv, 3, 5, 0, 64, 64, false).grid_x == 0);
}

TEST_CASE("cuda attention plan: every visible pair once, every row written once, tight causal skipping") {
  for (AttnKernel k : kKernels)
    for (int64_t L : {1, 7, 16, 63, 64, 65, 130})
      for (int64_t S : {1, 7, 16, 64, 65, 130})
        for (bool causal : {false, true})
          for (int64_t E : {8, 256}) check_coverage(k, 2, L, S, E, causal);
  // A key tile wholly past the queries (causal, S > L) is visited by no query tile but its
  // rows are still written (zero gradients).
  AttnPlan p = plan_attention(AttnKernel::kBackwardDkv, 1, 5, 200, 64, 64, true);
  CHECK(p.query_tile_begin(p.k_tiles - 1) == p.q_tiles);
}

TEST_CASE("cuda attention plan: the mask's element through its strides, broadcast and transposed") {
  using namespace ember;
  const int64_t B = 2, H = 3, L = 4, S = 5;
  // [1, H, 1, S] expanded; a transposed [L, S] expanded; a full [B, H, L, S] slice of a larger one.
  Tensor heads = arange(H * S, TensorOptions().dtype(kDouble)).reshape({1, H, 1, S});
  Tensor square = arange(S * L, TensorOptions().dtype(kDouble)).reshape({S, L}).t();
  Tensor full =
      arange(B * H * L * (S + 2), TensorOptions().dtype(kDouble)).reshape({B, H, L, S + 2}).narrow(3, 1, S);
  for (const Tensor& base : {heads, square, full}) {
    Tensor m = base.expand({B, H, L, S});
    AttnMaskStrides ms{H, m.stride(0), m.stride(1), m.stride(2), m.stride(3)};
    const double* data = m.data_ptr<double>();
    Tensor dense = m.contiguous();
    const double* want = dense.data_ptr<double>();
    int bad = 0;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < L; ++i)
          for (int64_t j = 0; j < S; ++j)
            if (data[ms.offset(b * H + h, i, j)] != want[((b * H + h) * L + i) * S + j]) ++bad;
    CHECK(bad == 0);
  }
}

TEST_CASE("cuda attention: the kernels' algorithm, emulated in float, against float64") {
  // Sizes off the tile, L != S both ways, head sizes that change the tile.
  for (bool causal : {false, true}) {
    check_emulation(problem(2, 7, 7, 8, 8, causal, 1));
    check_emulation(problem(1, 65, 130, 64, 64, causal, 2));
    check_emulation(problem(1, 130, 65, 16, 24, causal, 3));
    check_emulation(problem(1, 1, 70, 8, 8, causal, 4));
    check_emulation(problem(1, 70, 1, 8, 8, causal, 5));
    check_emulation(problem(1, 33, 40, 256, 80, causal, 6));
  }
}

TEST_CASE("cuda attention: emulated masks: -inf entries, fully masked rows, masked tiles") {
  const double ninf = -std::numeric_limits<double>::infinity();
  for (bool causal : {false, true}) {
    AttnProblem p = problem(2, 70, 90, 16, 16, causal, 7);
    std::mt19937 g(11);
    p.mask = randoms(p.bh * p.L * p.S, g, -2, 2);
    for (int64_t b = 0; b < p.bh; ++b)
      for (int64_t i = 0; i < p.L; ++i)
        for (int64_t j = 0; j < p.S; ++j) {
          double& m = p.mask[(b * p.L + i) * p.S + j];
          if ((i * 7 + j * 3) % 5 == 0) m = ninf;     // scattered -inf
          if (i == 3 || i == 66) m = ninf;            // rows that see nothing
          if (i >= 20 && i < 30 && j < 64) m = ninf;  // a first key tile masked whole
        }
    check_emulation(p);
    AttnRef ref = attn_reference(p);
    CHECK(std::isinf(ref.lse[3]));  // the reference agrees those rows are empty
  }
  // Causal with more queries than keys: rows past S see all keys; with fewer: keys past L
  // are seen by nobody (zero grad_k, grad_v).
  check_emulation(problem(1, 100, 30, 8, 8, true, 8));
  check_emulation(problem(1, 30, 100, 8, 8, true, 9));
}
