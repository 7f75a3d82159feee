// <torch/all.h> for ember: libtorch's whole C++ frontend, which is ember's whole public API
// (<ATen/ATen.h> includes <ember/ember.h>), under the `torch` namespace.
// torch::jit::load is in <torch/script.h>, as in libtorch.
#pragma once

#include <ATen/ATen.h>
