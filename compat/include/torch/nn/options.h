// <torch/nn/options.h> for ember: every torch::nn Options class.
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
