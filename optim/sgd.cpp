// SGD's update: PyTorch's _single_tensor_sgd, operation for operation, so trajectories match.
// Dense float CPU parameters take a fused pass (core/cpu/sgd.cpp) of core/ops/optim_math.h's
// sgd_element; CUDA parameters are stepped together, a device and dtype at a time, by the fused multi-tensor
// kernel (cuda/optim.h), which runs the same functor.
#include "ember/optim/sgd.h"

#include <cstdint>
#include <memory>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "ember/autograd/grad_mode.h"
#include "ember/core/cpu/sgd.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/optim_math.h"
#include "ember/core/tensor_iter.h"
#include "ember/cuda/optim.h"
#include "ember/optim/fused_step.h"
#include "ember/optim/sgd_step.h"

namespace ember::optim {

namespace {
std::unique_ptr<OptimizerOptions> checked(const SGDOptions& o) {
  EMBER_CHECK(o.lr() >= 0, "Invalid learning rate: ", o.lr());
  EMBER_CHECK(o.momentum() >= 0, "Invalid momentum value: ", o.momentum());
  EMBER_CHECK(o.weight_decay() >= 0, "Invalid weight_decay value: ", o.weight_decay());
  EMBER_CHECK(!o.nesterov() || (o.momentum() > 0 && o.dampening() == 0),
              "Nesterov momentum requires a momentum and zero dampening");
  return std::make_unique<SGDOptions>(o);
}
}  // namespace

std::vector<std::pair<std::string, double>> SGDOptions::named_values() const {
  return {{"lr", lr()},
          {"momentum", momentum()},
          {"dampening", dampening()},
          {"weight_decay", weight_decay()},
          {"nesterov", nesterov() ? 1.0 : 0.0}};
}
void SGDOptions::set_named_value(const std::string& name, double v) {
  if (name == "lr")
    lr(v);
  else if (name == "momentum")
    momentum(v);
  else if (name == "dampening")
    dampening(v);
  else if (name == "weight_decay")
    weight_decay(v);
  else if (name == "nesterov")
    nesterov(v != 0);
  else
    EMBER_CHECK(false, "SGD has no option named '", name, "'");
}
bool operator==(const SGDOptions& a, const SGDOptions& b) {
  return a.lr() == b.lr() && a.momentum() == b.momentum() && a.dampening() == b.dampening() &&
         a.weight_decay() == b.weight_decay() && a.nesterov() == b.nesterov();
}

std::vector<std::pair<std::string, Tensor>> SGDParamState::named_tensors() const {
  if (!momentum_buffer().defined()) return {};
  return {{"momentum_buffer", momentum_buffer()}};
}
void SGDParamState::set_named_tensor(const std::string& name, const Tensor& value) {
  EMBER_CHECK(name == "momentum_buffer", "SGD state has no entry named '", name, "'");
  momentum_buffer(value);
}

namespace detail {

void sgd_step_reference(Tensor& p, const Tensor& grad, SGDParamState& s, const SGDOptions& o) {
  Tensor d_p = grad;
  if (o.weight_decay() != 0) d_p = d_p.add(p, o.weight_decay());
  if (o.momentum() != 0) {
    if (!s.momentum_buffer().defined()) {
      s.momentum_buffer(d_p.detach().clone());  // the first buffer is the gradient itself
    } else {
      s.momentum_buffer().mul_(o.momentum()).add_(d_p, 1 - o.dampening());
    }
    d_p = o.nesterov() ? d_p.add(s.momentum_buffer(), o.momentum()) : s.momentum_buffer();
  }
  p.add_(d_p, -o.lr());
}

namespace {

/// Whether the fused pass takes this step: float32/float64 CPU tensors, the parameter, its
/// gradient and an existing momentum buffer dense, of one dtype and shape, and distinct (the
/// tensor ops read a gradient that aliases the buffer after mul_ changed it).
bool sgd_fusable(const Tensor& p, const Tensor& grad, const SGDParamState& s, const SGDOptions& o) {
  if ((p.dtype() != kFloat && p.dtype() != kDouble) || !cpu_dense_like(p, p) || p.numel() == 0) return false;
  if (!cpu_dense_like(grad, p) || grad.is_same(p)) return false;
  const Tensor& buf = s.momentum_buffer();
  return o.momentum() == 0 || !buf.defined() ||
         (cpu_dense_like(buf, p) && !buf.is_same(p) && !buf.is_same(grad));
}

}  // namespace

void sgd_step(Tensor& p, const Tensor& grad, SGDParamState& s, const SGDOptions& o) {
  if (!sgd_fusable(p, grad, s, o)) return sgd_step_reference(p, grad, s, o);
  const bool momentum = o.momentum() != 0, first = momentum && !s.momentum_buffer().defined();
  if (first) s.momentum_buffer(empty_like(p));  // sgd_element writes the gradient into it
  visit_float_dtype(p.dtype(), "sgd", [&]<typename T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      // The scalars as the tensor ops convert them: each double to T.
      const SgdScalars<T> k{
          static_cast<T>(o.weight_decay()), static_cast<T>(o.momentum()), static_cast<T>(1 - o.dampening()),
          static_cast<T>(-o.lr()),          o.weight_decay() != 0,        o.nesterov()};
      cpu::sgd_fused<T>(p.data_ptr<T>(), grad.data_ptr<T>(),
                        momentum ? s.momentum_buffer().data_ptr<T>() : nullptr, first, p.numel(), k);
    }
  });
  // The in-place ops would each bump the versions; one bump per tensor written is enough to
  // invalidate saved copies.
  p.unsafeGetTensorImpl()->storage()->bump_version();
  if (momentum) s.momentum_buffer().unsafeGetTensorImpl()->storage()->bump_version();
}

}  // namespace detail

namespace {

/// Whether a parameter's SGD step can run in the fused CUDA kernels (its momentum buffer,
/// if it has one, included).
bool sgd_cuda_fusable(const Tensor& p, const OptimizerParamState* st, const SGDOptions& o) {
  if (!detail::cuda_fusable(p, p.grad())) return false;
  if (o.momentum() == 0 || st == nullptr) return true;
  return detail::cuda_state_fits(static_cast<const SGDParamState*>(st)->momentum_buffer(), p);
}

/// The fused CUDA step of `params` (all sgd_cuda_fusable). The buffers a parameter's first
/// momentum step needs are made (uninitialised: the kernel writes the gradient into them)
/// before anything is updated, so a CUDA out-of-memory error leaves parameters and state as
/// they were.
void sgd_step_cuda(const std::vector<Tensor>& params,
                   ParamStateMap& state,
                   const SGDOptions& o) {
  const bool momentum = o.momentum() != 0;
  std::vector<Tensor> grads, buffers;
  std::vector<uint8_t> first_step;
  std::vector<SGDParamState*> new_buffers;  // get theirs once the step is done
  for (const Tensor& p : params) {
    grads.push_back(p.grad().contiguous());
    if (!momentum) continue;
    auto& st = state[p.unsafeGetTensorImpl()];
    if (!st) st = std::make_unique<SGDParamState>();
    auto& s = static_cast<SGDParamState&>(*st);
    const bool first = !s.momentum_buffer().defined();
    buffers.push_back(first ? empty_like(p) : s.momentum_buffer());
    first_step.push_back(first ? 1 : 0);
    new_buffers.push_back(first ? &s : nullptr);
  }
  const cuda::SGDStepArgs args{o.lr(), o.momentum(), o.dampening(), o.weight_decay(), o.nesterov()};
  for (const std::vector<size_t>& group : detail::group_by_device_and_dtype(params)) {
    const std::vector<Tensor> ps = detail::pick(params, group);
    const std::vector<Tensor> bufs = momentum ? detail::pick(buffers, group) : std::vector<Tensor>{};
    cuda::sgd_step(ps, detail::pick(grads, group), bufs,
                   momentum ? detail::pick(first_step, group) : std::vector<uint8_t>{}, args);
    detail::bump_versions(ps);
    detail::bump_versions(bufs);
  }
  for (size_t i = 0; i < new_buffers.size(); ++i)
    if (new_buffers[i]) new_buffers[i]->momentum_buffer(buffers[i]);
}

}  // namespace

SGD::SGD(std::vector<OptimizerParamGroup> param_groups, SGDOptions defaults)
    : Optimizer(std::move(param_groups), checked(defaults)) {}
SGD::SGD(std::vector<Tensor> params, SGDOptions defaults) : Optimizer(std::move(params), checked(defaults)) {}

Tensor SGD::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  NoGradGuard no_grad;
  for (OptimizerParamGroup& group : param_groups_) {
    const auto& o = static_cast<const SGDOptions&>(group.options());
    std::vector<Tensor> on_cuda;  // stepped together by the fused kernels after the loop
    for (Tensor& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto st_it = state_.find(p.unsafeGetTensorImpl());
      if (sgd_cuda_fusable(p, st_it == state_.end() ? nullptr : st_it->second.get(), o)) {
        on_cuda.push_back(p);
        continue;
      }
      if (o.momentum() == 0) {
        SGDParamState no_buffer;  // plain SGD keeps no state
        detail::sgd_step(p, p.grad(), no_buffer, o);
        continue;
      }
      auto& st = state_[p.unsafeGetTensorImpl()];
      if (!st) st = std::make_unique<SGDParamState>();
      detail::sgd_step(p, p.grad(), static_cast<SGDParamState&>(*st), o);
    }
    if (!on_cuda.empty()) sgd_step_cuda(on_cuda, state_, o);
  }
  return loss;
}

}  // namespace ember::optim
