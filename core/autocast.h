// Autocast (automatic mixed precision): PyTorch's torch.autocast with libtorch's spellings.
// A per-thread, per-device-type state (enabled flag and lower-precision dtype: CPU defaults
// to bfloat16, CUDA to float16), the RAII AutocastGuard, the weight-cast cache, and the
// entry hook that casts an op's tensor arguments by the op's policy.
//
// Note [Autocast entry]
// PyTorch casts in a dispatcher layer that runs before the op's own checks (mm's "same
// dtype" check, shape inference), then redispatches with autocast excluded so that the
// ops a composite calls (linear -> matmul -> mm) are not cast a second time. ember does the
// same at the top of an op's public function:
//
//   Tensor mm(const Tensor& a, const Tensor& b) {
//     if (autocast::is_active()) [[unlikely]]
//       return autocast::call(Mm::kAutocast, [](const Tensor& x, const Tensor& y) { return mm(x, y); }, a, b);
//     ... checks, OutSpec from the (already cast) inputs, run_op ...
//
// The op's policy is a property of its struct (`kAutocast`, per device type: PyTorch's CPU
// and CUDA lists differ); `call` casts the Tensor arguments by it, runs the function with
// autocast excluded, and the casts are ordinary recorded ops (gradients flow back to the
// inputs in their own dtype). When autocast is off anywhere on the thread, the whole cost is
// the one thread-local byte load in is_active().
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "ember/core/device.h"
#include "ember/core/dtype.h"
#include "ember/core/tensor.h"

namespace ember {

/// How an op's floating inputs are cast inside an autocast region (PyTorch's CastPolicy).
enum class AutocastPolicy : uint8_t {
  kNone,            // run as given
  kLowerPrecision,  // cast float32 (and other lower-precision) inputs to the autocast dtype
  kFloat32,         // cast lower-precision inputs up to float32
  kPromote,         // cast to the widest floating type among the inputs
};

/// An op's policy on each device type (PyTorch keeps one list per device).
struct AutocastPolicies {
  AutocastPolicy cpu = AutocastPolicy::kNone;
  AutocastPolicy cuda = AutocastPolicy::kNone;
  constexpr AutocastPolicy on(DeviceType t) const { return t == kCUDA ? cuda : cpu; }
};

namespace autocast {

/// The common policy pairs, named for PyTorch's lists an op is on.
inline constexpr AutocastPolicies kLowerPrecisionBoth{AutocastPolicy::kLowerPrecision,
                                                       AutocastPolicy::kLowerPrecision};
inline constexpr AutocastPolicies kFloat32Both{AutocastPolicy::kFloat32, AutocastPolicy::kFloat32};
inline constexpr AutocastPolicies kFloat32CudaOnly{AutocastPolicy::kNone, AutocastPolicy::kFloat32};
inline constexpr AutocastPolicies kLowerPrecisionCudaOnly{AutocastPolicy::kNone, AutocastPolicy::kLowerPrecision};
inline constexpr AutocastPolicies kPromoteCudaOnly{AutocastPolicy::kNone, AutocastPolicy::kPromote};

// ---- libtorch's state functions (at::autocast::*) -----------------------------------------
void set_autocast_enabled(DeviceType device_type, bool enabled);
bool is_autocast_enabled(DeviceType device_type);
void set_autocast_dtype(DeviceType device_type, ScalarType dtype);
ScalarType get_autocast_dtype(DeviceType device_type);
void set_autocast_cache_enabled(bool enabled);
bool is_autocast_cache_enabled();
/// Drops every cached weight cast (the outermost guard's exit does this).
void clear_autocast_cache();
/// Region depth, as torch.autocast's __enter__/__exit__ count it; returns the new depth.
int increment_nesting();
int decrement_nesting();
/// Number of casts held by the weight-cast cache (for tests).
size_t cached_cast_count();

namespace detail {
/// One bit per device type whose autocast is enabled, 0 while excluded (inside an op that
/// autocast already handled). Constant-initialised, so reading it needs no TLS wrapper call;
/// initial-exec (libember is linked, not dlopen()ed late), so it is one TLS-relative load
/// rather than a __tls_get_addr call from the shared library's code.
__attribute__((tls_model("initial-exec"))) extern constinit thread_local uint8_t t_active;

/// Excludes autocast for the ops run inside an autocast entry (PyTorch's
/// ExcludeDispatchKeyGuard on the Autocast keys).
class ExcludeGuard {
 public:
  ExcludeGuard();
  ~ExcludeGuard();
  ExcludeGuard(const ExcludeGuard&) = delete;
  ExcludeGuard& operator=(const ExcludeGuard&) = delete;
};

/// Whether `t` takes part: defined, on device_type, floating, not float64 (PyTorch leaves
/// double alone).
bool eligible(const Tensor& t, DeviceType device_type);
/// Folds one eligible dtype into kPromote's running widest type.
ScalarType promote(std::optional<ScalarType> current, ScalarType next, DeviceType device_type);
/// `t` cast to `to` when eligible (through the weight-cast cache for leaf weights), else t.
Tensor cast(const Tensor& t, ScalarType to, DeviceType device_type);

// Argument visitors: Tensors, optional Tensors and Tensor lists take part, all else passes.
inline void first_device(const Tensor& t, std::optional<DeviceType>& d) {
  if (!d && t.defined()) d = t.device().type();
}
inline void first_device(const std::optional<Tensor>& t, std::optional<DeviceType>& d) {
  if (t) first_device(*t, d);
}
inline void first_device(const TensorList& l, std::optional<DeviceType>& d) {
  for (const Tensor& t : l) first_device(t, d);
}
template <class T>
void first_device(const T&, std::optional<DeviceType>&) {}

inline void widest(const Tensor& t, DeviceType dev, std::optional<ScalarType>& w) {
  if (eligible(t, dev)) w = promote(w, t.dtype(), dev);
}
inline void widest(const std::optional<Tensor>& t, DeviceType dev, std::optional<ScalarType>& w) {
  if (t) widest(*t, dev, w);
}
inline void widest(const TensorList& l, DeviceType dev, std::optional<ScalarType>& w) {
  for (const Tensor& t : l) widest(t, dev, w);
}
template <class T>
void widest(const T&, DeviceType, std::optional<ScalarType>&) {}

inline Tensor cast_arg(const Tensor& t, ScalarType to, DeviceType dev) { return cast(t, to, dev); }
inline std::optional<Tensor> cast_arg(const std::optional<Tensor>& t, ScalarType to, DeviceType dev) {
  if (!t) return t;
  return cast(*t, to, dev);
}
inline TensorList cast_arg(const TensorList& l, ScalarType to, DeviceType dev) {
  TensorList out;
  out.reserve(l.size());
  for (const Tensor& t : l) out.push_back(cast(t, to, dev));
  return out;
}
template <class T>
const T& cast_arg(const T& v, ScalarType, DeviceType) {
  return v;
}
}  // namespace detail

/// Whether any device's autocast is on for this thread and not excluded: the hot-path test.
inline bool is_active() { return detail::t_active != 0; }

/// Casts the Tensor arguments of an op by `policies` on their device type and calls `fn`
/// with them, autocast excluded (Note [Autocast entry]). With autocast off for that device,
/// or nothing to cast to, `fn` gets the arguments unchanged (still excluded, as PyTorch's
/// autocast kernels redispatch the same way).
template <class F, class... Args>
decltype(auto) call(AutocastPolicies policies, F&& fn, const Args&... args) {
  std::optional<DeviceType> dev;
  (detail::first_device(args, dev), ...);
  const DeviceType d = dev.value_or(kCPU);
  std::optional<ScalarType> to;
  if (is_autocast_enabled(d)) {
    switch (policies.on(d)) {
      case AutocastPolicy::kNone: break;
      case AutocastPolicy::kLowerPrecision: to = get_autocast_dtype(d); break;
      case AutocastPolicy::kFloat32: to = kFloat; break;
      case AutocastPolicy::kPromote: (detail::widest(args, d, to), ...); break;
    }
  }
  if (!to) {
    detail::ExcludeGuard exclude;
    return fn(args...);
  }
  // Evaluated before the guard: the casts themselves run with autocast still on (they are
  // copies, which no policy touches).
  auto cast_args = std::make_tuple(detail::cast_arg(args, *to, d)...);
  detail::ExcludeGuard exclude;
  return std::apply(fn, cast_args);
}

}  // namespace autocast

/// RAII autocast region for one device type, torch.autocast(device_type, dtype, enabled,
/// cache_enabled): sets the state on entry and restores the previous state on exit (also
/// when unwinding from an exception). The outermost region's exit clears the weight-cast
/// cache. A guard with enabled=false turns autocast off inside an enclosing region.
class AutocastGuard {
 public:
  explicit AutocastGuard(DeviceType device_type, std::optional<ScalarType> dtype = std::nullopt,
                         bool enabled = true, std::optional<bool> cache_enabled = std::nullopt);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  DeviceType device_type_;
  bool prev_enabled_;
  ScalarType prev_dtype_;
  bool prev_cache_enabled_;
};

}  // namespace ember
