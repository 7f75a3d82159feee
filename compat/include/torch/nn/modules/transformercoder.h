// <torch/nn/modules/transformercoder.h> for ember: torch::nn layers (ember::nn).
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
