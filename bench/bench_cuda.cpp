// CUDA throughput and allocator benchmarks (built only with CUDA on): elementwise add on 256M
// float32 elements next to a device-to-device copy of the same size (the bandwidth ceiling),
// sum over 256M elements, and allocator churn. scripts/gpu_check.sh runs this program and
// scripts/gpu_bench_torch.py times the same workloads in PyTorch beside it.
//
// Timing: every iteration ends with ember::cuda::synchronize(), and the benchmarks report wall
// time (UseRealTime), so a number is what a caller waiting for the result sees, launch and
// sync included (about 10 us against the ~0.7 ms a 256M-element add takes on an H200).
// Throughput counts every byte read and written once: add 3 x 4 bytes per element, copy
// 2 x 4, sum 4. The "GB/s" counter is in units of 10^9 bytes per second (the console shows
// 3900 as "3.9k/s"); bytes_per_second in the JSON output is the same figure in bytes.
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

#include <ember/cuda/caching_allocator.h>
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

}  // namespace

BENCHMARK_MAIN();
