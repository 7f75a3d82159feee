// <torch/nn/options/transformercoder.h> for ember: torch::nn Options (ember::nn).
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
