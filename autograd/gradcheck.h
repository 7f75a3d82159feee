// gradcheck / gradgradcheck: compare autograd's gradients with finite differences
// (torch.autograd.gradcheck). Use float64 inputs; each input that requires grad is checked.
#pragma once

#include <functional>

#include "ember/core/tensor.h"

namespace ember::autograd {

using GradcheckFn = std::function<TensorList(const TensorList&)>;

struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
  /// Throw ember::Error describing the first mismatch (otherwise return false).
  bool raise_exception = true;
};

/// True when the analytical Jacobian of fn at `inputs` matches the numerical one.
bool gradcheck(const GradcheckFn& fn, const TensorList& inputs, GradcheckOptions options = {});
bool gradcheck(const std::function<Tensor(const TensorList&)>& fn, const TensorList& inputs,
               GradcheckOptions options = {});
/// The same check for second derivatives (the gradient of the gradient).
bool gradgradcheck(const GradcheckFn& fn, const TensorList& inputs, GradcheckOptions options = {});
bool gradgradcheck(const std::function<Tensor(const TensorList&)>& fn, const TensorList& inputs,
                   GradcheckOptions options = {});

}  // namespace ember::autograd
