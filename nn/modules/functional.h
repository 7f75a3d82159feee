// nn::Functional: a plain function as a module, so it can sit in a Sequential, as libtorch's
// torch::nn::Functional: `Sequential(Linear(4, 8), Functional(ember::relu))`, or with extra
// arguments bound after the input: `Functional(ember::leaky_relu, 0.2)`,
// `Functional(ember::log_softmax, 1, std::nullopt)`. It has no parameters and, as in libtorch,
// is not serializable (a function cannot be saved).
#pragma once

#include <functional>
#include <type_traits>
#include <utility>

#include "ember/core/tensor.h"
#include "ember/nn/cloneable.h"
#include "ember/nn/module_holder.h"

namespace ember {
namespace nn {

class FunctionalImpl : public Cloneable<FunctionalImpl> {
 public:
  using Function = std::function<Tensor(Tensor)>;

  explicit FunctionalImpl(Function function) : function_(std::move(function)) {}
  /// Binds args after the input: forward(x) calls original_function(x, args...).
  template <class SomeFunction, class... Args, class = std::enable_if_t<(sizeof...(Args) > 0)>>
  explicit FunctionalImpl(SomeFunction original_function, Args&&... args)
      : function_(std::bind(original_function, std::placeholders::_1, std::forward<Args>(args)...)) {}

  void reset() override {}
  Tensor forward(Tensor input) { return function_(std::move(input)); }
  Tensor operator()(Tensor input) { return forward(std::move(input)); }
  bool is_serializable() const override { return false; }

 private:
  Function function_;
};
EMBER_MODULE(Functional);

}  // namespace nn
}  // namespace ember
