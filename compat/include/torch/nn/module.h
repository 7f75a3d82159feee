// <torch/nn/module.h> for ember: torch::nn::Module is ember::nn::Module.
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
