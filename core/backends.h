// ember::backends: the switches PyTorch keeps under torch.backends, with its names and
// defaults. Each is a process-wide flag read when a kernel is chosen, so setting one affects
// the ops that run after it (as in PyTorch):
//
//   ember::backends::cuda::matmul::allow_tf32 = true;  // TF32 tensor cores in float32 GEMM
//   ember::backends::cudnn::benchmark = true;          // time cuDNN's algorithms per shape
//
// libtorch spells the same switches at::globalContext().setAllowTF32CuBLAS(...) and friends;
// ember offers the module-path form only. Plain flags, no CUDA headers: core/ may include this.
#pragma once

#include <atomic>

namespace ember::backends {

/// A boolean switch that reads and assigns like a bool and is safe to flip from any thread.
class Flag {
 public:
  constexpr explicit Flag(bool value) : value_(value) {}
  Flag(const Flag&) = delete;
  Flag& operator=(const Flag&) = delete;
  Flag& operator=(bool value) {
    value_.store(value, std::memory_order_relaxed);
    return *this;
  }
  operator bool() const { return value_.load(std::memory_order_relaxed); }  // NOLINT: reads as a bool

 private:
  std::atomic<bool> value_;
};

namespace cuda::matmul {
/// torch.backends.cuda.matmul.allow_tf32: float32 GEMMs (mm, bmm, addmm, matmul, linear) may
/// round inputs to TF32 on tensor cores. PyTorch's default since 1.12: false.
extern Flag allow_tf32;
}  // namespace cuda::matmul

namespace cudnn {
/// torch.backends.cudnn.enabled: convolutions and RNN/LSTM/GRU layers go through cuDNN
/// (default true; false: convolutions raise, RNN layers run as compositions of ops).
extern Flag enabled;
/// torch.backends.cudnn.benchmark: time every applicable algorithm once per input shape and
/// keep the fastest (default false: cuDNN's heuristics choose).
extern Flag benchmark;
/// torch.backends.cudnn.deterministic: only algorithms that give the same bits every run
/// (default false).
extern Flag deterministic;
/// torch.backends.cudnn.allow_tf32: float32 convolutions and cuDNN RNNs may use TF32 (default true).
extern Flag allow_tf32;
}  // namespace cudnn

}  // namespace ember::backends
