// Random sampling kernels (cuda/random.h). One thread per element: element k is a pure function
// of Philox block (offset + k), computed with core/philox.h's maps exactly as the CPU computes
// it, so results do not depend on the launch configuration and match the CPU's.
#include "ember/core/philox.h"
#include "ember/core/tensor.h"
#include "ember/cuda/runtime/device.h"
#include "ember/cuda/loops.cuh"
#include "ember/cuda/random.h"

namespace ember::cuda {
namespace {

/// out[k] = f(k) for a contiguous output of n elements, stored as T (grid-stride loop).
template <class T, class F>
__global__ void generate_kernel(int64_t n, device_t<T>* out, F f) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride)
    out[k] = to_stored<T>(f(k));
}

template <class T, class F>
void launch_generate(const Tensor& out, const F& f) {
  const int64_t n = out.numel();
  if (n == 0) return;
  EMBER_CHECK(out.is_cuda() && out.is_contiguous(), "internal error: random kernels need a contiguous CUDA output");
  generate_kernel<T><<<blocks_for(n), kThreads, 0, current_raw_stream()>>>(
      n, static_cast<device_t<T>*>(out.data_ptr()), f);
  EMBER_CUDA_CHECK_LAUNCH();
}

// The samplers: value of element k, as a double (converted to the stored type as the CPU's
// static_cast<T>(double) does). Functor structs, since nvcc rejects __device__ lambdas inside
// visit_dtype's generic lambda.

struct UniformFn {
  uint64_t key, start;
  double from, width;
  int digits;
  __device__ double operator()(int64_t k) const {
    return philox::mul_add(width, philox::uniform01_grid(key, start + k, digits), from);
  }
};

struct NormalFn {
  uint64_t key, start;
  double mean, std;
  __device__ double operator()(int64_t k) const { return philox::mul_add(std, philox::normal01(key, start + k), mean); }
};

struct BernoulliFn {
  uint64_t key, start;
  double p;
  __device__ double operator()(int64_t k) const { return philox::uniform01(key, start + k) < p ? 1.0 : 0.0; }
};

struct RandomIntFn {
  uint64_t key, start;
  int64_t from;
  uint64_t range;
  // Through double, as the CPU's random_ (so both agree bit for bit even past 2^53).
  __device__ double operator()(int64_t k) const {
    return static_cast<double>(from + static_cast<int64_t>(philox::bits64(key, start + k) % range));
  }
};

/// p is read in its own dtype; the comparison is in double, as on the CPU.
template <class P>
struct BernoulliTensorFn {
  uint64_t key, start;
  const device_t<P>* p;
  __device__ double operator()(int64_t k) const {
    return philox::uniform01(key, start + k) < static_cast<double>(load_opmath<P>(p + k)) ? 1.0 : 0.0;
  }
};

}  // namespace

void sample(Distribution dist, const Tensor& out, PhiloxDraw draw, double a, double b) {
  DeviceGuard guard(out.device());
  switch (dist) {
    case Distribution::kUniform:
      visit_float_dtype(out.dtype(), "check_uniform_bounds", [&]<typename T>() {
        launch_generate<T>(out, UniformFn{draw.seed, draw.offset, a, b - a, philox::mantissa_digits<T>()});
      });
      return;
    case Distribution::kNormal:
      visit_float_dtype(out.dtype(), "normal_kernel_cuda", [&]<typename T>() {
        launch_generate<T>(out, NormalFn{draw.seed, draw.offset, a, b});
      });
      return;
    case Distribution::kBernoulli:
      visit_dtype(out.dtype(), [&]<typename T>() { launch_generate<T>(out, BernoulliFn{draw.seed, draw.offset, a}); });
      return;
  }
}

void random_int(const Tensor& out, PhiloxDraw draw, int64_t from, uint64_t range) {
  DeviceGuard guard(out.device());
  visit_dtype(out.dtype(), [&]<typename T>() {
    launch_generate<T>(out, RandomIntFn{draw.seed, draw.offset, from, range});
  });
}

void bernoulli_tensor(const Tensor& out, const Tensor& p, PhiloxDraw draw) {
  DeviceGuard guard(out.device());
  EMBER_CHECK(p.is_contiguous() && p.dtype() == out.dtype() && p.numel() == out.numel(),
              "internal error: bernoulli_tensor expects a contiguous p of out's dtype and size");
  visit_float_dtype(out.dtype(), "bernoulli_tensor_cuda_p_", [&]<typename T>() {
    launch_generate<T>(out, BernoulliTensorFn<T>{draw.seed, draw.offset, static_cast<const device_t<T>*>(p.data_ptr())});
  });
}

}  // namespace ember::cuda
