// <torch/nn/options/distance.h> for ember: the torch::nn Options libtorch declares here are ember::nn's.
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
