// cpu_map: the typed elementwise loop every CPU elementwise kernel uses.
//   cpu_map<float, float, float>(iter, [](float a, float b) { return a + b; });
// computes out[i] = f(in0[i], in1[i]) over a TensorIter whose operands have exactly these
// C++ types (callers cast inputs to the compute dtype first). Dense runs get a plain
// indexed loop that the compiler vectorizes; broadcast and strided runs a pointer walk.
#pragma once

#include <algorithm>
#include <array>
#include <tuple>
#include <utility>

#include "ember/core/cpu/vec_math.h"
#include "ember/core/tensor_iter.h"

namespace ember::cpu {

namespace detail {

template <class Out, class... In, class F, size_t... I>
inline void map_run(char** data, const int64_t* strides, int64_t n, const F& f,
                    std::index_sequence<I...>) {
  bool dense = strides[0] == sizeof(Out) && ((strides[I + 1] == sizeof(In)) && ...);
  if (dense) {
    Out* __restrict__ out = reinterpret_cast<Out*>(data[0]);
    std::tuple<const In*...> in{reinterpret_cast<const In*>(data[I + 1])...};
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<Out>(f(std::get<I>(in)[i]...));
    return;
  }
  // Strided or broadcast (stride 0) operands: a pointer walk.
  char* out = data[0];
  [[maybe_unused]] std::array<char*, sizeof...(In)> in{data[I + 1]...};
  for (int64_t i = 0; i < n; ++i) {
    *reinterpret_cast<Out*>(out + i * strides[0]) =
        static_cast<Out>(f(*reinterpret_cast<const In*>(in[I] + i * strides[I + 1])...));
  }
}

/// float32 out = vf(x) over one run, vf mapping vec::f8 -> vec::f8. Every element goes
/// through vf in a full vector (the tail and strided or broadcast runs through a padded
/// buffer), so an element's result does not depend on its position, the run's length or the
/// thread split.
template <class VF>
inline void vec_map_run(char** data, const int64_t* strides, int64_t n, const VF& vf) {
  constexpr int64_t W = vec::kWidth;
  float* out = reinterpret_cast<float*>(data[0]);
  const float* in = reinterpret_cast<const float*>(data[1]);
  int64_t i = 0;
  if (strides[0] == sizeof(float) && strides[1] == sizeof(float)) {
    for (; i + W <= n; i += W) vec::store(out + i, vf(vec::load(in + i)));
    if (i == n) return;
  }
  // Tail of a dense run, or a strided / broadcast run: W elements at a time via a buffer.
  alignas(32) float buf[W];
  for (; i < n; i += W) {
    int64_t m = std::min<int64_t>(W, n - i);
    for (int64_t j = 0; j < m; ++j)
      buf[j] = *reinterpret_cast<const float*>(data[1] + (i + j) * strides[1]);
    for (int64_t j = m; j < W; ++j) buf[j] = 0.0f;
    vec::store(buf, vf(vec::load(buf)));
    for (int64_t j = 0; j < m; ++j) *reinterpret_cast<float*>(data[0] + (i + j) * strides[0]) = buf[j];
  }
}

}  // namespace detail

/// out = f(inputs...) elementwise; Out/In are the exact element types of the operands.
template <class Out, class... In, class F>
void cpu_map(const TensorIter& iter, const F& f, int64_t grain = kGrainSize) {
  iter.for_each(
      [&](char** data, const int64_t* strides, int64_t n) {
        detail::map_run<Out, In...>(data, strides, n, f, std::index_sequence_for<In...>{});
      },
      grain);
}

/// Convenience: out = f(x) with out and x of the same type T (or Out).
template <class Out, class In, class F>
void unary_kernel(const Tensor& x, Tensor& out, const F& f) {
  TensorIter iter(out, {x});
  cpu_map<Out, In>(iter, f);
}

/// float32 out = vf(x) with a SIMD body vf: vec::f8 -> vec::f8 (see detail::vec_map_run).
/// `grain`: elements per thread below which the loop stays serial; transcendental bodies
/// cost more per element than a copy, so they pass a smaller one.
template <class VF>
void unary_vec_kernel(const Tensor& x, Tensor& out, const VF& vf, int64_t grain = kGrainSize) {
  TensorIter iter(out, {x});
  iter.for_each([&](char** data, const int64_t* strides, int64_t n) { detail::vec_map_run(data, strides, n, vf); },
                grain);
}

template <class Out, class A, class B, class F>
void binary_kernel(const Tensor& a, const Tensor& b, Tensor& out, const F& f) {
  // Tiny dense operands (per-op overhead): what the TensorIter would make of them anyway,
  // one dense run on the calling thread, without building it.
  int64_t n = out.numel();
  if (n > 0 && n < kGrainSize && out.is_contiguous() && a.is_contiguous() && b.is_contiguous() &&
      out.device().is_cpu() && a.sizes().equals(out.sizes()) && b.sizes().equals(out.sizes())) {
    char* data[3] = {static_cast<char*>(out.data_ptr()), static_cast<char*>(a.data_ptr()),
                     static_cast<char*>(b.data_ptr())};
    const int64_t strides[3] = {sizeof(Out), sizeof(A), sizeof(B)};
    detail::map_run<Out, A, B>(data, strides, n, f, std::index_sequence_for<A, B>{});
    return;
  }
  TensorIter iter(out, {a, b});
  cpu_map<Out, A, B>(iter, f);
}

}  // namespace ember::cpu
