// gpu_map: the elementwise launch machinery every CUDA elementwise kernel uses (internal to
// cuda/, included by .cu files only). The CUDA twin of core/cpu/loops.h's cpu_map:
//
//   gpu_map<float, float, float>(iter, [] __device__ (float a, float b) { return a + b; });
//
// computes out[i] = f(in0[i], in1[i]) over a TensorIter (broadcast and coalesced by core) whose
// operands have exactly these ember element types. Half and BFloat16 are loaded as CUDA's
// __half / __nv_bfloat16 and handed to f as float (opmath_t, as on the CPU); f's result is
// converted to Out with round-to-nearest-even, so CPU and CUDA give the same bits for the same
// float math.
//
// Three launch shapes, picked per call:
//   dense      every operand contiguous and 16-byte aligned: each thread loads kVec elements
//              of every operand as one vector (LDG.128 for float), the bandwidth-bound case;
//   1-d        one coalesced dimension with any byte strides (0 = a broadcast scalar);
//   n-d        an offset calculator turns the linear index into per-operand byte offsets,
//              in 32-bit arithmetic when every offset fits (64-bit division is slow on GPUs).
#pragma once

#include <cuda/std/tuple>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <type_traits>
#include <utility>

#include "ember/core/tensor_iter.h"
#include "ember/cuda/runtime/cuda_check.h"

namespace ember::cuda {

// ---- element types on the device ---------------------------------------------------------------

/// The CUDA type stored for an ember element type (same size and bits).
template <class T> struct DeviceType { using type = T; };
template <> struct DeviceType<Half> { using type = __half; };
template <> struct DeviceType<BFloat16> { using type = __nv_bfloat16; };
template <class T> using device_t = typename DeviceType<T>::type;

/// Reads one stored element as the type kernels compute in (float for the 16-bit floats).
template <class T>
__device__ __forceinline__ opmath_t<T> load_opmath(const void* p) {
  if constexpr (std::is_same_v<T, Half>) return __half2float(*static_cast<const __half*>(p));
  else if constexpr (std::is_same_v<T, BFloat16>) return __bfloat162float(*static_cast<const __nv_bfloat16*>(p));
  else return *static_cast<const T*>(p);
}

/// Converts a computed value to the stored type of T, as static_cast<T> does on the CPU.
template <class T, class V>
__device__ __forceinline__ device_t<T> to_stored(V v) {
  if constexpr (std::is_same_v<T, Half>) return __float2half_rn(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, BFloat16>) return __float2bfloat16_rn(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, bool>) return static_cast<bool>(v);
  else return static_cast<T>(v);
}

template <class T>
__device__ __forceinline__ void store_opmath(void* p, opmath_t<T> v) {
  *static_cast<device_t<T>*>(p) = to_stored<T>(v);
}

// ---- launch configuration --------------------------------------------------------------------

constexpr int kThreads = 256;
constexpr int kVec = 4;  // elements per thread and vector load on the dense path

/// Blocks for `work` items of kThreads each; the kernels loop (grid-stride) past the cap.
inline unsigned blocks_for(int64_t work) {
  int64_t b = (work + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::clamp<int64_t>(b, 1, int64_t{1} << 20));
}

// ---- the n-d offset calculator -------------------------------------------------------------------

constexpr int kMaxDims = 25;  // as PyTorch's MAX_DIMS: tensors have at most 25 coalesced dims

/// Linear index -> byte offset of each of N operands, for a coalesced shape (innermost first).
template <int N, class Index>
struct OffsetCalc {
  int ndim = 0;
  Index sizes[kMaxDims];
  Index strides[kMaxDims][N];

  __device__ __forceinline__ void get(Index linear, Index (&off)[N]) const {
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = 0;
    for (int d = 0; d < ndim; ++d) {
      Index q = linear / sizes[d];
      Index r = linear - q * sizes[d];
      linear = q;
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] += r * strides[d][k];
    }
  }
};

template <int N, class Index>
OffsetCalc<N, Index> make_offset_calc(const TensorIter& iter) {
  OffsetCalc<N, Index> c;
  IntArrayRef shape = iter.shape();
  c.ndim = static_cast<int>(shape.size());
  for (int d = 0; d < c.ndim; ++d) {
    c.sizes[d] = static_cast<Index>(shape[d]);
    for (int k = 0; k < N; ++k) c.strides[d][k] = static_cast<Index>(iter.strides(k)[d]);
  }
  return c;
}

/// Whether every byte offset the iterator can produce fits in 32-bit signed arithmetic.
inline bool fits_in_int32(const TensorIter& iter) {
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  if (iter.numel() > kMax) return false;
  for (int k = 0; k < iter.ntensors(); ++k) {
    int64_t reach = 0;
    IntArrayRef st = iter.strides(k);
    for (size_t d = 0; d < st.size(); ++d) reach += (iter.shape()[d] - 1) * std::abs(st[d]);
    if (reach > kMax) return false;
  }
  return true;
}

template <int N>
struct Pointers {
  char* p[N];
};

template <int N>
struct ByteStrides {
  int64_t s[N];
};

// ---- kernels ---------------------------------------------------------------------------------

/// A vector of kVec stored elements, aligned so that it is loaded in one instruction.
template <class T>
struct alignas(sizeof(device_t<T>) * kVec) Vec {
  device_t<T> v[kVec];
};

/// The element types of one map, and what a thread does for one element or one vector of
/// them. (A __global__ template may have only one parameter pack, last; the kernels take
/// this struct instead and the packs live in its device functions.)
template <class Out, class... In>
struct MapSig {
  static constexpr int N = sizeof...(In) + 1;

  /// out[off[0]] = f(in_k[off[k]]...), offsets in bytes from each operand's first element.
  template <class F>
  __device__ __forceinline__ static void apply(const Pointers<N>& ptr, const int64_t* off, const F& f) {
    apply_impl(ptr, off, f, std::index_sequence_for<In...>{});
  }

  /// Elements [v*kVec, v*kVec + kVec) of dense, kVec-aligned operands, with vector loads.
  template <class F>
  __device__ __forceinline__ static void apply_vec(const Pointers<N>& ptr, int64_t v, const F& f) {
    apply_vec_impl(ptr, v, f, std::index_sequence_for<In...>{});
  }

 private:
  template <class F, size_t... I>
  __device__ __forceinline__ static void apply_impl(const Pointers<N>& ptr, const int64_t* off, const F& f,
                                                    std::index_sequence<I...>) {
    store_opmath<Out>(ptr.p[0] + off[0],
                      static_cast<opmath_t<Out>>(f(load_opmath<In>(ptr.p[I + 1] + off[I + 1])...)));
  }

  template <class F, size_t... I>
  __device__ __forceinline__ static void apply_vec_impl(const Pointers<N>& ptr, int64_t v, const F& f,
                                                        std::index_sequence<I...>) {
    ::cuda::std::tuple<Vec<In>...> in{reinterpret_cast<const Vec<In>*>(ptr.p[I + 1])[v]...};
    Vec<Out> out;
#pragma unroll
    for (int j = 0; j < kVec; ++j)
      out.v[j] = to_stored<Out>(static_cast<opmath_t<Out>>(f(load_opmath<In>(&::cuda::std::get<I>(in).v[j])...)));
    reinterpret_cast<Vec<Out>*>(ptr.p[0])[v] = out;
    (void)in;  // unused when the map has no inputs (fill)
  }
};

/// Dense operands: thread t handles elements [t*kVec, t*kVec + kVec) with vector loads; the
/// last n % kVec elements are done one by one. `st` holds the element sizes.
template <class Sig, class F>
__global__ void map_dense_kernel(int64_t n, Pointers<Sig::N> ptr, ByteStrides<Sig::N> st, F f) {
  const int64_t nvec = n / kVec;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int64_t v = t; v < nvec; v += stride) Sig::apply_vec(ptr, v, f);
  for (int64_t i = nvec * kVec + t; i < n; i += stride) {
    int64_t off[Sig::N];
#pragma unroll
    for (int k = 0; k < Sig::N; ++k) off[k] = i * st.s[k];
    Sig::apply(ptr, off, f);
  }
}

/// One coalesced dimension with per-operand byte strides (0 for a broadcast operand).
template <class Sig, class F>
__global__ void map_1d_kernel(int64_t n, Pointers<Sig::N> ptr, ByteStrides<Sig::N> st, F f) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    int64_t off[Sig::N];
#pragma unroll
    for (int k = 0; k < Sig::N; ++k) off[k] = i * st.s[k];
    Sig::apply(ptr, off, f);
  }
}

/// Any shape: the offset calculator maps each linear index to the operands' elements.
/// Note [grid-stride counter width]: the loop counter is 64-bit even when Index (the offset
/// arithmetic, where 64-bit division is slow) is 32-bit. fits_in_int32 only bounds n by
/// INT32_MAX, and i + the grid's stride (up to 2^28 threads) passes it near 2^31 elements:
/// a signed 32-bit counter would wrap negative and index before the tensor.
template <class Sig, class Index, class F>
__global__ void map_nd_kernel(Index n, Pointers<Sig::N> ptr, OffsetCalc<Sig::N, Index> calc, F f) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    Index o[Sig::N];
    calc.get(static_cast<Index>(i), o);
    int64_t off[Sig::N];
#pragma unroll
    for (int k = 0; k < Sig::N; ++k) off[k] = static_cast<int64_t>(o[k]);
    Sig::apply(ptr, off, f);
  }
}

// ---- the entry point ---------------------------------------------------------------------------

/// out = f(inputs...) elementwise over `iter`, whose operands (out first) have exactly the ember
/// element types Out, In... and live on the current CUDA device. f is a __device__ callable
/// taking opmath_t<In>... Runs on the current stream; does not synchronize.
template <class Out, class... In, class F>
void gpu_map(const TensorIter& iter, const F& f) {
  constexpr int N = sizeof...(In) + 1;
  const int64_t n = iter.numel();
  if (n == 0) return;
  EMBER_CHECK(iter.device().is_cuda(), "internal error: gpu_map was called with ", iter.device(), " tensors");
  EMBER_CHECK(iter.ndim() <= kMaxDims, "CUDA kernels support tensors of at most ", kMaxDims,
              " dimensions (after merging contiguous ones), got ", iter.ndim());
  Pointers<N> ptr;
  for (int k = 0; k < N; ++k) ptr.p[k] = iter.data(k);
  constexpr std::array<int64_t, N> elem{static_cast<int64_t>(sizeof(device_t<Out>)),
                                        static_cast<int64_t>(sizeof(device_t<In>))...};
  cudaStream_t stream = current_raw_stream();
  using Sig = MapSig<Out, In...>;

  if (iter.is_1d()) {
    ByteStrides<N> st{};
    for (int k = 0; k < N; ++k) st.s[k] = iter.ndim() == 0 ? 0 : iter.strides(k)[0];
    bool dense = true, aligned = true;
    for (int k = 0; k < N; ++k) {
      dense = dense && st.s[k] == elem[k];
      aligned = aligned && reinterpret_cast<uintptr_t>(ptr.p[k]) % (elem[k] * kVec) == 0;
    }
    if (dense && aligned) {
      map_dense_kernel<Sig><<<blocks_for((n + kVec - 1) / kVec), kThreads, 0, stream>>>(n, ptr, st, f);
    } else {
      map_1d_kernel<Sig><<<blocks_for(n), kThreads, 0, stream>>>(n, ptr, st, f);
    }
  } else if (fits_in_int32(iter)) {
    map_nd_kernel<Sig, int32_t><<<blocks_for(n), kThreads, 0, stream>>>(
        static_cast<int32_t>(n), ptr, make_offset_calc<N, int32_t>(iter), f);
  } else {
    map_nd_kernel<Sig, int64_t><<<blocks_for(n), kThreads, 0, stream>>>(
        n, ptr, make_offset_calc<N, int64_t>(iter), f);
  }
  EMBER_CUDA_CHECK_LAUNCH();
}

}  // namespace ember::cuda
