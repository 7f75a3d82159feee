// <torch/nn/utils.h> for ember: torch::nn::utils (clip_grad_norm_, ...) is ember::nn::utils.
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
