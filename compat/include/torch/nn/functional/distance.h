// <torch/nn/functional/distance.h> for ember: torch::nn::functional (ember::nn::functional).
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
