// The fused SGD and Adam/AdamW steps on CUDA (cuda/optim.h): one kernel walks a TensorTable
// of many tensors (cuda/multi_tensor.h), each block one chunk of one tensor, each thread the
// chunk's elements at a stride of the block size (coalesced), kIlp of them at a time: all
// their loads are issued before any arithmetic, so several are in flight per thread (the
// step is bound by memory bandwidth). The per-element arithmetic is the CPU's: core/ops/
// optim_math.h's sgd_element and adam_element, which the CPU's fused passes run too. Every
// product, quotient, sum and square root is rounded on its own (the _rn intrinsics, so nvcc
// contracts nothing the CPU does not) and an FMA is used exactly where the CPU has one.
#include <cuda_runtime.h>

#include <initializer_list>
#include <type_traits>

#include "ember/core/ops/optim_math.h"
#include "ember/core/tensor.h"
#include "ember/cuda/runtime/device.h"
#include "ember/cuda/loops.cuh"
#include "ember/cuda/multi_tensor.h"
#include "ember/cuda/optim.h"

namespace ember::cuda {
namespace {

template <class T>
__device__ __forceinline__ opmath_t<T> load_elem(const void* base, int64_t i) {
  return load_opmath<T>(static_cast<const device_t<T>*>(base) + i);
}
template <class T>
__device__ __forceinline__ void store_elem(void* base, int64_t i, opmath_t<T> v) {
  static_cast<device_t<T>*>(base)[i] = to_stored<T>(v);
}

// ---- the launch ----------------------------------------------------------------------------

/// Elements per thread and loop iteration.
constexpr int kIlp = 4;

/// Block b of a launch does chunk_of(table, b). For element i of the tensors in `slot`, the
/// op reads its operands into registers (op.load), updates them (op.update) and writes the
/// results back (op.store); a thread loads kIlp elements, a block apart, before updating and
/// storing any. The table (up to 3.5 KB) is a kernel argument, read from constant memory.
template <class Table, class Op>
__global__ void __launch_bounds__(kMultiTensorThreads) multi_tensor_kernel(Table table, Op op) {
  const ChunkRange r = chunk_of(table, static_cast<int>(blockIdx.x));
  const int64_t stride = static_cast<int64_t>(blockDim.x);
  for (int64_t base = r.begin + threadIdx.x; base < r.end; base += stride * kIlp) {
    typename Op::Regs regs[kIlp];
#pragma unroll
    for (int j = 0; j < kIlp; ++j)
      if (base + j * stride < r.end) op.load(table, r.slot, base + j * stride, regs[j]);
#pragma unroll
    for (int j = 0; j < kIlp; ++j) {
      if (base + j * stride < r.end) {
        op.update(table, r.slot, regs[j]);
        op.store(table, r.slot, base + j * stride, regs[j]);
      }
    }
  }
}

/// Runs `op` over every element of the tensors of `lists` (lists[k][i]: the k-th operand of
/// tensor i), in as few launches as the tables allow. scalar(j, i) is tensor i's j-th
/// per-tensor value.
template <int Depth, int Scalars, class Op, class ScalarFn>
void launch_multi_tensor(const std::vector<Tensor>* const (&lists)[Depth], ScalarFn scalar, const Op& op) {
  using Table = TensorTable<Depth, Scalars>;
  static_assert(sizeof(Table) <= kMultiTensorTableBytes, "the table must fit the kernel-argument space");
  static_assert(sizeof(Table) + sizeof(Op) <= 4096, "CUDA kernel arguments are limited to 4 KB");
  const std::vector<Tensor>& params = *lists[0];
  std::vector<int64_t> numels;
  numels.reserve(params.size());
  for (const Tensor& p : params) numels.push_back(p.numel());
  const std::vector<MultiTensorLaunch> plan =
      plan_multi_tensor(numels, Table::kMaxTensors, Table::kMaxBlocks);
  if (plan.empty()) return;  // every tensor is empty
  DeviceGuard guard(params.front().device());
  cudaStream_t stream = current_raw_stream();
  for (const MultiTensorLaunch& launch : plan) {
    Table table{};
    fill_table(
        launch, [&](int k, size_t i) { return (*lists[k])[i].data_ptr(); },
        [&](size_t i) { return numels[i]; }, scalar, table);
    multi_tensor_kernel<Table, Op>
        <<<static_cast<unsigned>(launch.blocks.size()), kMultiTensorThreads, 0, stream>>>(table, op);
    EMBER_CUDA_CHECK_LAUNCH();
  }
}

// ---- SGD -----------------------------------------------------------------------------------

/// SGD on one element: the CPU's sgd_element (core/ops/optim_math.h) with RoundedOps; table
/// slots hold param, grad (and the momentum buffer), the one per-tensor scalar says whether the
/// buffer starts at this step.
template <class T, bool Momentum>
struct SgdOp {
  using M = opmath_t<T>;
  SgdScalars<M> k;

  struct Regs {
    M p, g, buf;
  };

  /// Whether the tensor in `slot` starts its momentum buffer at this step.
  template <class Table>
  __device__ __forceinline__ static bool first_step(const Table& t, int slot) {
    return t.scalars[0][slot] != 0;
  }

  template <class Table>
  __device__ __forceinline__ void load(const Table& t, int slot, int64_t i, Regs& r) const {
    r.p = load_elem<T>(t.ptrs[0][slot], i);
    r.g = load_elem<T>(t.ptrs[1][slot], i);
    // A new buffer's memory holds nothing yet (it is made with empty_like).
    if constexpr (Momentum) r.buf = first_step(t, slot) ? M(0) : load_elem<T>(t.ptrs[2][slot], i);
  }

  template <class Table>
  __device__ __forceinline__ void update(const Table& t, int slot, Regs& r) const {
    bool first = false;
    if constexpr (Momentum) first = first_step(t, slot);
    sgd_element<Momentum>(r.p, r.g, r.buf, first, k, RoundedOps{});
  }

  template <class Table>
  __device__ __forceinline__ void store(const Table& t, int slot, int64_t i, const Regs& r) const {
    store_elem<T>(t.ptrs[0][slot], i, r.p);
    if constexpr (Momentum) store_elem<T>(t.ptrs[2][slot], i, r.buf);
  }
};

template <class T, bool Momentum>
void sgd_typed(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
               const std::vector<Tensor>& bufs, const std::vector<uint8_t>& first, const SGDStepArgs& a) {
  using M = opmath_t<T>;
  // The scalars as the CPU's tensor ops convert them: each double to the compute type.
  const SgdOp<T, Momentum> op{SgdScalars<M>{static_cast<M>(a.weight_decay), static_cast<M>(a.momentum),
                                            static_cast<M>(1 - a.dampening), static_cast<M>(-a.lr),
                                            a.weight_decay != 0, a.nesterov}};
  if constexpr (Momentum) {
    const std::vector<Tensor>* const lists[3] = {&params, &grads, &bufs};
    launch_multi_tensor<3, 1>(
        lists, [&](int, size_t i) { return first[i] ? 1.0 : 0.0; }, op);
  } else {
    (void)bufs, (void)first;  // no momentum: no buffers
    const std::vector<Tensor>* const lists[2] = {&params, &grads};
    launch_multi_tensor<2, 0>(
        lists, [](int, size_t) { return 0.0; }, op);
  }
}

// ---- Adam / AdamW ----------------------------------------------------------------------------

/// Adam on one element: the CPU's adam_element (core/ops/optim_math.h) with RoundedOps; table
/// slots hold param, grad, exp_avg, exp_avg_sq (and max_exp_avg_sq); the per-tensor scalars
/// are -step_size and bias_correction2_sqrt.
template <class T, bool Ams>
struct AdamOp {
  using M = opmath_t<T>;
  AdamScalars<M> k;  // bc2_sqrt and neg_step_size come from the table, per tensor
  bool has_decay, has_l2;

  struct Regs {
    M p, g, m, v, vmax;
  };

  template <class Table>
  __device__ __forceinline__ void load(const Table& t, int slot, int64_t i, Regs& r) const {
    r.p = load_elem<T>(t.ptrs[0][slot], i);
    r.g = load_elem<T>(t.ptrs[1][slot], i);
    r.m = load_elem<T>(t.ptrs[2][slot], i);
    r.v = load_elem<T>(t.ptrs[3][slot], i);
    if constexpr (Ams) r.vmax = load_elem<T>(t.ptrs[4][slot], i);
  }

  template <class Table>
  __device__ __forceinline__ void update(const Table& t, int slot, Regs& r) const {
    AdamScalars<M> s = k;
    s.neg_step_size = static_cast<M>(t.scalars[0][slot]);
    s.bc2_sqrt = static_cast<M>(t.scalars[1][slot]);
    // Uniform branches (the options are the launch's): one instantiation each, as on the CPU.
    if (has_decay && has_l2) adam_element<true, true, Ams>(r.p, r.g, r.m, r.v, r.vmax, s, RoundedOps{});
    else if (has_decay) adam_element<true, false, Ams>(r.p, r.g, r.m, r.v, r.vmax, s, RoundedOps{});
    else if (has_l2) adam_element<false, true, Ams>(r.p, r.g, r.m, r.v, r.vmax, s, RoundedOps{});
    else adam_element<false, false, Ams>(r.p, r.g, r.m, r.v, r.vmax, s, RoundedOps{});
  }

  template <class Table>
  __device__ __forceinline__ void store(const Table& t, int slot, int64_t i, const Regs& r) const {
    store_elem<T>(t.ptrs[0][slot], i, r.p);
    store_elem<T>(t.ptrs[2][slot], i, r.m);
    store_elem<T>(t.ptrs[3][slot], i, r.v);
    if constexpr (Ams) store_elem<T>(t.ptrs[4][slot], i, r.vmax);
  }
};

template <class T, bool Ams>
void adam_typed(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<double>& step_size,
                const std::vector<double>& bc2_sqrt, const AdamStepArgs& a) {
  using M = opmath_t<T>;
  const AdamScalars<M> k{static_cast<M>(1 - a.lr * a.decoupled_decay),
                         static_cast<M>(a.l2),
                         static_cast<M>(a.beta1),
                         static_cast<M>(1 - a.beta1),
                         static_cast<M>(a.beta2),
                         static_cast<M>(1 - a.beta2),
                         M(0),  // bc2_sqrt: per tensor
                         static_cast<M>(a.eps),
                         M(0)};  // neg_step_size: per tensor
  const AdamOp<T, Ams> op{k, a.decoupled_decay != 0, a.l2 != 0};
  auto scalar = [&](int j, size_t i) { return j == 0 ? -step_size[i] : bc2_sqrt[i]; };
  if constexpr (Ams) {
    const std::vector<Tensor>* const lists[5] = {&params, &grads, &exp_avgs, &exp_avg_sqs, &max_exp_avg_sqs};
    launch_multi_tensor<5, 2>(lists, scalar, op);
  } else {
    const std::vector<Tensor>* const lists[4] = {&params, &grads, &exp_avgs, &exp_avg_sqs};
    launch_multi_tensor<4, 2>(lists, scalar, op);
  }
}

/// Checks what the optimizer promised (cuda/optim.h): lists of equal length, every tensor
/// CUDA, of params' dtype and device, contiguous and of its parameter's size.
void check_lists(const char* what, const std::vector<Tensor>& params,
                 std::initializer_list<const std::vector<Tensor>*> lists) {
  EMBER_CHECK(!params.empty(), what, ": no parameters");
  const Tensor& first = params.front();
  for (const std::vector<Tensor>* list : lists) {
    EMBER_CHECK(list->size() == params.size(), what, ": tensor lists of different lengths");
    for (size_t i = 0; i < params.size(); ++i) {
      const Tensor& t = (*list)[i];
      EMBER_CHECK(t.defined() && t.is_cuda() && t.device() == first.device() && t.dtype() == first.dtype() &&
                      t.is_contiguous() && t.sizes().equals(params[i].sizes()),
                  what, ": tensor ", i,
                  " is not a contiguous CUDA tensor of the parameter's dtype, device and shape");
    }
  }
}

}  // namespace

void sgd_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
              const std::vector<Tensor>& momentum_buffers, const std::vector<uint8_t>& first_step,
              const SGDStepArgs& args) {
  const bool momentum = args.momentum != 0;
  if (momentum) {
    check_lists("sgd_step", params, {&params, &grads, &momentum_buffers});
    EMBER_CHECK(first_step.size() == params.size(), "sgd_step: one first_step flag per parameter");
  } else {
    check_lists("sgd_step", params, {&params, &grads});
  }
  visit_float_dtype(params.front().dtype(), "sgd_step", [&]<typename T>() {
    if (momentum)
      sgd_typed<T, true>(params, grads, momentum_buffers, first_step, args);
    else
      sgd_typed<T, false>(params, grads, momentum_buffers, first_step, args);
  });
}

void adam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
               const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
               const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<double>& step_size,
               const std::vector<double>& bias_correction2_sqrt, const AdamStepArgs& args) {
  if (args.amsgrad)
    check_lists("adam_step", params, {&params, &grads, &exp_avgs, &exp_avg_sqs, &max_exp_avg_sqs});
  else
    check_lists("adam_step", params, {&params, &grads, &exp_avgs, &exp_avg_sqs});
  EMBER_CHECK(step_size.size() == params.size() && bias_correction2_sqrt.size() == params.size(),
              "adam_step: one step size and bias correction per parameter");
  visit_float_dtype(params.front().dtype(), "adam_step", [&]<typename T>() {
    if (args.amsgrad)
      adam_typed<T, true>(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, step_size,
                          bias_correction2_sqrt, args);
    else
      adam_typed<T, false>(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, step_size,
                           bias_correction2_sqrt, args);
  });
}

}  // namespace ember::cuda
