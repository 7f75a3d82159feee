// <torch/nn/modules/container/sequential.h> for ember: a torch::nn container (ember::nn).
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
