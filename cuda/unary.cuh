// Shared by the kernel files of cuda/unary.h (internal to cuda/, included by .cu files only):
// the dtype visits that launch one functor per dtype, and the groups cuda::unary dispatches
// to. The maps are split over three files to keep each one's nvcc time near a minute.
#pragma once

#include <type_traits>

#include "ember/cuda/loops.cuh"
#include "ember/cuda/unary.h"

namespace ember::cuda {

/// gpu_map<T, T>(iter, f) for the floating dtype t (the op has rejected the others).
template <class F>
void float_map(const TensorIter& iter, ScalarType t, const F& f) {
  visit_float_dtype(t, "cuda unary map", [&]<typename T>() { gpu_map<T, T>(iter, f); });
}

/// gpu_map<T, T>(iter, f) for every dtype t but bool.
template <class F>
void numeric_map(const TensorIter& iter, ScalarType t, const F& f) {
  visit_dtype(t, [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>)
      ember::detail::throw_error("internal error: a CUDA map of numbers was called with a bool tensor");
    else
      gpu_map<T, T>(iter, f);
  });
}

// The groups of cuda::unary (its entry point, in unary_math.cu, tries them in turn). Each
// runs fn over iter (out and x of dtype t) when fn is one of its maps, else returns false.
bool unary_math_map(UnaryFn fn, const TensorIter& iter, ScalarType t);
bool unary_numeric_map(UnaryFn fn, const TensorIter& iter, ScalarType t, const UnaryArgs& args);
bool activation_map(UnaryFn fn, const TensorIter& iter, ScalarType t, const UnaryArgs& args);

}  // namespace ember::cuda
