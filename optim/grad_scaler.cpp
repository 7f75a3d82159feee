// GradScaler (optim/grad_scaler.h): PyTorch's torch/amp/grad_scaler.py state machine (per
// optimizer: ready -> unscaled -> stepped, reset by update()), its error messages, and the two
// fused operations beneath it, on the CPU here and on CUDA through cuda/amp.h. The arithmetic
// of both devices is cuda/amp_math.h's.
#include "ember/optim/grad_scaler.h"
#include "ember/optim/dict_int.h"

#include <atomic>
#include <iostream>

#include "ember/autograd/grad_mode.h"
#include "ember/core/ops/creation.h"
#include "ember/core/tensor_iter.h"
#include "ember/cuda/amp.h"
#include "ember/cuda/amp_math.h"
#include "ember/cuda/runtime/device.h"

namespace ember::amp {
namespace {

using Dict = OrderedDict<std::string, Tensor>;
/// Devices as map keys: (type, index), GradScaler's DeviceKey.
using DeviceKey = std::pair<int, int>;

/// Elements per thread below which the CPU unscale stays serial (a multiply and two compares
/// per element: thread start-up would dominate smaller gradients).
constexpr int64_t kUnscaleGrain = 32768;

/// One contiguous CPU gradient: g *= inv_scale; returns whether any element is inf/NaN.
template <class T>
bool unscale_cpu(const Tensor& g, float inv_scale) {
  using M = opmath_t<T>;
  T* data = g.data_ptr<T>();
  std::atomic<bool> non_finite{false};
  parallel_for(g.numel(), kUnscaleGrain, [&](int64_t begin, int64_t end) {
    bool local = false;
    for (int64_t i = begin; i < end; ++i) {
      const M v = static_cast<M>(data[i]);
      if (!amp_math::is_finite(v)) local = true;
      if (inv_scale != 1.f) data[i] = static_cast<T>(amp_math::unscale(v, inv_scale));
    }
    if (local) non_finite.store(true, std::memory_order_relaxed);
  });
  return non_finite.load();
}

/// A 1-element float32 tensor on `device` (found_inf, inv_scale).
void check_flag(const Tensor& t, Device device, const char* name) {
  EMBER_CHECK(t.defined() && t.dtype() == kFloat && t.numel() == 1 && t.device() == device,
              "_amp_foreach_non_finite_check_and_unscale_: ", name, " must be a 1-element float32 tensor on ",
              device);
}

DeviceKey device_key(Device d) { return {static_cast<int>(d.type()), d.index()}; }

/// PyTorch's _MultiDeviceReplicator: copies of one tensor, made once per device asked for.
class PerDevice {
 public:
  explicit PerDevice(Tensor master) : master_(std::move(master)) {}
  const Tensor& get(Device device) {
    auto [it, inserted] = copies_.try_emplace(device_key(device));
    if (inserted)
      it->second = master_.device() == device ? master_ : master_.to(device, false, /*copy=*/true);
    return it->second;
  }
  std::map<DeviceKey, Tensor> take() { return std::move(copies_); }

 private:
  Tensor master_;
  std::map<DeviceKey, Tensor> copies_;
};

}  // namespace

// ---- the fused operations ------------------------------------------------------------------

void non_finite_check_and_unscale_(const std::vector<Tensor>& grads, const Tensor& found_inf,
                                   const Tensor& inv_scale) {
  if (grads.empty()) return;
  const Device device = grads.front().device();
  check_flag(found_inf, device, "found_inf");
  check_flag(inv_scale, device, "inv_scale");
  for (const Tensor& g : grads)
    EMBER_CHECK(
        g.defined() && g.device() == device && is_floating_point(g.dtype()),
        "_amp_foreach_non_finite_check_and_unscale_: the gradients must be floating tensors on one device");
  NoGradGuard no_grad;
  // The kernels take contiguous memory; a strided gradient is unscaled in a copy written back.
  std::vector<Tensor> work;
  work.reserve(grads.size());
  for (const Tensor& g : grads) work.push_back(g.is_contiguous() ? g : g.contiguous());
  if (device.is_cuda()) {
    // One fused launch sequence per dtype.
    std::map<ScalarType, std::vector<Tensor>> by_dtype;
    for (const Tensor& w : work) by_dtype[w.dtype()].push_back(w);
    for (const auto& [dtype, list] : by_dtype)
      cuda::amp_non_finite_check_and_unscale(list, found_inf, inv_scale);
  } else {
    const float inv = inv_scale.item<float>();
    bool non_finite = false;
    for (const Tensor& w : work)
      non_finite |= visit_float_dtype(w.dtype(), "_amp_foreach_non_finite_check_and_unscale_",
                                      [&]<typename T>() { return unscale_cpu<T>(w, inv); });
    if (non_finite) Tensor(found_inf).fill_(1.0);
  }
  for (size_t i = 0; i < grads.size(); ++i)
    if (!work[i].is_same(grads[i])) Tensor(grads[i]).copy_(work[i]);
}

void update_scale_(const Tensor& current_scale, const Tensor& growth_tracker, const Tensor& found_inf,
                   double growth_factor, double backoff_factor, int64_t growth_interval) {
  if (current_scale.is_cuda()) {
    cuda::amp_update_scale(current_scale, growth_tracker, found_inf, growth_factor, backoff_factor,
                           growth_interval);
    return;
  }
  EMBER_CHECK(current_scale.dtype() == kFloat && current_scale.numel() == 1,
              "_amp_update_scale_: current_scale must be a 1-element float32 tensor");
  EMBER_CHECK(growth_tracker.dtype() == kInt && growth_tracker.numel() == 1 && growth_tracker.is_cpu(),
              "_amp_update_scale_: growth_tracker must be a 1-element int32 tensor on the scale's device");
  EMBER_CHECK(found_inf.dtype() == kFloat && found_inf.numel() == 1 && found_inf.is_cpu(),
              "_amp_update_scale_: found_inf must be a 1-element float32 tensor on the scale's device");
  amp_math::update_scale(*current_scale.data_ptr<float>(), *growth_tracker.data_ptr<int32_t>(),
                         *found_inf.data_ptr<float>(), growth_factor, backoff_factor, growth_interval);
}

// ---- GradScaler ------------------------------------------------------------------------------

GradScaler::GradScaler(const std::string& device, const GradScalerOptions& options)
    : device_type_(Device(device).type()), enabled_(options.enabled()) {
  if (device_type_ == kCUDA && enabled_ && !cuda::is_available()) {
    std::cerr
        << "UserWarning: torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.\n";
    enabled_ = false;
  }
  if (!enabled_) return;
  EMBER_CHECK(options.growth_factor() > 1.0, "The growth factor must be > 1.0.");
  EMBER_CHECK(options.backoff_factor() < 1.0, "The backoff factor must be < 1.0.");
  init_scale_ = options.init_scale();
  growth_factor_ = options.growth_factor();
  backoff_factor_ = options.backoff_factor();
  growth_interval_ = options.growth_interval();
}

void GradScaler::check_scale_growth_tracker(const char* funcname) const {
  const char* fix =
      "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration.";
  EMBER_CHECK(scale_.defined(), "Attempted ", funcname, " but _scale is None.  ", fix);
  EMBER_CHECK(growth_tracker_.defined(), "Attempted ", funcname, " but _growth_tracker is None.  ", fix);
}

void GradScaler::lazy_init_scale_growth_tracker(Device device) {
  scale_ = full({}, init_scale_, TensorOptions().dtype(kFloat).device(device));
  growth_tracker_ = full({}, init_growth_tracker_, TensorOptions().dtype(kInt).device(device));
}

Tensor GradScaler::scale(const Tensor& outputs) {
  if (!enabled_) return outputs;
  if (!scale_.defined()) lazy_init_scale_growth_tracker(outputs.device());
  return outputs * (scale_.device() == outputs.device() ? scale_ : scale_.to(outputs.device()));
}

std::vector<Tensor> GradScaler::scale(const std::vector<Tensor>& outputs) {
  if (!enabled_) return outputs;
  std::vector<Tensor> scaled;
  scaled.reserve(outputs.size());
  if (outputs.empty()) return scaled;
  if (!scale_.defined()) lazy_init_scale_growth_tracker(outputs.front().device());
  PerDevice scales(scale_);
  for (const Tensor& out : outputs) scaled.push_back(out * scales.get(out.device()));
  return scaled;
}

void GradScaler::unscale_(optim::Optimizer& optimizer) {
  if (!enabled_) return;
  check_scale_growth_tracker("unscale_");
  OptimizerState& state = per_optimizer_states_[&optimizer];
  EMBER_CHECK(state.stage != Stage::kUnscaled,
              "unscale_() has already been called on this optimizer since the last update().");
  EMBER_CHECK(state.stage != Stage::kStepped, "unscale_() is being called after step().");

  NoGradGuard no_grad;
  // The reciprocal in double, rounded once to float (as PyTorch: float division may be
  // imprecise under some compile options).
  const Tensor inv_scale = scale_.to(kDouble).reciprocal().to(kFloat);
  PerDevice inv_scales(inv_scale);
  PerDevice found_infs(zeros({}, TensorOptions().dtype(kFloat).device(scale_.device())));

  // The gradients by device and dtype, each set unscaled in one fused pass.
  std::map<DeviceKey, std::map<ScalarType, std::vector<Tensor>>> grads;
  std::map<DeviceKey, Device> devices;
  for (const optim::OptimizerParamGroup& group : optimizer.param_groups()) {
    for (const Tensor& p : group.params()) {
      Tensor g = p.grad();
      if (!g.defined()) continue;
      EMBER_CHECK(g.dtype() != kHalf, "Attempting to unscale FP16 gradients.");
      grads[device_key(g.device())][g.dtype()].push_back(g);
      devices.emplace(device_key(g.device()), g.device());
    }
  }
  for (const auto& [key, per_dtype] : grads) {
    const Device device = devices.at(key);
    for (const auto& [dtype, list] : per_dtype)
      non_finite_check_and_unscale_(list, found_infs.get(device), inv_scales.get(device));
  }
  state.found_inf_per_device = found_infs.take();
  state.stage = Stage::kUnscaled;
}

Tensor GradScaler::step(optim::Optimizer& optimizer, optim::Optimizer::LossClosure closure) {
  if (!enabled_) return optimizer.step(std::move(closure));
  EMBER_CHECK(!closure, "Closure use is not currently supported if GradScaler is enabled.");
  check_scale_growth_tracker("step");
  EMBER_CHECK(per_optimizer_states_[&optimizer].stage != Stage::kStepped,
              "step() has already been called since the last update().");
  if (per_optimizer_states_[&optimizer].stage == Stage::kReady) unscale_(optimizer);
  OptimizerState& state = per_optimizer_states_[&optimizer];
  EMBER_CHECK(!state.found_inf_per_device.empty(), "No inf checks were recorded for this optimizer.");
  Tensor retval;
  if (!found_inf(optimizer)) retval = optimizer.step();  // found_inf waits for the device once
  state.stage = Stage::kStepped;
  return retval;
}

bool GradScaler::found_inf(const optim::Optimizer& optimizer) const {
  auto it = per_optimizer_states_.find(&optimizer);
  if (it == per_optimizer_states_.end()) return false;
  for (const auto& [key, flag] : it->second.found_inf_per_device)
    if (flag.item<float>() != 0.f) return true;
  return false;
}

void GradScaler::update() {
  if (!enabled_) return;
  check_scale_growth_tracker("update");
  // Every optimizer's flags summed on the scale's device: nonzero if any found an inf/NaN.
  Tensor combined;
  {
    NoGradGuard no_grad;
    for (const auto& [opt, state] : per_optimizer_states_) {
      for (const auto& [key, flag] : state.found_inf_per_device) {
        Tensor f = flag.device() == scale_.device() ? flag : flag.to(scale_.device());
        combined = combined.defined() ? combined + f : f;
      }
    }
  }
  EMBER_CHECK(combined.defined(), "No inf checks were recorded prior to update.");
  update_scale_(scale_, growth_tracker_, combined, growth_factor_, backoff_factor_, growth_interval_);
  per_optimizer_states_.clear();
}

void GradScaler::update(double new_scale) {
  if (!enabled_) return;
  check_scale_growth_tracker("update");
  scale_.fill_(new_scale);
  per_optimizer_states_.clear();
}

void GradScaler::update(const Tensor& new_scale) {
  if (!enabled_) return;
  check_scale_growth_tracker("update");
  const char* reason =
      "new_scale should be a float or a 1-element torch.cuda.FloatTensor or torch.FloatTensor with "
      "requires_grad=False.";
  EMBER_CHECK(new_scale.device().type() == device_type_, reason);
  EMBER_CHECK(new_scale.numel() == 1, reason);
  EMBER_CHECK(!new_scale.requires_grad(), reason);
  NoGradGuard no_grad;
  scale_.copy_(new_scale.reshape({}));
  per_optimizer_states_.clear();
}

double GradScaler::get_scale() const {
  if (!enabled_) return 1.0;
  return scale_.defined() ? scale_.item<double>() : init_scale_;
}

int64_t GradScaler::growth_tracker_value() const {
  if (!enabled_) return 0;
  return growth_tracker_.defined() ? growth_tracker_.item<int64_t>() : init_growth_tracker_;
}

Dict GradScaler::state_dict() const {
  Dict d;
  if (!enabled_) return d;
  d.insert("scale", optim::detail::dict_scalar(get_scale()));
  d.insert("growth_factor", optim::detail::dict_scalar(growth_factor_));
  d.insert("backoff_factor", optim::detail::dict_scalar(backoff_factor_));
  d.insert("growth_interval",
           optim::detail::dict_scalar(static_cast<double>(growth_interval_), /*integral=*/true));
  d.insert("_growth_tracker",
           optim::detail::dict_scalar(static_cast<double>(growth_tracker_value()), /*integral=*/true));
  return d;
}

void GradScaler::load_state_dict(const Dict& state_dict) {
  if (!enabled_) return;
  EMBER_CHECK(!state_dict.is_empty(),
              "The source state dict is empty, possibly because it was saved from a disabled instance of "
              "GradScaler.");
  auto value = [&](const char* key) {
    return optim::detail::dict_value(state_dict, key, "GradScaler state_dict");
  };
  // Read every entry before changing anything, so a dict missing one changes nothing.
  const double scale = value("scale");
  const double growth_factor = value("growth_factor");
  const double backoff_factor = value("backoff_factor");
  const int64_t growth_interval =
      optim::detail::dict_int(state_dict, "growth_interval", "GradScaler state_dict");
  const int64_t growth_tracker =
      optim::detail::dict_int(state_dict, "_growth_tracker", "GradScaler state_dict");
  init_scale_ = scale;
  if (scale_.defined()) scale_.fill_(scale);
  growth_factor_ = growth_factor;
  backoff_factor_ = backoff_factor;
  growth_interval_ = growth_interval;
  init_growth_tracker_ = growth_tracker;
  if (growth_tracker_.defined()) growth_tracker_.fill_(init_growth_tracker_);
}

}  // namespace ember::amp
