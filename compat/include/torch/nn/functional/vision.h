// <torch/nn/functional/vision.h> for ember: torch::nn::functional::affine_grid and grid_sample.
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
