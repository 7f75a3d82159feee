// <torch/nn/utils/clip_grad.h> for ember: torch::nn::utils::clip_grad_norm_ and clip_grad_value_.
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
