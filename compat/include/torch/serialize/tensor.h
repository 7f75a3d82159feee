// <torch/serialize/tensor.h> for ember: torch::save / torch::load of tensors (safetensors files).
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
