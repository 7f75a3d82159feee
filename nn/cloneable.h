// Cloneable<Derived>: the base class of concrete modules (libtorch's torch::nn::Cloneable).
// It supplies clone(): copy the module, let reset() rebuild fresh parameters and children,
// then fill them with copies of this module's values, so the clone shares nothing.
#pragma once

#include <memory>
#include <optional>

#include "ember/autograd/grad_mode.h"
#include "ember/core/error.h"
#include "ember/nn/module.h"

namespace ember {
namespace nn {

template <class Derived>
class Cloneable : public Module {
 public:
  using Module::Module;

  /// (Re)creates every parameter, buffer and child; the constructor calls it, clone() too.
  virtual void reset() = 0;

  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override {
    NoGradGuard no_grad;
    const auto& self = static_cast<const Derived&>(*this);
    auto copy = std::make_shared<Derived>(self);
    copy->parameters_.clear();
    copy->buffers_.clear();
    copy->children_.clear();
    copy->reset();
    EMBER_CHECK(copy->parameters_.size() == parameters_.size(),
                "The cloned module does not have the same number of parameters as the original module. "
                "Did you forget to register some parameters in reset()?");
    for (const auto& item : parameters_) {
      if (!item.value().defined()) continue;
      Tensor& dst = copy->parameters_[item.key()];
      dst.set_data(copied(item.value(), device));
      dst.requires_grad_(item.value().requires_grad());
    }
    EMBER_CHECK(copy->buffers_.size() == buffers_.size(),
                "The cloned module does not have the same number of buffers as the original module. "
                "Did you forget to register some buffers in reset()?");
    for (const auto& item : buffers_) {
      if (!item.value().defined()) continue;
      copy->buffers_[item.key()].set_data(copied(item.value(), device));
    }
    EMBER_CHECK(copy->children_.size() == children_.size(),
                "The cloned module does not have the same number of child modules as the original module. "
                "Did you forget to register some submodules in reset()?");
    for (const auto& item : children_) copy->children_[item.key()]->clone_(*item.value(), device);
    copy->is_training_ = is_training_;
    return copy;
  }

 protected:
  /// Overwrites this (freshly reset) child with a clone of `other`, in place.
  void clone_(Module& other, const std::optional<Device>& device) final {
    std::shared_ptr<Module> cloned = other.clone(device);
    auto derived = std::dynamic_pointer_cast<Derived>(cloned);
    EMBER_CHECK(derived != nullptr,
                "Attempted to clone submodule, but it is of a different type than the submodule it was to be cloned into");
    static_cast<Derived&>(*this) = *derived;
  }

 private:
  static Tensor copied(const Tensor& t, const std::optional<Device>& device) {
    Tensor d = t.detach();
    return device && d.device() != *device ? d.to(*device, /*non_blocking=*/false, /*copy=*/true) : d.clone();
  }
};

}  // namespace nn
}  // namespace ember
