// <torch/nn/init.h> for ember: torch::nn::init is ember::nn::init.
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
