// <torch/types.h> for ember: torch::Tensor, torch::Dtype, torch::kFloat32, torch::Device, ...
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
