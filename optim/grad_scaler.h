// ember::amp::GradScaler: dynamic loss scaling for mixed-precision training, PyTorch's
// torch.amp.GradScaler (scale the loss so small float16 gradients do not flush to zero,
// unscale the gradients before the optimizer uses them, skip steps whose gradients overflowed
// and adapt the scale), plus the two fused operations beneath it, PyTorch's
// _amp_foreach_non_finite_check_and_unscale_ and _amp_update_scale_.
//
//   amp::GradScaler scaler("cuda");
//   for (...) {
//     optimizer.zero_grad();
//     Tensor loss = ...;
//     scaler.scale(loss).backward();
//     scaler.unscale_(optimizer);                       // optional: to clip unscaled gradients
//     nn::utils::clip_grad_norm_(model->parameters(), 1.0);
//     scaler.step(optimizer);                           // skipped when a gradient is inf/NaN
//     scaler.update();
//   }
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ember/core/device.h"
#include "ember/core/ordered_dict.h"
#include "ember/core/tensor.h"
#include "ember/core/arg.h"
#include "ember/optim/optimizer.h"

namespace ember::amp {

/// GradScaler's options with PyTorch's defaults (`GradScalerOptions().growth_interval(100)`).
struct GradScalerOptions {
  /// The scale before any update.
  EMBER_ARG(double, init_scale) = 65536.0;
  /// Multiplies the scale after growth_interval consecutive steps without inf/NaN gradients.
  EMBER_ARG(double, growth_factor) = 2.0;
  /// Multiplies the scale after a step with inf/NaN gradients.
  EMBER_ARG(double, backoff_factor) = 0.5;
  EMBER_ARG(int64_t, growth_interval) = 2000;
  /// false: every method passes through (step just steps; scale returns its input).
  EMBER_ARG(bool, enabled) = true;
};

/// PyTorch's GradScaler. Its scale lives in a 0-dim float32 tensor (with an int32 growth
/// tracker) created by the first scale() on the outputs' device; unscale_ and update run on
/// that device without waiting for it; step() reads whether any gradient was inf/NaN (one
/// wait, as PyTorch's). Optimizers are told apart by address.
class GradScaler {
 public:
  /// `device` is the device type the scaler serves ("cuda" or "cpu", PyTorch's default
  /// "cuda"). A "cuda" scaler without a CUDA device disables itself, as PyTorch's does.
  explicit GradScaler(const std::string& device = "cuda", const GradScalerOptions& options = {});
  explicit GradScaler(const GradScalerOptions& options) : GradScaler("cuda", options) {}

  /// outputs * scale (the outputs unchanged when disabled). The first call creates the scale
  /// on the outputs' device.
  Tensor scale(const Tensor& outputs);
  /// Each output times the scale (copied once to each device the outputs are on).
  std::vector<Tensor> scale(const std::vector<Tensor>& outputs);

  /// Divides the gradients of `optimizer`'s parameters by the scale in place and records,
  /// per device, whether any was inf/NaN. At most once per optimizer between update()s, and
  /// not after step(); float16 gradients are refused (keep float32 master weights).
  void unscale_(optim::Optimizer& optimizer);

  /// Unscales (unless unscale_ already did) and runs optimizer.step() unless a gradient was
  /// inf/NaN, in which case the parameters are left exactly as they are. Returns step()'s
  /// result (undefined when skipped). A closure is refused while enabled, as in PyTorch.
  Tensor step(optim::Optimizer& optimizer, optim::Optimizer::LossClosure closure = nullptr);

  /// Updates the scale from this iteration's inf/NaN checks (backoff after an overflow,
  /// growth after growth_interval clean steps) and forgets the per-optimizer state.
  void update();
  /// Sets the scale to `new_scale` instead (the growth tracker is kept).
  void update(double new_scale);
  /// Sets the scale to the value of a 1-element tensor of this scaler's device type that
  /// does not require grad.
  void update(const Tensor& new_scale);

  /// The current scale (one wait for the device), init_scale before the first scale(), 1
  /// when disabled.
  double get_scale() const;
  double get_growth_factor() const { return growth_factor_; }
  void set_growth_factor(double new_factor) { growth_factor_ = new_factor; }
  double get_backoff_factor() const { return backoff_factor_; }
  void set_backoff_factor(double new_factor) { backoff_factor_ = new_factor; }
  int64_t get_growth_interval() const { return growth_interval_; }
  void set_growth_interval(int64_t new_interval) { growth_interval_ = new_interval; }
  bool is_enabled() const { return enabled_; }
  /// Whether the last unscale_/step of `optimizer` since update() found an inf/NaN gradient
  /// (PyTorch's step(..., return_found_inf=True)); false when it has not been checked.
  bool found_inf(const optim::Optimizer& optimizer) const;

  /// PyTorch's keys as 0-dim tensors: "scale", "growth_factor", "backoff_factor" (float64),
  /// "growth_interval", "_growth_tracker" (int64). Empty when disabled.
  OrderedDict<std::string, Tensor> state_dict() const;
  /// Restores a state_dict() (nothing when disabled; an empty dict is an error).
  void load_state_dict(const OrderedDict<std::string, Tensor>& state_dict);

 private:
  enum class Stage { kReady, kUnscaled, kStepped };
  /// Devices as map keys: (type, index).
  using DeviceKey = std::pair<int, int>;
  struct OptimizerState {
    Stage stage = Stage::kReady;
    std::map<DeviceKey, Tensor> found_inf_per_device;
  };

  void check_scale_growth_tracker(const char* funcname) const;
  void lazy_init_scale_growth_tracker(Device device);
  int64_t growth_tracker_value() const;

  DeviceType device_type_;
  bool enabled_;
  double init_scale_ = 65536.0;
  double growth_factor_ = 2.0;
  double backoff_factor_ = 0.5;
  int64_t growth_interval_ = 2000;
  int64_t init_growth_tracker_ = 0;
  Tensor scale_;           // 0-dim float32, made by the first scale()
  Tensor growth_tracker_;  // 0-dim int32, made with scale_
  std::map<const optim::Optimizer*, OptimizerState> per_optimizer_states_;
};

/// PyTorch's _amp_foreach_non_finite_check_and_unscale_: grads[i] *= inv_scale in place (in
/// float for the 16-bit types) and found_inf = 1 if any element of any gradient is inf/NaN
/// (left as it is otherwise). found_inf and inv_scale are 1-element float32 tensors on the
/// gradients' device; the gradients are floating tensors on one device (any dtypes, any
/// layout). CPU gradients take one pass each; CUDA ones one fused kernel per dtype.
void non_finite_check_and_unscale_(const std::vector<Tensor>& grads, const Tensor& found_inf,
                                   const Tensor& inv_scale);

/// PyTorch's _amp_update_scale_: the update rule of GradScaler::update() applied to
/// current_scale (1-element float32) and growth_tracker (1-element int32) from found_inf
/// (1-element float32), all on one device; on CUDA without waiting for it.
void update_scale_(const Tensor& current_scale, const Tensor& growth_tracker, const Tensor& found_inf,
                   double growth_factor, double backoff_factor, int64_t growth_interval);

}  // namespace ember::amp
