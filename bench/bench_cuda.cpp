// CUDA throughput and allocator benchmarks (built only with CUDA on). Bandwidth-bound:
// elementwise add on 256M float32 elements next to a device-to-device copy of the same size
// (the bandwidth ceiling), sum over 256M elements, softmax and layer_norm over the rows of an
// (8192, 4096) float32 matrix. Compute-bound: GEMM 4096^3 in float32, TF32, bfloat16 and
// float16, and conv2d forward + backward of a ResNet layer (batch 64, 64 -> 64 channels, 3x3,
// 56x56, padding 1). Whole programs: one training step (forward, backward, AdamW) of the
// Fashion-MNIST trainer's CNN at batch 64, in float32 and under float16 autocast with a
// GradScaler (the trainer's --amp fp16). scaled_dot_product_attention forward + backward at
// L = 512 and 2048 (fused kernels and the plain composition, with peak memory). And allocator churn. scripts/gpu_check.sh runs this program and
// scripts/gpu_bench_torch.py times the same workloads in PyTorch beside it (same names).
//
// Timing, two ways. The 256M-element rows end every iteration with ember::cuda::synchronize()
// and report wall time (UseRealTime), so a number is what a caller waiting for the result
// sees, launch and sync included (about 10 us against the ~0.7 ms a 256M-element add takes on
// an H200). The rows added for the GPU check's targets (GEMM, conv, softmax, layer_norm, the
// training step) take less time than that overhead would distort, so they are timed on the
// GPU: each iteration runs the workload `reps` times between two CUDA events and reports the
// mean time of one run (UseManualTime; see time_on_gpu).
// Throughput counts every byte read and written once: add 3 x 4 bytes per element, copy
// 2 x 4, sum 4, softmax and layer_norm 2 x 4 (the input read, the output written). The
// "GB/s" counter is in units of 10^9 bytes per second (the console shows 3900 as "3.9k/s");
// bytes_per_second in the JSON output is the same figure in bytes. "TFLOP/s" counts a GEMM
// as 2 m n k and a convolution's forward, backward-data and backward-filter as 2 N K C R S P Q
// each; "ms" is the time of one training step.
//
// The baseline copy calls cudaMemcpyAsync directly (the one CUDA runtime call outside
// cuda/): it is the ceiling ember's kernels are held against, so it must not go through
// ember. Everything else uses ember's public API only.
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include <ember/core/ops/attention.h>
#include <ember/cuda/runtime/caching_allocator.h>
#include <ember/cuda/runtime/event.h>
#include <ember/ember.h>

namespace {

constexpr int64_t k256M = int64_t{1} << 28;

ember::TensorOptions on_cuda() { return ember::TensorOptions().device(ember::Device(ember::kCUDA, 0)); }

// A benchmark body that may throw (an op not implemented yet, out of memory) reports the error
// in its own row instead of ending the whole program.
template <class Body>
void guarded(benchmark::State& state, Body body) {
  if (!ember::cuda::is_available()) {
    state.SkipWithError("no CUDA device");
    return;
  }
  try {
    body();
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void set_bandwidth(benchmark::State& state, int64_t bytes_per_iteration) {
  const int64_t bytes = state.iterations() * bytes_per_iteration;
  state.SetBytesProcessed(bytes);
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(bytes) * 1e-9, benchmark::Counter::kIsRate);
}

// A wrong result makes the row an error: a fast kernel that computes garbage is no result.
void check_value(benchmark::State& state, const char* what, double got, double want) {
  if (!(std::fabs(got - want) <= 1e-3 * std::fabs(want))) {
    state.SkipWithError((std::string(what) + ": got " + std::to_string(got) + ", expected " +
                         std::to_string(want)).c_str());
  }
}

// c = a + b, allocating c every iteration (as `a + b` does in a program): the kernel plus one
// trip through the caching allocator.
void BM_Add(benchmark::State& state) {
  guarded(state, [&] {
    ember::Tensor a = ember::full({k256M}, 1.25, on_cuda());
    ember::Tensor b = ember::full({k256M}, 2.5, on_cuda());
    ember::Tensor c;
    ember::cuda::synchronize();
    for (auto _ : state) {
      c = ember::add(a, b);
      ember::cuda::synchronize();
    }
    set_bandwidth(state, 3 * 4 * k256M);
    check_value(state, "a + b, last element", c.select(0, k256M - 1).item<double>(), 3.75);
  });
}
BENCHMARK(BM_Add)->Unit(benchmark::kMillisecond)->UseRealTime();

// a += b: the kernel alone, no allocation.
void BM_AddInPlace(benchmark::State& state) {
  guarded(state, [&] {
    ember::Tensor a = ember::full({k256M}, 0.0, on_cuda());
    ember::Tensor b = ember::full({k256M}, 0.5, on_cuda());
    ember::cuda::synchronize();
    int64_t adds = 0;
    for (auto _ : state) {
      a.add_(b);
      ember::cuda::synchronize();
      ++adds;
    }
    set_bandwidth(state, 3 * 4 * k256M);
    check_value(state, "a.add_(b), last element", a.select(0, k256M - 1).item<double>(), 0.5 * static_cast<double>(adds));
  });
}
BENCHMARK(BM_AddInPlace)->Unit(benchmark::kMillisecond)->UseRealTime();

// The ceiling: cudaMemcpyAsync device to device on the default stream, no ember in between.
void BM_CopyCudaMemcpy(benchmark::State& state) {
  guarded(state, [&] {
    const size_t bytes = sizeof(float) * static_cast<size_t>(k256M);
    void* src = nullptr;
    void* dst = nullptr;
    if (cudaMalloc(&src, bytes) != cudaSuccess || cudaMalloc(&dst, bytes) != cudaSuccess) {
      cudaFree(src);
      state.SkipWithError("cudaMalloc failed");
      return;
    }
    cudaMemset(src, 0x3f, bytes);  // 0x3f3f3f3f: about 0.747f, not zeros
    cudaDeviceSynchronize();
    for (auto _ : state) {
      cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, nullptr);
      cudaDeviceSynchronize();
    }
    const cudaError_t err = cudaGetLastError();
    cudaFree(src);
    cudaFree(dst);
    if (err != cudaSuccess) {
      state.SkipWithError(cudaGetErrorString(err));
      return;
    }
    set_bandwidth(state, 2 * 4 * k256M);
  });
}
BENCHMARK(BM_CopyCudaMemcpy)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same copy through ember: dst.copy_(src) between two CUDA tensors.
void BM_CopyEmber(benchmark::State& state) {
  guarded(state, [&] {
    ember::Tensor src = ember::full({k256M}, 0.75, on_cuda());
    ember::Tensor dst = ember::empty({k256M}, on_cuda());
    ember::cuda::synchronize();
    for (auto _ : state) {
      dst.copy_(src);
      ember::cuda::synchronize();
    }
    set_bandwidth(state, 2 * 4 * k256M);
    check_value(state, "copy_, last element", dst.select(0, k256M - 1).item<double>(), 0.75);
  });
}
BENCHMARK(BM_CopyEmber)->Unit(benchmark::kMillisecond)->UseRealTime();

// a.sum() over all 256M elements into one float32 value.
void BM_Sum(benchmark::State& state) {
  guarded(state, [&] {
    ember::Tensor a = ember::full({k256M}, 0.5, on_cuda());
    ember::Tensor s;
    ember::cuda::synchronize();
    for (auto _ : state) {
      s = a.sum();
      ember::cuda::synchronize();
    }
    set_bandwidth(state, 4 * k256M);
    // 0.5 * 2^28 is exact in float32 whatever the summation order (all partial sums are too).
    check_value(state, "sum", s.item<double>(), 0.5 * static_cast<double>(k256M));
  });
}
BENCHMARK(BM_Sum)->Unit(benchmark::kMillisecond)->UseRealTime();

// Allocator churn: each iteration allocates eight tensors of mixed sizes (small-pool and
// large-pool sizes, 512 B to 200 MB) and frees them, as a training step does with its
// activations. Reports time per allocate + free pair, and fails when the allocator called
// cudaMalloc during the timed loop (steady state must be served from the cache).
void BM_AllocatorChurn(benchmark::State& state) {
  guarded(state, [&] {
    const std::vector<int64_t> sizes = {128, 1000, 25'000, 262'144, 655'360, 3'000'000, 16'777'216, 50'000'000};
    auto one_round = [&] {
      std::vector<ember::Tensor> live;
      live.reserve(sizes.size());
      for (int64_t n : sizes) live.push_back(ember::empty({n}, on_cuda()));
      benchmark::DoNotOptimize(live.data());
    };
    one_round();  // warm-up: the cache takes what it needs from cudaMalloc here
    ember::cuda::synchronize();
    const ember::cuda::MemoryStats before = ember::cuda::memory_stats();
    for (auto _ : state) one_round();
    ember::cuda::synchronize();
    const ember::cuda::MemoryStats after = ember::cuda::memory_stats();

    const auto allocations = static_cast<double>(state.iterations() * static_cast<int64_t>(sizes.size()));
    state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(sizes.size()));
    state.counters["ns_per_alloc"] =
        benchmark::Counter(allocations * 1e-9, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    const size_t mallocs = after.num_device_alloc - before.num_device_alloc;
    state.counters["cudaMalloc_calls"] = static_cast<double>(mallocs);
    state.counters["reserved_MB"] = static_cast<double>(after.reserved_bytes) * 1e-6;
    if (mallocs != 0 || after.reserved_bytes != before.reserved_bytes)
      state.SkipWithError(("cudaMalloc on the hot path: " + std::to_string(mallocs) + " calls in steady state, memory_reserved " +
                           std::to_string(before.reserved_bytes) + " -> " + std::to_string(after.reserved_bytes) + " bytes").c_str());
  });
}
BENCHMARK(BM_AllocatorChurn)->Unit(benchmark::kMicrosecond)->UseRealTime();

// ---- timed on the GPU: the GPU check's targets (issue 6) ---------------------------------------

// A row's measured throughput: the workload's runs and the GPU seconds they took in all.
struct GpuTime {
  int64_t runs = 0;
  double seconds = 0;
  double per_run() const { return runs > 0 ? seconds / static_cast<double>(runs) : 0; }
};

// Runs `op` once as a warm-up (cuBLAS's and cuDNN's choices, the allocator's first cudaMallocs),
// then per iteration `reps` times between two CUDA events on the current stream, and reports
// the mean GPU time of one run as the iteration's time (UseManualTime). Back-to-back runs keep
// the GPU busy, so the time is the kernels' and not the host's launch latency (unless the host
// cannot keep up, which is then part of the result, as in a real program).
template <class Op>
GpuTime time_on_gpu(benchmark::State& state, int reps, Op op) {
  op();
  ember::cuda::synchronize();
  ember::cuda::CUDAEvent start(/*enable_timing=*/true), stop(/*enable_timing=*/true);
  GpuTime t;
  for (auto _ : state) {
    start.record();
    for (int i = 0; i < reps; ++i) op();
    stop.record();
    stop.synchronize();
    const double seconds = static_cast<double>(start.elapsed_time(stop)) * 1e-3;
    state.SetIterationTime(seconds / reps);
    t.runs += reps;
    t.seconds += seconds;
  }
  return t;
}

// The rate counters of a GPU-timed row, computed from the GPU time (plain values, so the JSON
// output and the aggregates carry them as they are).
void set_tflops(benchmark::State& state, const GpuTime& t, double flops_per_run) {
  if (t.seconds > 0) state.counters["TFLOP/s"] = flops_per_run / t.per_run() * 1e-12;
}
void set_gpu_bandwidth(benchmark::State& state, const GpuTime& t, double bytes_per_run) {
  if (t.seconds > 0) state.counters["GB/s"] = bytes_per_run / t.per_run() * 1e-9;
}

// |got - want| <= atol, or the row becomes an error.
void check_close(benchmark::State& state, const std::string& what, double got, double want, double atol) {
  if (!(std::fabs(got - want) <= atol))
    state.SkipWithError((what + ": got " + std::to_string(got) + ", expected " + std::to_string(want) + " (within " +
                         std::to_string(atol) + ")").c_str());
}

// Sets ember::backends::cuda::matmul::allow_tf32 for a scope, and puts back what it was.
struct AllowTF32 {
  bool before;
  explicit AllowTF32(bool on) : before(ember::backends::cuda::matmul::allow_tf32) {
    ember::backends::cuda::matmul::allow_tf32 = on;
  }
  ~AllowTF32() { ember::backends::cuda::matmul::allow_tf32 = before; }
  AllowTF32(const AllowTF32&) = delete;
  AllowTF32& operator=(const AllowTF32&) = delete;
};

constexpr int64_t kGemmSize = 4096;

// c = a @ b, all 4096 x 4096, random normal inputs (zeros or constants would let the GPU run
// at a clock real data does not get). Checked: one element against the CPU in float64 from
// the same (rounded) inputs, within the dtype's error for a sum of 4096 terms of size ~1.
void gemm_4096(benchmark::State& state, ember::ScalarType dtype, bool tf32, int reps, double tol) {
  guarded(state, [&] {
    AllowTF32 mode(tf32);
    ember::manual_seed(1);
    const ember::Tensor a = ember::randn({kGemmSize, kGemmSize}, on_cuda()).to(dtype);
    const ember::Tensor b = ember::randn({kGemmSize, kGemmSize}, on_cuda()).to(dtype);
    ember::Tensor c;
    const GpuTime t = time_on_gpu(state, reps, [&] { c = ember::mm(a, b); });
    set_tflops(state, t, 2.0 * kGemmSize * kGemmSize * kGemmSize);
    const double want = ember::dot(a.select(0, 7).cpu().to(ember::kDouble), b.select(1, 9).cpu().to(ember::kDouble))
                            .item<double>();
    check_close(state, "c[7, 9]", c.select(0, 7).select(0, 9).item<double>(), want, tol * 64);  // 64 = sqrt(4096)
  });
}

void BM_GemmFloat32(benchmark::State& state) { gemm_4096(state, ember::kFloat, false, 5, 1e-4); }
void BM_GemmTF32(benchmark::State& state) { gemm_4096(state, ember::kFloat, true, 20, 4e-3); }
void BM_GemmBFloat16(benchmark::State& state) { gemm_4096(state, ember::kBFloat16, false, 20, 2e-2); }
// float16 rounds its inputs to 11 significant bits (bfloat16 to 8): a smaller error bound.
void BM_GemmFloat16(benchmark::State& state) { gemm_4096(state, ember::kFloat16, false, 20, 4e-3); }
BENCHMARK(BM_GemmFloat32)->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK(BM_GemmTF32)->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK(BM_GemmBFloat16)->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK(BM_GemmFloat16)->Unit(benchmark::kMillisecond)->UseManualTime();

// A ResNet layer's convolution: x (64, 64, 56, 56), w (64, 64, 3, 3), stride 1, padding 1, no
// bias, float32 with the default switches (cuDNN may use TF32, as PyTorch's
// torch.backends.cudnn.allow_tf32 default; benchmark mode off). One run is the forward and
// both gradients (autograd::grad, so nothing accumulates into .grad between runs).
void BM_Conv2dResNetForwardBackward(benchmark::State& state) {
  guarded(state, [&] {
    constexpr int64_t n = 64, c = 64, k = 64, h = 56, w = 56, r = 3;
    ember::manual_seed(2);
    const ember::Tensor x = ember::randn({n, c, h, w}, on_cuda()).requires_grad_(true);
    const ember::Tensor weight = (ember::randn({k, c, r, r}, on_cuda()) * 0.05).requires_grad_(true);
    const ember::Tensor grad_out = ember::randn({n, k, h, w}, on_cuda());
    ember::Tensor y;
    ember::TensorList grads;
    const GpuTime t = time_on_gpu(state, 5, [&] {
      y = ember::conv2d(x, weight, {}, 1, 1);
      grads = ember::autograd::grad({y}, {x, weight}, {grad_out});
    });
    set_tflops(state, t, 3.0 * 2.0 * n * k * c * r * r * h * w);
    // One output element by hand: y[3, 5, 10, 20] = sum over c, kh, kw of the 3x3 window times w[5].
    ember::NoGradGuard no_grad;
    const ember::Tensor window = x.detach().select(0, 3).narrow(1, 9, 3).narrow(2, 19, 3).cpu().to(ember::kDouble);
    const double want = (window * weight.detach().select(0, 5).cpu().to(ember::kDouble)).sum().item<double>();
    check_close(state, "y[3, 5, 10, 20]", y.select(0, 3).select(0, 5).select(0, 10).select(0, 20).item<double>(),
                want, 0.05);  // TF32 error on a sum of 576 terms of size ~0.05
    if (grads.size() != 2 || !grads[0].defined() || !grads[1].defined() ||
        grads[0].sizes().vec() != x.sizes().vec() || grads[1].sizes().vec() != weight.sizes().vec())
      state.SkipWithError("conv2d's gradients are missing or misshapen");
  });
}
BENCHMARK(BM_Conv2dResNetForwardBackward)->Unit(benchmark::kMillisecond)->UseManualTime();

constexpr int64_t kRows = 8192, kCols = 4096;

// softmax over the last dim of (8192, 4096) float32: reads and writes 128 MiB each.
void BM_Softmax(benchmark::State& state) {
  guarded(state, [&] {
    ember::manual_seed(3);
    const ember::Tensor x = ember::randn({kRows, kCols}, on_cuda()) * 4;
    ember::Tensor y;
    const GpuTime t = time_on_gpu(state, 50, [&] { y = ember::softmax(x, -1); });
    set_gpu_bandwidth(state, t, 2.0 * 4 * kRows * kCols);
    check_close(state, "softmax row 100's sum", y.select(0, 100).sum().item<double>(), 1.0, 1e-4);
  });
}
BENCHMARK(BM_Softmax)->Unit(benchmark::kMicrosecond)->UseManualTime();

// layer_norm over the last dim of (8192, 4096) float32 with a weight and a bias (4096 each),
// as inference runs it (nothing requires grad, so no statistics are kept for a backward).
void BM_LayerNorm(benchmark::State& state) {
  guarded(state, [&] {
    ember::manual_seed(4);
    const ember::Tensor x = ember::randn({kRows, kCols}, on_cuda()) * 3 + 1;
    const ember::Tensor weight = ember::ones({kCols}, on_cuda()), bias = ember::zeros({kCols}, on_cuda());
    ember::Tensor y;
    const GpuTime t = time_on_gpu(state, 50, [&] { y = ember::layer_norm(x, {kCols}, weight, bias); });
    set_gpu_bandwidth(state, t, 2.0 * 4 * kRows * kCols);
    const ember::Tensor row = y.select(0, 100).cpu().to(ember::kDouble);
    check_close(state, "layer_norm row 100's mean", row.mean().item<double>(), 0.0, 1e-4);
    check_close(state, "layer_norm row 100's variance", (row * row).mean().item<double>(), 1.0, 1e-3);
  });
}
BENCHMARK(BM_LayerNorm)->Unit(benchmark::kMicrosecond)->UseManualTime();

// The Fashion-MNIST trainer's CNN (examples/fashion_mnist.cpp; the same modules in the same
// order as its CnnImpl): conv-bn-relu-pool twice, then dropout, linear, relu, dropout, linear.
struct TrainerCnnImpl : ember::nn::Module {
  TrainerCnnImpl()
      : features(register_module(
            "features", ember::nn::Sequential(
                            ember::nn::Conv2d(ember::nn::Conv2dOptions(1, 32, 3).padding(1)), ember::nn::BatchNorm2d(32),
                            ember::nn::ReLU(), ember::nn::MaxPool2d(ember::nn::MaxPool2dOptions(2)),
                            ember::nn::Conv2d(ember::nn::Conv2dOptions(32, 64, 3).padding(1)),
                            ember::nn::BatchNorm2d(64), ember::nn::ReLU(),
                            ember::nn::MaxPool2d(ember::nn::MaxPool2dOptions(2))))),
        classifier(register_module(
            "classifier",
            ember::nn::Sequential(ember::nn::Flatten(), ember::nn::Dropout(0.25), ember::nn::Linear(64 * 7 * 7, 128),
                                  ember::nn::ReLU(), ember::nn::Dropout(0.25), ember::nn::Linear(128, 10)))) {}
  ember::Tensor forward(const ember::Tensor& x) { return classifier->forward(features->forward(x)); }
  ember::nn::Sequential features, classifier;
};
EMBER_MODULE(TrainerCnn);

// One training step as the trainer takes it, at batch 64: zero_grad, forward, cross_entropy,
// backward, AdamW step (lr 2e-3, weight decay 1e-4, the trainer's defaults). The batch stays on
// the GPU (the data loader's part is not timed); the loss is not read back (the trainer's
// loss.item() is a sync this leaves out, as PyTorch's side does). With `amp`, as --amp fp16
// takes it: forward and loss under float16 autocast, backward of the GradScaler's scaled loss,
// scaler.step (unscale, inf/NaN check: one wait for the device, as PyTorch's) and update.
void train_step_cnn(benchmark::State& state, bool amp) {
  guarded(state, [&] {
    ember::manual_seed(5);
    TrainerCnn model;
    model->to(ember::Device(ember::kCUDA, 0));
    model->train();
    ember::optim::AdamW optimizer(model->parameters(), ember::optim::AdamWOptions(2e-3).weight_decay(1e-4));
    const ember::Tensor x = ember::randn({64, 1, 28, 28}, on_cuda());
    const ember::Tensor y = ember::randint(0, 10, {64}, ember::TensorOptions().dtype(ember::kLong).device(ember::Device(ember::kCUDA, 0)));
    ember::amp::GradScaler scaler("cuda", ember::amp::GradScalerOptions().enabled(amp));
    ember::Tensor loss;
    const GpuTime t = time_on_gpu(state, 10, [&] {
      optimizer.zero_grad();
      {
        ember::AutocastGuard autocast(ember::kCUDA, ember::kFloat16, amp);
        loss = ember::nn::functional::cross_entropy(model->forward(x), y);
      }
      scaler.scale(loss).backward();
      scaler.step(optimizer);
      scaler.update();
    });
    if (t.seconds > 0) state.counters["ms"] = t.per_run() * 1e3;
    const double l = loss.item<double>();
    if (!std::isfinite(l)) state.SkipWithError(("the training loss became " + std::to_string(l)).c_str());
    if (amp && !(scaler.get_scale() >= 1)) state.SkipWithError("the GradScaler's scale collapsed below 1");
  });
}
void BM_TrainStepCnn(benchmark::State& state) { train_step_cnn(state, false); }
void BM_TrainStepCnnAmpFp16(benchmark::State& state) { train_step_cnn(state, true); }
BENCHMARK(BM_TrainStepCnn)->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK(BM_TrainStepCnnAmpFp16)->Unit(benchmark::kMillisecond)->UseManualTime();

// ---- scaled_dot_product_attention forward + backward (issue 9) --------------------------------

// q, k, v [4, 16, L, 64], L = S = 512 and 2048, no mask, not causal: the fused flash-style
// kernels (cuda/attention.cu, through ember::detail::sdpa_fused) and the plain composition
// (matmul, softmax, matmul: ember::detail::sdpa_math). One run is the forward and the backward
// of a fixed output gradient (the input gradients accumulate, as a training step's would).
// Counters: ms per run, and peak_MiB — the caching allocator's peak of allocated bytes during
// one run beyond what was allocated before it (inputs and their gradients excluded), where the
// fused kernels' O(L) memory shows against the composition's [L, S] matrices. Checked: the
// fused output equals the composition's to the dtype's accuracy.
constexpr int64_t kSdpaBatch = 4, kSdpaHeads = 16, kSdpaHeadDim = 64;

void sdpa_forward_backward(benchmark::State& state, int64_t L, ember::ScalarType dtype, bool fused) {
  guarded(state, [&] {
    ember::manual_seed(3);
    auto input = [&] {
      return ember::randn({kSdpaBatch, kSdpaHeads, L, kSdpaHeadDim}, on_cuda()).to(dtype).requires_grad_(true);
    };
    ember::Tensor q = input(), k = input(), v = input();
    const ember::Tensor g = ember::randn({kSdpaBatch, kSdpaHeads, L, kSdpaHeadDim}, on_cuda()).to(dtype);
    auto run = [&] {
      ember::Tensor out = fused ? ember::detail::sdpa_fused(q, k, v) : ember::detail::sdpa_math(q, k, v);
      out.backward(g);
    };
    run();  // warm-up: the gradients' buffers exist from here on
    ember::cuda::synchronize();
    const size_t before = ember::cuda::memory_allocated(0);
    ember::cuda::reset_peak_memory_stats(0);
    run();
    ember::cuda::synchronize();
    const double peak_mib = static_cast<double>(ember::cuda::max_memory_allocated(0) - before) / (1 << 20);
    const GpuTime t = time_on_gpu(state, 5, run);
    if (t.seconds > 0) state.counters["ms"] = t.per_run() * 1e3;
    state.counters["peak_MiB"] = peak_mib;
    ember::NoGradGuard no_grad;
    const double diff = (ember::detail::sdpa_fused(q, k, v) - ember::detail::sdpa_math(q, k, v))
                            .abs().max().to(ember::kDouble).item<double>();
    check_close(state, "max |fused - composition|", diff, 0, dtype == ember::kFloat ? 1e-4 : 2e-2);
  });
}

void BM_Sdpa512Fp16Fused(benchmark::State& state) { sdpa_forward_backward(state, 512, ember::kFloat16, true); }
void BM_Sdpa2048Fp16Fused(benchmark::State& state) { sdpa_forward_backward(state, 2048, ember::kFloat16, true); }
void BM_Sdpa2048Fp16Math(benchmark::State& state) { sdpa_forward_backward(state, 2048, ember::kFloat16, false); }
void BM_Sdpa2048Fp32Fused(benchmark::State& state) { sdpa_forward_backward(state, 2048, ember::kFloat, true); }
BENCHMARK(BM_Sdpa512Fp16Fused)->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK(BM_Sdpa2048Fp16Fused)->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK(BM_Sdpa2048Fp16Math)->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK(BM_Sdpa2048Fp32Fused)->Unit(benchmark::kMillisecond)->UseManualTime();

}  // namespace

BENCHMARK_MAIN();
