// SGD's fused CPU pass for dense float and double parameters: sgd_element
// (core/ops/optim_math.h, the formula the CUDA kernel runs too) over the parameter and its
// momentum buffer in one sweep, eight or four lanes at a time in AVX2 registers. Apart from
// optim/sgd.cpp (the optimizer, which decides when the pass applies), as DESIGN puts kernels,
// and SIMD, in core/cpu/.
#include "ember/core/cpu/sgd.h"

#include "ember/core/cpu/optim_avx2.h"
#include "ember/core/tensor_iter.h"

namespace ember::cpu {
namespace {

/// sgd_element over elements [b, e), AVX2 registers first, then scalars.
template <bool Momentum, class T>
void sgd_range(T* p, const T* g, T* buf, bool first, int64_t b, int64_t e, const SgdScalars<T>& k) {
  int64_t i = b;
#if defined(__AVX2__)
  for (; i + kAvx2Lanes<T> <= e; i += kAvx2Lanes<T>) {
    auto pv = vload(p + i);
    auto bv = Momentum && !first ? vload(buf + i) : pv;  // a new buffer holds nothing yet
    sgd_element<Momentum>(pv, vload(g + i), bv, first, k, Avx2Ops{});
    vstore(p + i, pv);
    if constexpr (Momentum) vstore(buf + i, bv);
  }
#endif
  for (; i < e; ++i) {
    T pi = p[i], bi = Momentum && !first ? buf[i] : T(0);
    sgd_element<Momentum>(pi, g[i], bi, first, k, RoundedOps{});
    p[i] = pi;
    if constexpr (Momentum) buf[i] = bi;
  }
}

}  // namespace

template <class T>
void sgd_fused(T* p, const T* g, T* buf, bool first, int64_t n, const SgdScalars<T>& k) {
  parallel_for(n, kGrainSize, [=, &k](int64_t b, int64_t e) {
    if (buf)
      sgd_range<true>(p, g, buf, first, b, e, k);
    else
      sgd_range<false>(p, g, buf, first, b, e, k);
  });
}

template void sgd_fused<float>(float*, const float*, float*, bool, int64_t, const SgdScalars<float>&);
template void sgd_fused<double>(double*, const double*, double*, bool, int64_t, const SgdScalars<double>&);

}  // namespace ember::cpu
