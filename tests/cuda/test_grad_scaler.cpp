// amp::GradScaler on CUDA (cuda/amp.cu through optim/grad_scaler.cpp) against the CPU: the
// fused unscale-and-check over many gradients of every floating dtype (more tensors than one
// launch's table holds, tensors longer than a chunk, empty and strided ones, an inf or NaN in
// one late element), the scale-update kernel on a sequence of flags, and PyTorch's scripted
// trajectory (optim/fixtures/grad_scaler_trajectory.h) run by a "cuda" scaler with SGD.
#include <cmath>
#include <limits>
#include <vector>

#include "cuda/parity.h"
#include "optim/fixtures/grad_scaler_trajectory.h"

using namespace ember;
using namespace ember::test;
using namespace ember::optim;
using amp::GradScaler;
using amp::GradScalerOptions;
namespace fx = ember::test::grad_scaler_fixture;

namespace {

Tensor on_cuda(const Tensor& t) { return t.to(cuda_device()); }

/// The gradients of one check: `n` tensors of varied sizes (some empty, some longer than a
/// 65536-element chunk) of dtype `dt`, all values finite.
std::vector<Tensor> make_grads(int n, ScalarType dt) {
  std::vector<Tensor> grads;
  for (int i = 0; i < n; ++i) {
    const int64_t numel = i % 17 == 5 ? 0 : (i % 23 == 7 ? 70000 + i : 1 + 37 * i);
    grads.push_back(make_input({numel}, dt, -1000, 1000));
  }
  return grads;
}

/// Unscales copies of `grads` on both devices and compares values and found_inf.
void check_unscale(const std::vector<Tensor>& grads, double inv_scale) {
  std::vector<Tensor> cpu, gpu;
  for (const Tensor& g : grads) {
    cpu.push_back(g.clone());
    gpu.push_back(on_cuda(g));
  }
  Tensor found_cpu = zeros({}, kFloat);
  Tensor found_gpu = on_cuda(found_cpu);
  const Tensor inv = full({}, inv_scale, kFloat);
  amp::non_finite_check_and_unscale_(cpu, found_cpu, inv);
  amp::non_finite_check_and_unscale_(gpu, found_gpu, on_cuda(inv));
  CHECK(found_gpu.item<double>() == found_cpu.item<double>());
  // The same single multiplication in the same type on both devices: bit-equal values.
  for (size_t i = 0; i < grads.size(); ++i)
    check_same(gpu[i], cpu[i], Tol{0, 0}, "gradient " + std::to_string(i));
}

}  // namespace

TEST_CASE("cuda grad_scaler: the fused unscale-and-check matches the CPU") {
  for (ScalarType dt : kFloatTypes) {
    INFO("dtype " << dt);
    std::vector<Tensor> grads = make_grads(300, dt);  // past one table's 124 slots
    check_unscale(grads, 1.0 / 1024);
    check_unscale(grads, 1.0 / 3);  // an inexact inverse
    check_unscale(grads, 1.0);      // no change at all
    // One non-finite element late in a long tensor, and one in a small one.
    for (float bad : {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                      std::numeric_limits<float>::quiet_NaN()}) {
      std::vector<Tensor> with_bad = make_grads(40, dt);
      with_bad[30][with_bad[30].numel() - 1].fill_(bad);
      check_unscale(with_bad, 0.5);
      std::vector<Tensor> small_bad = make_grads(3, dt);
      small_bad[2][0].fill_(bad);
      check_unscale(small_bad, 0.5);
    }
  }
}

TEST_CASE("cuda grad_scaler: mixed dtypes and strided gradients in one call") {
  Tensor a = make_input({5, 7}, kFloat), b = make_input({300}, kHalf), c = make_input({4, 9}, kDouble);
  Tensor cpu_a = a.clone(), cpu_b = b.clone(), cpu_c = c.clone();
  Tensor gpu_a = on_cuda(a), gpu_b = on_cuda(b), gpu_c = on_cuda(c);
  Tensor found_cpu = zeros({}, kFloat), found_gpu = on_cuda(found_cpu);
  const Tensor inv = full({}, 0.125, kFloat);
  amp::non_finite_check_and_unscale_({cpu_a.t(), cpu_b, cpu_c.slice(1, 0, 9, 2)}, found_cpu, inv);
  amp::non_finite_check_and_unscale_({gpu_a.t(), gpu_b, gpu_c.slice(1, 0, 9, 2)}, found_gpu, on_cuda(inv));
  check_same(gpu_a, cpu_a, Tol{0, 0}, "a");
  check_same(gpu_b, cpu_b, Tol{0, 0}, "b");
  check_same(gpu_c, cpu_c, Tol{0, 0}, "c");
  CHECK(found_gpu.item<double>() == 0.0);
}

TEST_CASE("cuda grad_scaler: the scale update kernel follows the CPU rule") {
  Tensor scale_cpu = full({}, 1024.0, kFloat), tracker_cpu = zeros({}, kInt);
  Tensor scale_gpu = on_cuda(scale_cpu), tracker_gpu = on_cuda(tracker_cpu);
  const std::vector<float> flags = {0, 0, 0, 1, 0, 2, 0, 0, 0, std::numeric_limits<float>::quiet_NaN(), 0};
  for (float f : flags) {
    Tensor flag = full({}, static_cast<double>(f), kFloat);
    amp::update_scale_(scale_cpu, tracker_cpu, flag, 2.0, 0.3, 3);
    amp::update_scale_(scale_gpu, tracker_gpu, on_cuda(flag), 2.0, 0.3, 3);
    CHECK(scale_gpu.item<double>() == scale_cpu.item<double>());
    CHECK(tracker_gpu.item<int64_t>() == tracker_cpu.item<int64_t>());
  }
  // Growth past float32's range keeps the scale.
  Tensor big = on_cuda(full({}, static_cast<double>(std::numeric_limits<float>::max()), kFloat));
  Tensor tr = on_cuda(zeros({}, kInt));
  amp::update_scale_(big, tr, on_cuda(zeros({}, kFloat)), 2.0, 0.5, 1);
  CHECK(big.item<double>() == static_cast<double>(std::numeric_limits<float>::max()));
}

TEST_CASE("cuda grad_scaler: PyTorch's scripted trajectory on CUDA") {
  Tensor w = on_cuda(tensor(std::vector<float>(fx::kW0.begin(), fx::kW0.end()))).requires_grad_();
  SGD opt(std::vector<Tensor>{w}, SGDOptions(fx::kLr).momentum(fx::kMomentum));
  GradScaler scaler("cuda", GradScalerOptions()
                                .init_scale(fx::kInitScale)
                                .growth_factor(fx::kGrowthFactor)
                                .backoff_factor(fx::kBackoffFactor)
                                .growth_interval(fx::kGrowthInterval));
  REQUIRE(scaler.is_enabled());
  for (size_t t = 0; t < fx::kSteps.size(); ++t) {
    const fx::Step& s = fx::kSteps[t];
    INFO("step " << t);
    opt.zero_grad();
    Tensor c = on_cuda(tensor(std::vector<float>(s.coeffs.begin(), s.coeffs.end())));
    scaler.scale((w * c).sum()).backward();
    scaler.step(opt);
    CHECK(scaler.found_inf(opt) == s.found_inf);
    if (static_cast<int>(t) == fx::kNewScaleStep)
      scaler.update(fx::kNewScale);
    else
      scaler.update();
    CHECK(scaler.get_scale() == s.scale);
    CHECK(scaler.state_dict()["_growth_tracker"].item<int64_t>() == s.growth_tracker);
    const std::vector<double> got = host_values(w);
    for (size_t k = 0; k < got.size(); ++k) CHECK(got[k] == static_cast<double>(s.w[k]));
  }
}

TEST_CASE("cuda grad_scaler: the scale lives on the outputs' device; new_scale must be a CUDA tensor") {
  GradScaler scaler("cuda", GradScalerOptions().init_scale(8.0));
  Tensor y = scaler.scale(on_cuda(full({3}, 2.0, kFloat)));
  CHECK(y.is_cuda());
  CHECK(host_values(y) == std::vector<double>{16, 16, 16});
  std::vector<Tensor> ys = scaler.scale(std::vector<Tensor>{on_cuda(ones({1})), ones({1})});
  CHECK(ys[0].is_cuda());
  CHECK(ys[1].is_cpu());
  CHECK(host_values(ys[1]) == std::vector<double>{8});
  CHECK_THROWS(scaler.update(ones({1})));  // a CPU tensor for a "cuda" scaler
}
