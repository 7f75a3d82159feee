// <torch/optim/sgd.h> for ember: torch::optim::SGD and SGDOptions.
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
