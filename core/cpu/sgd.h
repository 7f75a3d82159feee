// SGD's fused step on the CPU (sgd.cpp): one pass over a dense parameter, its gradient and its
// momentum buffer, used by optim/sgd.cpp where every tensor is a dense CPU float or double
// tensor of the parameter's shape.
#pragma once

#include <cstdint>

#include "ember/core/ops/optim_math.h"

namespace ember::cpu {

/// sgd_element (optim_math.h) on elements i < n of p (parameter), g (gradient) and buf (the
/// momentum buffer; nullptr without momentum), in parallel chunks. first: the buffer starts
/// at this step (its memory holds nothing yet; it receives the gradient). T: float or double.
template <class T>
void sgd_fused(T* p, const T* g, T* buf, bool first, int64_t n, const SgdScalars<T>& k);

}  // namespace ember::cpu
