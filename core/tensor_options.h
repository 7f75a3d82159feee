// TensorOptions: dtype, device and requires_grad for a factory function, as in libtorch:
//   ember::zeros({2, 3}, ember::TensorOptions().dtype(ember::kFloat64).requires_grad(true));
//   ember::ones({4}, ember::kInt64);   ember::randn({2}, ember::requires_grad());
#pragma once

#include <optional>

#include "ember/core/device.h"
#include "ember/core/dtype.h"

namespace ember {

/// The dtype factory functions use when none is given (torch.get_default_dtype()).
ScalarType get_default_dtype();
void set_default_dtype(ScalarType t);

class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(ScalarType t) : dtype_(t) {}            // NOLINT: implicit as in libtorch
  TensorOptions(Device d) : device_(d) {}               // NOLINT
  TensorOptions(DeviceType d) : device_(Device(d)) {}   // NOLINT

  TensorOptions dtype(ScalarType t) const { auto o = *this; o.dtype_ = t; return o; }
  TensorOptions dtype(std::optional<ScalarType> t) const { auto o = *this; o.dtype_ = t; return o; }
  TensorOptions device(Device d) const { auto o = *this; o.device_ = d; return o; }
  TensorOptions requires_grad(bool r) const { auto o = *this; o.requires_grad_ = r; return o; }

  ScalarType dtype() const { return dtype_.value_or(get_default_dtype()); }
  bool has_dtype() const { return dtype_.has_value(); }
  Device device() const { return device_.value_or(Device(kCPU)); }
  bool has_device() const { return device_.has_value(); }
  bool requires_grad() const { return requires_grad_; }

 private:
  std::optional<ScalarType> dtype_;
  std::optional<Device> device_;
  bool requires_grad_ = false;
};

inline TensorOptions dtype(ScalarType t) { return TensorOptions().dtype(t); }
inline TensorOptions device(Device d) { return TensorOptions().device(d); }
inline TensorOptions requires_grad(bool r = true) { return TensorOptions().requires_grad(r); }

}  // namespace ember
