// <torch/optim/rmsprop.h> for ember: torch::optim::RMSprop and RMSpropOptions.
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
