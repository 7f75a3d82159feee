// Adam's fused CPU pass for dense float and double parameters: adam_element
// (core/ops/optim_math.h, the formula the CUDA kernels run too) over the parameter and its
// states in one sweep, eight or four lanes at a time in AVX2 registers. Apart from
// optim/adam.cpp (the optimizer, which decides when the pass applies) as DESIGN puts
// kernels, and SIMD, in core/cpu/.
#include "ember/core/cpu/adam.h"

#include "ember/core/cpu/optim_avx2.h"
#include "ember/core/tensor_iter.h"

namespace ember::cpu {
namespace {

template <bool Decay, bool L2, bool Ams, class T>
void adam_range(T* p, const T* g, T* m, T* v, T* vmax, int64_t b, int64_t e, const AdamScalars<T>& k) {
  int64_t i = b;
#if defined(__AVX2__)
  for (; i + kAvx2Lanes<T> <= e; i += kAvx2Lanes<T>) {
    auto pv = vload(p + i), mv = vload(m + i), vv = vload(v + i);
    auto xv = Ams ? vload(vmax + i) : mv;
    adam_element<Decay, L2, Ams>(pv, vload(g + i), mv, vv, xv, k, Avx2Ops{});
    vstore(p + i, pv);
    vstore(m + i, mv);
    vstore(v + i, vv);
    if constexpr (Ams) vstore(vmax + i, xv);
  }
#endif
  for (; i < e; ++i) {
    T pi = p[i], mi = m[i], vi = v[i], xi = Ams ? vmax[i] : T(0);
    adam_element<Decay, L2, Ams>(pi, g[i], mi, vi, xi, k, RoundedOps{});
    p[i] = pi;
    m[i] = mi;
    v[i] = vi;
    if constexpr (Ams) vmax[i] = xi;
  }
}

}  // namespace

/// The fused step over n elements, in parallel chunks.
template <class T>
void adam_fused(T* p, const T* g, T* m, T* v, T* vmax, int64_t n, const AdamScalars<T>& k, bool has_decay,
                bool has_l2) {
  parallel_for(n, kGrainSize, [=, &k](int64_t b, int64_t e) {
    if (vmax) {
      if (has_decay) adam_range<true, false, true>(p, g, m, v, vmax, b, e, k);
      else if (has_l2) adam_range<false, true, true>(p, g, m, v, vmax, b, e, k);
      else adam_range<false, false, true>(p, g, m, v, vmax, b, e, k);
    } else {
      if (has_decay) adam_range<true, false, false>(p, g, m, v, vmax, b, e, k);
      else if (has_l2) adam_range<false, true, false>(p, g, m, v, vmax, b, e, k);
      else adam_range<false, false, false>(p, g, m, v, vmax, b, e, k);
    }
  });
}

template void adam_fused<float>(float*, const float*, float*, float*, float*, int64_t, const AdamScalars<float>&,
                                bool, bool);
template void adam_fused<double>(double*, const double*, double*, double*, double*, int64_t,
                                 const AdamScalars<double>&, bool, bool);

}  // namespace ember::cpu
