// <torch/optim/adam.h> for ember: torch::optim::Adam and AdamOptions.
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
