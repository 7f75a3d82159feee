// nll_loss and binary_cross_entropy on CUDA, by the CPU's terms (core/ops/loss_math.h). The
// sums (nll_loss's Sum and Mean, the target check's summed weights) are the two-pass folds of
// cuda/loss_plan.h: a fixed layout, no atomics, reproducible bit for bit.
#include <cuda_runtime.h>

#include <cstring>
#include <type_traits>

#include "ember/core/ops/creation.h"
#include "ember/core/ops/loss.h"
#include "ember/core/ops/loss_math.h"
#include "ember/core/tensor_iter.h"
#include "ember/cuda/runtime/device.h"
#include "ember/cuda/loops.cuh"
#include "ember/cuda/loss.h"
#include "ember/cuda/loss_plan.h"

namespace ember::cuda {

namespace {

__device__ __forceinline__ int64_t thread_index() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t grid_stride() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

// ---- the two-pass fold ---------------------------------------------------------------------------

/// Folds the block's kLossThreads values as a halving tree in shared memory (fixed order);
/// the result is valid in thread 0. Every thread of the block must call it.
template <class Acc, class Combine>
__device__ Acc block_fold(Acc a, const Combine& combine) {
  __shared__ alignas(16) unsigned char raw[kLossThreads * sizeof(Acc)];
  Acc* smem = reinterpret_cast<Acc*>(raw);
  const int t = static_cast<int>(threadIdx.x);
  smem[t] = a;
  __syncthreads();
  for (int h = kLossThreads / 2; h > 0; h /= 2) {
    if (t < h) smem[t] = combine(smem[t], smem[t + h]);
    __syncthreads();
  }
  return smem[0];
}

/// First pass: partials[b] = the fold of terms b*kLossThreads + t + j*gridDim*kLossThreads.
template <class Acc, class Term, class Combine>
__global__ void __launch_bounds__(kLossThreads)
    fold_terms_kernel(int64_t count, Acc init, Term term, Combine combine, Acc* partials) {
  Acc a = init;
  for (int64_t k = thread_index(); k < count; k += grid_stride()) a = combine(a, term(k));
  a = block_fold(a, combine);
  if (threadIdx.x == 0) partials[blockIdx.x] = a;
}

/// Second pass (one block): finish(fold of the partials).
template <class Acc, class Combine, class Finish>
__global__ void __launch_bounds__(kLossThreads)
    fold_partials_kernel(const Acc* partials, int64_t n, Acc init, Combine combine, Finish finish) {
  Acc a = init;
  for (int64_t j = threadIdx.x; j < n; j += kLossThreads) a = combine(a, partials[j]);
  a = block_fold(a, combine);
  if (threadIdx.x == 0) finish(a);
}

/// finish(sum of term(k) for k < count), both passes on the current stream of `device`.
template <class Acc, class Term, class Combine, class Finish>
void fold(int64_t count, Acc init, const Term& term, const Combine& combine, const Finish& finish,
          Device device) {
  const int64_t blocks = loss_blocks(count);
  Tensor scratch =
      empty({blocks * static_cast<int64_t>(sizeof(Acc))}, TensorOptions().dtype(kByte).device(device));
  Acc* partials = static_cast<Acc*>(scratch.data_ptr());
  cudaStream_t stream = current_raw_stream();
  fold_terms_kernel<<<static_cast<unsigned>(blocks), kLossThreads, 0, stream>>>(count, init, term, combine,
                                                                                partials);
  EMBER_CUDA_CHECK_LAUNCH();
  fold_partials_kernel<<<1, kLossThreads, 0, stream>>>(partials, blocks, init, combine, finish);
  EMBER_CUDA_CHECK_LAUNCH();
}

struct AddDouble {
  __device__ double operator()(double a, double b) const { return a + b; }
};

struct CombineStats {
  __device__ NllStats operator()(const NllStats& a, const NllStats& b) const {
    return combine_nll_stats(a, b);
  }
};

// ---- nll_loss -------------------------------------------------------------------------------------

/// The pointers and geometry every nll_loss kernel reads; w is null without class weights.
template <class T>
struct NllArgs {
  const int64_t* target;
  const device_t<T>* w;
  NllShape shape;
  int64_t ignore_index;

  __device__ opmath_t<T> weight(int64_t t) const { return load_opmath<T>(w + t); }
  __device__ opmath_t<T> term(const device_t<T>* x, int64_t k) const {
    return nll_term<opmath_t<T>>(
        k, target[k], shape.c, shape.s, ignore_index, w != nullptr,
        [x](int64_t off) { return load_opmath<T>(x + off); }, [this](int64_t t) { return weight(t); });
  }
};

template <class T>
struct StatsTerm {
  NllArgs<T> a;
  int64_t n_classes;
  __device__ NllStats operator()(int64_t k) const {
    return nll_stats_term(k, a.target[k], n_classes, a.ignore_index, [this](int64_t t) {
      return a.w != nullptr ? static_cast<double>(a.weight(t)) : 1.0;
    });
  }
};

struct WriteStats {
  NllStats* out;
  __device__ void operator()(const NllStats& s) const { *out = s; }
};

template <class T>
struct LossTerm {
  NllArgs<T> a;
  const device_t<T>* x;
  __device__ double operator()(int64_t k) const { return static_cast<double>(a.term(x, k)); }
};

/// out = the sum, / total_weight for Mean (0 / 0 = NaN when every target is ignored).
template <class T>
struct WriteLoss {
  device_t<T>* out;
  bool mean;
  double total_weight;
  __device__ void operator()(double sum) const { *out = to_stored<T>(mean ? sum / total_weight : sum); }
};

template <class T>
__global__ void nll_none_kernel(NllArgs<T> a, const device_t<T>* x, device_t<T>* out, int64_t count) {
  for (int64_t k = thread_index(); k < count; k += grid_stride()) out[k] = to_stored<T>(a.term(x, k));
}

template <class T>
__global__ void nll_backward_kernel(NllArgs<T> a, const device_t<T>* grad, bool per_element,
                                    opmath_t<T> scale, device_t<T>* gx, int64_t count) {
  using M = opmath_t<T>;
  for (int64_t k = thread_index(); k < count; k += grid_stride()) {
    const int64_t t = a.target[k];
    if (t == a.ignore_index) continue;
    const M wk = a.w != nullptr ? a.weight(t) : M(1);
    const M gk = load_opmath<T>(grad + (per_element ? k : 0));
    gx[nll_offset(k, a.shape.c, a.shape.s, t)] = to_stored<T>(nll_grad(wk, gk, scale));
  }
}

template <class T>
NllArgs<T> nll_args(const Tensor& target, const Tensor& weight, NllShape shape, int64_t ignore_index) {
  return NllArgs<T>{target.data_ptr<int64_t>(),
                    weight.defined() ? static_cast<const device_t<T>*>(weight.data_ptr()) : nullptr, shape,
                    ignore_index};
}

void check_dense(const Tensor& t, const char* what) {
  EMBER_CHECK(!t.defined() || (t.is_cuda() && t.is_contiguous()),
              "internal error: the CUDA nll_loss needs a dense ", what);
}

}  // namespace

NllStats nll_target_stats(const Tensor& target, const Tensor& weight, int64_t n_classes,
                          int64_t ignore_index) {
  check_dense(target, "target");
  check_dense(weight, "weight");
  DeviceGuard guard(target.device());
  Tensor result =
      empty({static_cast<int64_t>(sizeof(NllStats))}, TensorOptions().dtype(kByte).device(target.device()));
  auto* out = static_cast<NllStats*>(result.data_ptr());
  const ScalarType dt = weight.defined() ? weight.dtype() : kFloat;
  visit_float_dtype(dt, "nll_loss", [&]<typename T>() {
    StatsTerm<T> term{nll_args<T>(target, weight, NllShape{}, ignore_index), n_classes};
    fold(target.numel(), NllStats{}, term, CombineStats{}, WriteStats{out}, target.device());
  });
  Tensor host = result.to(Device(kCPU));  // waits for the folds
  NllStats stats;
  std::memcpy(&stats, host.data_ptr(), sizeof(NllStats));
  return stats;
}

void nll_loss_forward(const Tensor& x, const Tensor& target, const Tensor& weight, NllShape shape,
                      int64_t reduction, int64_t ignore_index, double total_weight, const Tensor& out) {
  check_dense(x, "input");
  check_dense(target, "target");
  check_dense(weight, "weight");
  check_dense(out, "output");
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device());
  const int64_t count = shape.n * shape.s;
  visit_float_dtype(x.dtype(), "nll_loss", [&]<typename T>() {
    NllArgs<T> a = nll_args<T>(target, weight, shape, ignore_index);
    const auto* xp = static_cast<const device_t<T>*>(x.data_ptr());
    auto* op = static_cast<device_t<T>*>(out.data_ptr());
    if (reduction == Reduction::None) {
      nll_none_kernel<T><<<blocks_for(count), kThreads, 0, current_raw_stream()>>>(a, xp, op, count);
      EMBER_CUDA_CHECK_LAUNCH();
      return;
    }
    fold(count, 0.0, LossTerm<T>{a, xp}, AddDouble{},
         WriteLoss<T>{op, reduction == Reduction::Mean, total_weight}, out.device());
  });
}

void nll_loss_backward(const Tensor& grad, const Tensor& target, const Tensor& weight, NllShape shape,
                       int64_t reduction, int64_t ignore_index, double total_weight,
                       const Tensor& grad_input) {
  check_dense(grad, "gradient");
  check_dense(target, "target");
  check_dense(weight, "weight");
  check_dense(grad_input, "input gradient");
  if (grad_input.numel() == 0) return;
  DeviceGuard guard(grad_input.device());
  cudaStream_t stream = current_raw_stream();
  EMBER_CUDA_CHECK(cudaMemsetAsync(grad_input.data_ptr(), 0, grad_input.nbytes(), stream));
  const int64_t count = shape.n * shape.s;
  if (count == 0) return;
  visit_float_dtype(grad_input.dtype(), "nll_loss_backward", [&]<typename T>() {
    using M = opmath_t<T>;
    const M scale = reduction == Reduction::Mean ? static_cast<M>(1.0 / total_weight) : M(1);
    nll_backward_kernel<T><<<blocks_for(count), kThreads, 0, stream>>>(
        nll_args<T>(target, weight, shape, ignore_index), static_cast<const device_t<T>*>(grad.data_ptr()),
        reduction == Reduction::None, scale, static_cast<device_t<T>*>(grad_input.data_ptr()), count);
    EMBER_CUDA_CHECK_LAUNCH();
  });
}

void binary_cross_entropy(const Tensor& x, const Tensor& t, const Tensor& out) {
  DeviceGuard guard(out.device());
  TensorIter iter(out, {x, t});
  visit_float_dtype(out.dtype(), "binary_cross_entropy",
                    [&]<typename T>() { gpu_map<T, T, T>(iter, BinaryCrossEntropyFn{}); });
}

}  // namespace ember::cuda
