// CPU kernels of batch, layer and group normalization (see the header for the formulas).
// Statistics use shifted sums: sum(x - K) and sum((x - K)^2) with K the first element of the
// channel or row, in double. That is one pass, and unlike plain sum(x^2) - n mean^2 it does
// not cancel catastrophically when the mean is large compared with the spread.
// Each channel or row is reduced by one thread in a fixed order, so results do not depend on
// the thread count. The sums run in SIMD lanes (`omp simd reduction`): the order is fixed by
// the vector width the file is compiled for, never by threads.
#include "ember/core/cpu/normalization.h"

#include <algorithm>
#include <cmath>

#include "ember/core/dtype.h"
#include "ember/core/ops/normalization_math.h"
#include "ember/core/tensor_iter.h"

namespace ember::cpu {
namespace {

template <class T>
double as_double(T v) {
  return static_cast<double>(static_cast<opmath_t<T>>(v));
}

/// Chunk size (in channels or rows of `len` elements) that gives each task ~32K elements.
int64_t grain_for(int64_t len) { return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(len, 1)); }

/// The parameter value at k, or `dflt` when the parameter is absent.
template <class T>
double param(const T* p, int64_t k, double dflt) {
  return p ? as_double(p[k]) : dflt;
}

template <class T>
const T* ptr_or_null(const Tensor& t) {
  return t.defined() ? static_cast<const T*>(t.data_ptr()) : nullptr;
}

/// Shifted sums of n elements at p (stride 1) around K, added to s1 and s2.
template <class T>
void shifted_sums(const T* p, int64_t n, double K, double& s1, double& s2) {
  double a = 0, b = 0;
#pragma omp simd reduction(+ : a, b)
  for (int64_t i = 0; i < n; ++i) {
    double d = as_double(p[i]) - K;
    a += d;
    b += d * d;
  }
  s1 += a;
  s2 += b;
}

/// out[i] = x[i] scale + shift (ScaleShiftFn) for n elements, in T's opmath type.
template <class T>
void scale_shift(const T* x, T* out, int64_t n, const AffineCoefs& k) {
  using M = opmath_t<T>;
  const M sc = static_cast<M>(k.scale), sh = static_cast<M>(k.shift);
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(ScaleShiftFn{}(static_cast<M>(x[i]), sc, sh));
}

/// out[i] = go[i] k1 + x[i] k2 + k3 (AffineGradFn): the input gradient of every normalization,
/// once the per-channel (or per-row) sums are known.
template <class T>
void affine_grad(const T* go, const T* x, T* out, int64_t n, double k1, double k2, double k3) {
  using M = opmath_t<T>;
  const M a = static_cast<M>(k1), b = static_cast<M>(k2), c = static_cast<M>(k3);
#pragma omp simd
  for (int64_t i = 0; i < n; ++i)
    out[i] = static_cast<T>(AffineGradFn{}(static_cast<M>(go[i]), static_cast<M>(x[i]), a, b, c));
}

/// (x - mean) rstd w + b (LayerNormAffineFn) over a row of n elements with a weight and a bias
/// each: a flat loop that vectorizes.
template <class T>
void layer_norm_affine(const T* x, const T* w, const T* b, T* out, int64_t n, double mean, double rstd) {
  using M = opmath_t<T>;
  const M m = static_cast<M>(mean), rs = static_cast<M>(rstd);
#pragma omp simd
  for (int64_t d = 0; d < n; ++d)
    out[d] = static_cast<T>(
        LayerNormAffineFn{}(static_cast<M>(x[d]), m, rs, static_cast<M>(w[d]), static_cast<M>(b[d])));
}

/// sum(go) and sum(go * (x - m)) over n elements, added to sg and sgx.
template <class T>
void grad_sums(const T* go, const T* x, int64_t n, double m, double& sg, double& sgx) {
  double a = 0, b = 0;
#pragma omp simd reduction(+ : a, b)
  for (int64_t i = 0; i < n; ++i) {
    double gv = as_double(go[i]);
    a += gv;
    b += gv * (as_double(x[i]) - m);
  }
  sg += a;
  sgx += b;
}

}  // namespace

// ---- batch norm ---------------------------------------------------------------------------

void batch_norm_stats(const Tensor& x, const ChannelGeom& g, Tensor& mean, Tensor& var) {
  double* mp = mean.data_ptr<double>();
  double* vp = var.data_ptr<double>();
  int64_t count = g.N * g.S;
  visit_float_dtype(x.dtype(), "batch_norm", [&]<typename T>() {
    const T* xp = static_cast<const T*>(x.data_ptr());
    parallel_for(g.C, grain_for(count), [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        double K = count ? as_double(xp[c * g.S]) : 0.0, s1 = 0, s2 = 0;
        for (int64_t n = 0; n < g.N; ++n) shifted_sums(xp + (n * g.C + c) * g.S, g.S, K, s1, s2);
        const NormMoments mo = shifted_moments(K, s1, s2, static_cast<double>(count));
        mp[c] = mo.mean;
        vp[c] = mo.var;
      }
    });
  });
}

void batch_norm_apply(const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w,
                      const Tensor& b, const ChannelGeom& g, Tensor& out) {
  const double* mp = mean.data_ptr<double>();
  const double* rp = rstd.data_ptr<double>();
  visit_float_dtype(x.dtype(), "batch_norm", [&]<typename T>() {
    const T* xp = static_cast<const T*>(x.data_ptr());
    const T *wp = ptr_or_null<T>(w), *bp = ptr_or_null<T>(b);
    T* op = static_cast<T*>(out.data_ptr());
    parallel_for(g.C, grain_for(g.N * g.S), [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        const AffineCoefs k = affine_coefs(param(wp, c, 1.0), param(bp, c, 0.0), mp[c], rp[c]);
        for (int64_t n = 0; n < g.N; ++n) {
          int64_t off = (n * g.C + c) * g.S;
          scale_shift(xp + off, op + off, g.S, k);
        }
      }
    });
  });
}

void batch_norm_backward(const Tensor& go, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                         const Tensor& w, bool batch_stats, const ChannelGeom& g, Tensor& gi, Tensor& gw,
                         Tensor& gb) {
  const double* mp = mean.data_ptr<double>();
  const double* rp = rstd.data_ptr<double>();
  double count = static_cast<double>(g.N * g.S);
  visit_float_dtype(x.dtype(), "batch_norm_backward", [&]<typename T>() {
    const T *xp = static_cast<const T*>(x.data_ptr()), *gp = static_cast<const T*>(go.data_ptr());
    const T* wp = ptr_or_null<T>(w);
    T* gip = gi.defined() ? static_cast<T*>(gi.data_ptr()) : nullptr;
    T* gwp = gw.defined() ? static_cast<T*>(gw.data_ptr()) : nullptr;
    T* gbp = gb.defined() ? static_cast<T*>(gb.data_ptr()) : nullptr;
    parallel_for(g.C, grain_for(g.N * g.S), [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        double sg = 0, sgx = 0, m = mp[c], rs = rp[c];
        for (int64_t n = 0; n < g.N; ++n) {
          int64_t off = (n * g.C + c) * g.S;
          grad_sums(gp + off, xp + off, g.S, m, sg, sgx);
        }
        if (gwp) gwp[c] = static_cast<T>(sgx * rs);
        if (gbp) gbp[c] = static_cast<T>(sg);
        if (!gip) continue;
        // gi = k1 go + k2 x + k3 (normalization_math.h).
        const double k1 = param(wp, c, 1.0) * rs;
        const GradCoefs kc = batch_grad_coefs(k1, rs, m, sg, sgx, count, batch_stats);
        const double k2 = kc.k2, k3 = kc.k3;
        for (int64_t n = 0; n < g.N; ++n) {
          int64_t off = (n * g.C + c) * g.S;
          affine_grad(gp + off, xp + off, gip + off, g.S, k1, k2, k3);
        }
      }
    });
  });
}

// ---- layer norm and group norm (rows) -------------------------------------------------------

void row_norm_stats(const Tensor& x, const RowGeom& g, double eps, Tensor& mean, Tensor& rstd) {
  double* mp = mean.data_ptr<double>();
  double* rp = rstd.data_ptr<double>();
  visit_float_dtype(x.dtype(), "layer_norm", [&]<typename T>() {
    const T* xp = static_cast<const T*>(x.data_ptr());
    parallel_for(g.R, grain_for(g.D), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const T* row = xp + r * g.D;
        double K = g.D ? as_double(row[0]) : 0.0, s1 = 0, s2 = 0;
        shifted_sums(row, g.D, K, s1, s2);
        const NormMoments mo = shifted_moments(K, s1, s2, static_cast<double>(g.D));
        mp[r] = mo.mean;
        rp[r] = norm_rstd(mo.var, eps);
      }
    });
  });
}

void row_norm_forward(const Tensor& x, double eps, const Tensor& w, const Tensor& b, const RowGeom& g, Tensor& mean,
                      Tensor& rstd, Tensor& out) {
  if (g.S != 1 || !w.defined() || !b.defined()) {
    row_norm_stats(x, g, eps, mean, rstd);
    row_norm_apply(x, mean, rstd, w, b, g, out);
    return;
  }
  // Layer norm with weight and bias: each row's statistics, then its outputs, while the row
  // is still in cache (one read of x from memory instead of two). The same arithmetic as
  // row_norm_stats followed by row_norm_apply.
  double* mp = mean.data_ptr<double>();
  double* rp = rstd.data_ptr<double>();
  visit_float_dtype(x.dtype(), "layer_norm", [&]<typename T>() {
    const T* xp = static_cast<const T*>(x.data_ptr());
    const T *wp = static_cast<const T*>(w.data_ptr()), *bp = static_cast<const T*>(b.data_ptr());
    T* op = static_cast<T*>(out.data_ptr());
    parallel_for(g.R, grain_for(g.D), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const T* xr = xp + r * g.D;
        T* orow = op + r * g.D;
        double K = g.D ? as_double(xr[0]) : 0.0, s1 = 0, s2 = 0;
        shifted_sums(xr, g.D, K, s1, s2);
        const NormMoments mo = shifted_moments(K, s1, s2, static_cast<double>(g.D));
        mp[r] = mo.mean;
        rp[r] = norm_rstd(mo.var, eps);
        layer_norm_affine(xr, wp, bp, orow, g.D, mp[r], rp[r]);
      }
    });
  });
}

void row_norm_apply(const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w, const Tensor& b,
                    const RowGeom& g, Tensor& out) {
  const double* mp = mean.data_ptr<double>();
  const double* rp = rstd.data_ptr<double>();
  int64_t P = g.per_row();
  visit_float_dtype(x.dtype(), "layer_norm", [&]<typename T>() {
    const T* xp = static_cast<const T*>(x.data_ptr());
    const T *wp = ptr_or_null<T>(w), *bp = ptr_or_null<T>(b);
    T* op = static_cast<T*>(out.data_ptr());
    parallel_for(g.R, grain_for(g.D), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const T* xr = xp + r * g.D;
        T* orow = op + r * g.D;
        int64_t k0 = (r % g.G) * P;
        if (g.S == 1 && wp && bp) {  // layer norm's usual case
          layer_norm_affine(xr, wp + k0, bp + k0, orow, g.D, mp[r], rp[r]);
          continue;
        }
        for (int64_t cc = 0; cc < P; ++cc) {
          const AffineCoefs k = affine_coefs(param(wp, k0 + cc, 1.0), param(bp, k0 + cc, 0.0), mp[r], rp[r]);
          scale_shift(xr + cc * g.S, orow + cc * g.S, g.S, k);
        }
      }
    });
  });
}

namespace {

/// Input gradient of rows [r0, r1): gi = rs w go + k2 x + k3 with A = sum(go w),
/// B = sum(go w (x - m)) over the row: k2 = -rs^3 B / D, k3 = -rs A / D - k2 m.
template <class T>
void row_input_grad(const T* gp, const T* xp, const T* wp, const double* mp, const double* rp,
                    const RowGeom& g, int64_t r0, int64_t r1, T* gip) {
  int64_t P = g.per_row();
  if (g.S == 1 && g.G == 1) {
    // Layer norm: one parameter per element, so the per-parameter sums are per element and
    // the row's two sums and the outputs are flat loops.
    using M = opmath_t<T>;
    for (int64_t r = r0; r < r1; ++r) {
      const T *gr = gp + r * g.D, *xr = xp + r * g.D;
      T* out = gip + r * g.D;
      double A = 0, B = 0, m = mp[r], rs = rp[r];
#pragma omp simd reduction(+ : A, B)
      for (int64_t d = 0; d < g.D; ++d) {
        double wk = wp ? as_double(wp[d]) : 1.0, gv = as_double(gr[d]);
        A += wk * gv;
        B += wk * (gv * (as_double(xr[d]) - m));
      }
      const GradCoefs kc = row_grad_coefs(rs, m, A, B, static_cast<double>(g.D));
      M b = static_cast<M>(kc.k2), c = static_cast<M>(kc.k3);
#pragma omp simd
      for (int64_t d = 0; d < g.D; ++d) {
        M a = static_cast<M>((wp ? as_double(wp[d]) : 1.0) * rs);
        out[d] = static_cast<T>(AffineGradFn{}(static_cast<M>(gr[d]), static_cast<M>(xr[d]), a, b, c));
      }
    }
    return;
  }
  for (int64_t r = r0; r < r1; ++r) {
    const T *gr = gp + r * g.D, *xr = xp + r * g.D;
    int64_t k0 = (r % g.G) * P;
    double A = 0, B = 0, m = mp[r], rs = rp[r];
    for (int64_t cc = 0; cc < P; ++cc) {
      double sg = 0, sgx = 0;
      grad_sums(gr + cc * g.S, xr + cc * g.S, g.S, m, sg, sgx);
      double wk = param(wp, k0 + cc, 1.0);
      A += wk * sg;
      B += wk * sgx;
    }
    const GradCoefs kc = row_grad_coefs(rs, m, A, B, static_cast<double>(g.D));
    for (int64_t cc = 0; cc < P; ++cc) {
      int64_t off = r * g.D + cc * g.S;
      affine_grad(gp + off, xp + off, gip + off, g.S, param(wp, k0 + cc, 1.0) * rs, kc.k2, kc.k3);
    }
  }
}

/// gw[k] = sum(go xhat), gb[k] = sum(go) over the elements parameter k covers, for k in
/// [k0, k1): rows n * G + k / P, elements (k % P) * S ... + S.
template <class T>
void row_param_grad(const T* gp, const T* xp, const double* mp, const double* rp, const RowGeom& g,
                    int64_t k0, int64_t k1, T* gwp, T* gbp) {
  int64_t P = g.per_row();
  if (g.S == 1 && g.G == 1) {
    // Layer norm: parameter k sums column k over the rows. Blocks of columns walk the rows in
    // order (contiguous row pieces, the same sums in the same order as the loop below).
    constexpr int64_t kBlock = 256;
    double sg[kBlock], sgx[kBlock];
    for (int64_t c0 = k0; c0 < k1; c0 += kBlock) {
      const int64_t c1 = std::min(k1, c0 + kBlock), nc = c1 - c0;
      std::fill(sg, sg + nc, 0.0);
      std::fill(sgx, sgx + nc, 0.0);
      for (int64_t r = 0; r < g.R; ++r) {
        const T *gr = gp + r * g.D + c0, *xr = xp + r * g.D + c0;
        const double m = mp[r], rs = rp[r];
#pragma omp simd
        for (int64_t j = 0; j < nc; ++j) {
          double gv = as_double(gr[j]);
          sg[j] += gv;
          sgx[j] += gv * (as_double(xr[j]) - m) * rs;
        }
      }
      for (int64_t j = 0; j < nc; ++j) {
        if (gwp) gwp[c0 + j] = static_cast<T>(sgx[j]);
        if (gbp) gbp[c0 + j] = static_cast<T>(sg[j]);
      }
    }
    return;
  }
  for (int64_t k = k0; k < k1; ++k) {
    double sg = 0, sgx = 0;
    for (int64_t n = 0; n < g.R / g.G; ++n) {
      int64_t r = n * g.G + k / P, off = r * g.D + (k % P) * g.S;
      double a = 0, b = 0;
      grad_sums(gp + off, xp + off, g.S, mp[r], a, b);
      sg += a;
      sgx += b * rp[r];
    }
    if (gwp) gwp[k] = static_cast<T>(sgx);
    if (gbp) gbp[k] = static_cast<T>(sg);
  }
}

}  // namespace

void row_norm_backward(const Tensor& go, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                       const Tensor& w, const RowGeom& g, Tensor& gi, Tensor& gw, Tensor& gb) {
  const double* mp = mean.data_ptr<double>();
  const double* rp = rstd.data_ptr<double>();
  visit_float_dtype(x.dtype(), "layer_norm_backward", [&]<typename T>() {
    const T *xp = static_cast<const T*>(x.data_ptr()), *gp = static_cast<const T*>(go.data_ptr());
    const T* wp = ptr_or_null<T>(w);
    if (gi.defined()) {
      T* gip = static_cast<T*>(gi.data_ptr());
      parallel_for(g.R, grain_for(g.D),
                   [&](int64_t r0, int64_t r1) { row_input_grad(gp, xp, wp, mp, rp, g, r0, r1, gip); });
    }
    if (gw.defined() || gb.defined()) {
      T* gwp = gw.defined() ? static_cast<T*>(gw.data_ptr()) : nullptr;
      T* gbp = gb.defined() ? static_cast<T*>(gb.data_ptr()) : nullptr;
      int64_t params = g.G * g.per_row();
      parallel_for(params, grain_for(g.R / std::max<int64_t>(g.G, 1) * g.S),
                   [&](int64_t k0, int64_t k1) { row_param_grad(gp, xp, mp, rp, g, k0, k1, gwp, gbp); });
    }
  });
}

}  // namespace ember::cpu
