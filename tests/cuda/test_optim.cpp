// The fused CUDA optimizer steps (cuda/optim.cu through optim/sgd.cpp, adam.cpp, adamw.cpp)
// against the CPU's: the same initial parameters and the same gradients on both devices,
// several steps, then every parameter and every state tensor (momentum_buffer, exp_avg,
// exp_avg_sq, max_exp_avg_sq, step) compared. The parameters have different sizes in one
// group: a scalar-like one, small matrices, an empty one, one larger than a kernel chunk
// (65536 elements), and one without a gradient, which must be left alone and get no state.
// Also: more parameters than one launch's table holds, a parameter bigger than one launch's
// blocks cover, float32 and float64 parameters mixed in one optimizer, strided gradients, and
// parameters that get a gradient only on some steps (their own step counts).
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cuda/parity.h"

using namespace ember;
using namespace ember::test;
using namespace ember::optim;

namespace {

/// The shapes of one parameter group; kNoGrad never gets a gradient.
const std::vector<std::vector<int64_t>> kShapes = {{3}, {17, 5}, {300, 301}, {1}, {0, 4}, {64, 7}};
constexpr size_t kNoGrad = 3;

/// Tolerances of a whole trajectory: float32 and float64 follow the CPU's arithmetic
/// operation for operation; float16 and bfloat16 round once per stored value on CUDA but
/// after every tensor op on the CPU, a few units in their last place apart after some steps.
Tol step_tol(ScalarType t) {
  switch (t) {
    case kHalf:
      return {2e-3, 4e-3};
    case kBFloat16:
      return {2e-2, 3.2e-2};
    case kFloat:
      return {1e-6, 1e-5};
    default:
      return {1e-12, 1e-12};
  }
}

/// The same parameters on the CPU and on CUDA.
struct Params {
  std::vector<Tensor> cpu, cuda;
};

Params make_params(const std::vector<std::vector<int64_t>>& shapes, const std::vector<ScalarType>& dtypes) {
  Params p;
  for (size_t i = 0; i < shapes.size(); ++i) {
    Tensor init = make_input(shapes[i], dtypes[i % dtypes.size()], -1, 1);
    Tensor c = init.clone();
    c.requires_grad_(true);
    Tensor g = init.to(cuda_device());
    g.requires_grad_(true);
    p.cpu.push_back(c);
    p.cuda.push_back(g);
  }
  return p;
}

/// A gradient of `shape`: uniform in (-1, 1), except in float16 and bfloat16, where its
/// magnitude is kept in [0.25, 1). (Adam's (1 - beta2) g^2 of a smaller float16 gradient can
/// round to 0; the CPU's tensor ops then divide by eps rounded to float16, which is 0 too,
/// while the fused kernel divides by eps in float: both as PyTorch's single-tensor and fused
/// steps, and not what this test compares.)
Tensor make_grad(std::vector<int64_t> shape, ScalarType t) {
  Tensor u = make_input(shape, kFloat, -1, 1);
  if (t == kHalf || t == kBFloat16) u = u.sign() * (u.abs() * 0.75 + 0.25);
  return u.to(t);
}

/// Gives parameter i the same fresh gradient on both devices (`strided`: a transposed view).
void set_grad(Params& p, size_t i, bool strided = false) {
  Tensor g;
  if (strided && p.cpu[i].dim() == 2) {
    g = make_grad({p.cpu[i].size(1), p.cpu[i].size(0)}, p.cpu[i].dtype()).t();
  } else {
    g = make_grad(p.cpu[i].sizes().vec(), p.cpu[i].dtype());
  }
  p.cpu[i].mutable_grad() = g;
  p.cuda[i].mutable_grad() = g.to(cuda_device());
}

/// Every parameter and its state agree; parameters in `skipped` are unchanged and stateless.
void check_same_state(const Optimizer& cpu_opt, const Optimizer& cuda_opt, const Params& p,
                      const std::vector<Tensor>& initial, const std::set<size_t>& skipped) {
  for (size_t i = 0; i < p.cpu.size(); ++i) {
    INFO("parameter " << i << " of shape " << p.cpu[i].sizes());
    const Tol tol = step_tol(p.cpu[i].dtype());
    check_same(p.cuda[i], p.cpu[i], tol, "parameter");
    auto c = cpu_opt.state().find(p.cpu[i].unsafeGetTensorImpl());
    auto g = cuda_opt.state().find(p.cuda[i].unsafeGetTensorImpl());
    REQUIRE((c == cpu_opt.state().end()) == (g == cuda_opt.state().end()));
    if (skipped.count(i)) {
      CHECK(c == cpu_opt.state().end());
      check_same(p.cuda[i], initial[i], Tol{0, 0}, "parameter without a gradient");
      continue;
    }
    if (c == cpu_opt.state().end()) continue;
    auto cpu_state = c->second->named_tensors(), cuda_state = g->second->named_tensors();
    REQUIRE(cpu_state.size() == cuda_state.size());
    for (size_t k = 0; k < cpu_state.size(); ++k) {
      REQUIRE(cuda_state[k].first == cpu_state[k].first);
      if (cpu_state[k].first == "step") {
        CHECK(cuda_state[k].second.item<double>() == cpu_state[k].second.item<double>());
      } else {
        check_same(cuda_state[k].second, cpu_state[k].second, tol, cpu_state[k].first);
      }
    }
  }
}

/// Runs `steps` steps of the optimizer make(params) on both devices with the same gradients
/// (none for kNoGrad, or for the parameters `has_grad` leaves out at a step) and compares.
template <class Make>
void check_optimizer_parity(Make make, const std::vector<ScalarType>& dtypes, int steps = 4,
                            const std::vector<std::vector<int64_t>>& shapes = kShapes,
                            std::function<bool(int, size_t)> has_grad = nullptr, bool strided_grads = false) {
  Params p = make_params(shapes, dtypes);
  std::vector<Tensor> initial;
  for (const Tensor& t : p.cuda) initial.push_back(t.detach().clone());
  std::unique_ptr<Optimizer> cpu_opt = make(p.cpu), cuda_opt = make(p.cuda);
  std::set<size_t> never;
  for (size_t i = 0; i < shapes.size(); ++i) never.insert(i);
  for (int s = 0; s < steps; ++s) {
    for (size_t i = 0; i < shapes.size(); ++i) {
      if (i == kNoGrad || (has_grad && !has_grad(s, i))) {
        p.cpu[i].mutable_grad().reset();
        p.cuda[i].mutable_grad().reset();
        continue;
      }
      set_grad(p, i, strided_grads);
      never.erase(i);
    }
    cpu_opt->step();
    cuda_opt->step();
  }
  check_same_state(*cpu_opt, *cuda_opt, p, initial, never);
}

const std::vector<ScalarType> kStepTypes = {kFloat, kDouble, kHalf, kBFloat16};

}  // namespace

TEST_CASE("cuda optim: SGD with each option matches the CPU in every float dtype") {
  struct Case {
    const char* name;
    SGDOptions options;
  };
  const std::vector<Case> cases = {
      {"plain", SGDOptions(0.1)},
      {"weight_decay", SGDOptions(0.1).weight_decay(0.05)},
      {"momentum", SGDOptions(0.1).momentum(0.9)},
      {"momentum + dampening", SGDOptions(0.1).momentum(0.9).dampening(0.3)},
      {"nesterov", SGDOptions(0.1).momentum(0.9).nesterov(true)},
      {"nesterov + weight_decay", SGDOptions(0.05).momentum(0.8).nesterov(true).weight_decay(1e-2)},
      {"momentum + dampening + weight_decay",
       SGDOptions(0.02).momentum(0.5).dampening(0.5).weight_decay(0.1)},
  };
  for (ScalarType t : kStepTypes) {
    for (const Case& c : cases) {
      INFO("dtype " << t << ", SGD " << c.name);
      check_optimizer_parity([&](std::vector<Tensor> ps) { return std::make_unique<SGD>(ps, c.options); },
                             {t});
    }
  }
}

TEST_CASE("cuda optim: Adam with and without amsgrad and weight_decay matches the CPU in every float dtype") {
  for (ScalarType t : kStepTypes) {
    for (bool amsgrad : {false, true}) {
      for (double wd : {0.0, 0.1}) {
        INFO("dtype " << t << ", amsgrad " << amsgrad << ", weight_decay " << wd);
        AdamOptions o = AdamOptions(1e-2).betas({0.8, 0.95}).eps(1e-6).weight_decay(wd).amsgrad(amsgrad);
        check_optimizer_parity([&](std::vector<Tensor> ps) { return std::make_unique<Adam>(ps, o); }, {t}, 5);
      }
    }
  }
}

TEST_CASE(
    "cuda optim: AdamW with and without amsgrad and weight_decay matches the CPU in every float dtype") {
  for (ScalarType t : kStepTypes) {
    for (bool amsgrad : {false, true}) {
      for (double wd : {0.0, 1e-2, 0.5}) {
        INFO("dtype " << t << ", amsgrad " << amsgrad << ", weight_decay " << wd);
        AdamWOptions o = AdamWOptions(1e-2).weight_decay(wd).amsgrad(amsgrad);
        check_optimizer_parity([&](std::vector<Tensor> ps) { return std::make_unique<AdamW>(ps, o); }, {t},
                               5);
      }
    }
  }
}

TEST_CASE("cuda optim: parameters that miss gradients on some steps keep their own step counts") {
  // Parameter i has a gradient at step s unless (s + i) % 3 == 0: different bias
  // corrections per parameter within one launch, and SGD buffers started at different steps.
  auto some = [](int s, size_t i) { return (static_cast<size_t>(s) + i) % 3 != 0; };
  for (ScalarType t : {kFloat, kDouble}) {
    INFO("dtype " << t);
    check_optimizer_parity(
        [](std::vector<Tensor> ps) { return std::make_unique<Adam>(ps, AdamOptions(1e-2).amsgrad(true)); },
        {t}, 6, kShapes, some);
    check_optimizer_parity(
        [](std::vector<Tensor> ps) { return std::make_unique<AdamW>(ps, AdamWOptions(1e-2)); }, {t}, 6,
        kShapes, some);
    check_optimizer_parity(
        [](std::vector<Tensor> ps) {
          return std::make_unique<SGD>(ps, SGDOptions(0.1).momentum(0.9).dampening(0.1));
        },
        {t}, 6, kShapes, some);
  }
}

TEST_CASE("cuda optim: strided gradients, and float32 and float64 parameters in one optimizer") {
  check_optimizer_parity(
      [](std::vector<Tensor> ps) { return std::make_unique<AdamW>(ps, AdamWOptions(1e-2).amsgrad(true)); },
      {kFloat, kDouble}, 3, kShapes, nullptr, /*strided_grads=*/true);
  check_optimizer_parity(
      [](std::vector<Tensor> ps) {
        return std::make_unique<SGD>(ps, SGDOptions(0.1).momentum(0.9).nesterov(true));
      },
      {kDouble, kFloat, kHalf}, 3, kShapes, nullptr, /*strided_grads=*/true);
}

TEST_CASE("cuda optim: more parameters than one launch's table holds") {
  // 80 small parameters (a deep model's biases and norms): several launches per step.
  std::vector<std::vector<int64_t>> shapes;
  for (int i = 0; i < 80; ++i) shapes.push_back({1 + (i * 37) % 200});
  check_optimizer_parity(
      [](std::vector<Tensor> ps) { return std::make_unique<Adam>(ps, AdamOptions(1e-2).amsgrad(true)); },
      {kFloat}, 3, shapes);
  check_optimizer_parity(
      [](std::vector<Tensor> ps) { return std::make_unique<SGD>(ps, SGDOptions(0.1).momentum(0.9)); },
      {kFloat}, 3, shapes);
}

TEST_CASE("cuda optim: a parameter larger than one launch covers (320 chunks of 65536)") {
  std::vector<std::vector<int64_t>> shapes = {{5}, {5000, 4500}, {7, 3}, {3}};
  check_optimizer_parity(
      [](std::vector<Tensor> ps) { return std::make_unique<AdamW>(ps, AdamWOptions(1e-3)); }, {kFloat}, 2,
      shapes);
}

TEST_CASE("cuda optim: the step runs on the current stream and creates state on the parameter's device") {
  Tensor p = make_input({70000}, kFloat, -1, 1).to(cuda_device());
  p.requires_grad_(true);
  p.mutable_grad() = make_input({70000}, kFloat, -1, 1).to(cuda_device());
  const Tensor before = p.detach().clone();
  Adam opt({p}, AdamOptions(1e-2).eps(1e-12));
  cuda::CUDAStream side = cuda::getStreamFromPool();
  {
    cuda::CUDAStreamGuard guard(side);
    opt.step();
    side.synchronize();
  }
  auto& s = static_cast<AdamParamState&>(*opt.state().at(p.unsafeGetTensorImpl()));
  CHECK(s.exp_avg().device() == p.device());
  CHECK(s.exp_avg_sq().device() == p.device());
  CHECK(s.exp_avg_sq().is_contiguous());
  CHECK(s.step() == 1);
  // Adam's first step moves every element by lr |g| / (|g| + eps): lr, to within rounding.
  Tensor moved = (p.detach() - before).abs().to(Device(kCPU));
  CHECK(((moved - 1e-2).abs().max().item<double>()) < 1e-4);
}
