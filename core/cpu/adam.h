// Adam's fused step on the CPU (adam.cpp): one pass over a dense parameter, its gradient and
// its states, used by optim/adam.cpp (Adam and AdamW) where every tensor is a dense CPU float
// or double tensor of the parameter's shape.
#pragma once

#include <cstdint>

#include "ember/core/ops/optim_math.h"

namespace ember::cpu {

/// adam_element (optim_math.h) on elements i < n of p (parameter), g (gradient), m, v (the
/// moments) and vmax (the largest second moment, amsgrad; nullptr without it), in parallel
/// chunks; has_decay: AdamW's decoupled decay, has_l2: Adam's L2 term (not both). T: float
/// or double.
template <class T>
void adam_fused(T* p, const T* g, T* m, T* v, T* vmax, int64_t n, const AdamScalars<T>& k, bool has_decay,
                bool has_l2);

}  // namespace ember::cpu
