// <torch/nn/cloneable.h> for ember: torch::nn::Cloneable is ember::nn::Cloneable.
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
