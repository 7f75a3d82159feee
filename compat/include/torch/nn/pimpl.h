// <torch/nn/pimpl.h> for ember: TORCH_MODULE and torch::nn::ModuleHolder.
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
