// <torch/nn/modules.h> for ember: every torch::nn layer and container.
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
