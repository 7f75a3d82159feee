// CPU-vs-CUDA parity checks: one test body runs an op on CPU tensors and on CUDA copies of
// them and compares the results within PyTorch's tolerances (torch.testing.assert_close's
// defaults per dtype). The CPU path is the reference: it has its own value tests in tests/core.
//
//   TEST_CASE("exp") {
//     for (ScalarType t : kFloatTypes)
//       check_parity([](const TensorList& x) { return x[0].exp(); }, {make_input({3, 4}, t)});
//   }
//
// Non-contiguous and broadcast inputs are made inside the op lambda (x[0].t(), x[0].slice(...),
// x[0].expand(...)), so both devices see the same layout.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ember/ember.h"

namespace ember::test {

inline const std::vector<ScalarType> kAllTypes = {kBool, kUInt8, kInt8, kInt16, kInt32, kInt64,
                                                  kHalf, kBFloat16, kFloat, kDouble};
inline const std::vector<ScalarType> kNumericTypes = {kUInt8, kInt8, kInt16, kInt32, kInt64,
                                                      kHalf, kBFloat16, kFloat, kDouble};
inline const std::vector<ScalarType> kIntegralTypes = {kUInt8, kInt8, kInt16, kInt32, kInt64};
inline const std::vector<ScalarType> kFloatTypes = {kHalf, kBFloat16, kFloat, kDouble};

inline Device cuda_device() { return Device(kCUDA, 0); }

/// EMBER_NO_ALLOCATOR_CACHE=1 (the GPU check's compute-sanitizer stage) gives every tensor its
/// own cudaMalloc and cudaFree. cudaFree synchronizes the device, so tests that watch reuse
/// or need work still pending on a stream have nothing to observe then and skip.
inline bool allocator_cache_off() {
  const char* v = std::getenv("EMBER_NO_ALLOCATOR_CACHE");
  return v && v[0] == '1';
}

/// Absolute and relative tolerance: |cuda - cpu| <= atol + rtol * |cpu|.
struct Tol {
  double atol;
  double rtol;
};

/// torch.testing.assert_close's defaults; integers and bool must match exactly.
inline Tol default_tol(ScalarType t) {
  switch (t) {
    case kHalf: return {1e-5, 1e-3};
    case kBFloat16: return {1e-5, 1.6e-2};
    case kFloat: return {1e-5, 1.3e-6};
    case kDouble: return {1e-7, 1e-7};
    default: return {0, 0};
  }
}

/// Seeded test input of `shape` and dtype on the CPU: values in [lo, hi) for floats, integers
/// in [lo, hi) for integer types (clamped to the type's range), random bools for bool.
inline Tensor make_input(IntArrayRef shape, ScalarType dtype, double lo = -3, double hi = 3, uint64_t seed = 0) {
  static uint64_t counter = 0;
  manual_seed(seed ? seed : 1234 + counter++);
  if (dtype == kBool) return rand(shape) > 0.5;
  if (is_floating_point(dtype)) return (rand(shape, kDouble) * (hi - lo) + lo).to(dtype);
  if (dtype == kUInt8) lo = std::max(lo, 0.0);
  return randint(static_cast<int64_t>(lo), static_cast<int64_t>(hi), shape, TensorOptions().dtype(dtype));
}

/// The values of a CPU or CUDA tensor as doubles, row-major (through the CPU).
inline std::vector<double> host_values(const Tensor& t) {
  NoGradGuard g;
  Tensor c = t.detach().to(Device(kCPU)).to(kDouble).contiguous();
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

/// CHECKs that a CUDA result equals the CPU one: device, shape, dtype, values within tol
/// (NaN matches NaN, infinities must match exactly).
inline void check_same(const Tensor& on_cuda, const Tensor& on_cpu, std::optional<Tol> tol = {},
                       const std::string& what = "output") {
  INFO(what);
  REQUIRE(on_cuda.defined() == on_cpu.defined());
  if (!on_cpu.defined()) return;
  CHECK(on_cuda.is_cuda());
  REQUIRE(on_cuda.sizes().vec() == on_cpu.sizes().vec());
  REQUIRE(on_cuda.dtype() == on_cpu.dtype());
  Tol t = tol.value_or(default_tol(on_cpu.dtype()));
  std::vector<double> got = host_values(on_cuda), want = host_values(on_cpu);
  int shown = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    bool both_nan = std::isnan(got[i]) && std::isnan(want[i]);
    bool ok = both_nan || got[i] == want[i] ||
              (!std::isinf(want[i]) && std::fabs(got[i] - want[i]) <= t.atol + t.rtol * std::fabs(want[i]));
    if (!ok && shown++ < 5) {
      INFO("element " << i << ": cuda " << got[i] << ", cpu " << want[i] << " (dtype " << on_cpu.dtype() << ")");
      CHECK(ok);
    }
  }
  CHECK(shown == 0);
}

inline TensorList to_cuda(const TensorList& xs) {
  TensorList out;
  for (const Tensor& x : xs) out.push_back(x.defined() ? x.to(cuda_device()) : Tensor());
  return out;
}

/// Runs f on `inputs` (CPU) and on CUDA copies of them, and compares every output.
/// f returns a Tensor or a TensorList.
template <class F>
void check_parity(F f, const TensorList& inputs, std::optional<Tol> tol = {}) {
  TensorList cpu_in = inputs, cuda_in = to_cuda(inputs);
  auto cpu_out = f(cpu_in);
  auto cuda_out = f(cuda_in);
  if constexpr (std::is_same_v<decltype(cpu_out), Tensor>) {
    check_same(cuda_out, cpu_out, tol);
  } else {
    REQUIRE(cuda_out.size() == cpu_out.size());
    for (size_t i = 0; i < cpu_out.size(); ++i) check_same(cuda_out[i], cpu_out[i], tol, "output " + std::to_string(i));
  }
  // In-place ops write into their inputs: those must agree too.
  for (size_t i = 0; i < inputs.size(); ++i)
    if (cpu_in[i].defined()) check_same(cuda_in[i], cpu_in[i], tol, "input " + std::to_string(i) + " after the op");
}

/// Gradient parity: runs f on leaves made from `inputs` (floating ones require grad) on both
/// devices, backpropagates the same random weights through every output, and compares the
/// outputs and the inputs' gradients.
template <class F>
void check_grad_parity(F f, const TensorList& inputs, std::optional<Tol> tol = {}) {
  auto run = [&](Device d, TensorList& leaves) {
    leaves.clear();
    for (const Tensor& x : inputs) {
      Tensor l = x.to(d).detach();
      if (is_floating_point(l.dtype())) l.requires_grad_(true);
      leaves.push_back(l);
    }
    Tensor out = f(leaves);
    manual_seed(99);
    Tensor w = rand(out.sizes(), TensorOptions().dtype(out.dtype())).to(d);
    (out * w).sum().backward();
    return out;
  };
  TensorList cpu_leaves, cuda_leaves;
  Tensor cpu_out = run(kCPU, cpu_leaves);
  Tensor cuda_out = run(cuda_device(), cuda_leaves);
  check_same(cuda_out, cpu_out, tol);
  for (size_t i = 0; i < inputs.size(); ++i)
    if (cpu_leaves[i].requires_grad())
      check_same(cuda_leaves[i].grad(), cpu_leaves[i].grad(), tol, "grad of input " + std::to_string(i));
}

/// Both devices reject the op with the same ember::Error text.
template <class F>
void check_error_parity(F f, const TensorList& inputs) {
  std::string cpu_msg, cuda_msg;
  try {
    TensorList in = inputs;
    (void)f(in);
  } catch (const Error& e) {
    cpu_msg = e.what();
  }
  try {
    TensorList in = to_cuda(inputs);
    (void)f(in);
  } catch (const Error& e) {
    cuda_msg = e.what();
  }
  CHECK_MESSAGE(!cpu_msg.empty(), "the CPU run did not raise");
  CHECK(cuda_msg == cpu_msg);
}

}  // namespace ember::test
