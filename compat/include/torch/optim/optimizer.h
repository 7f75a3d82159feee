// <torch/optim/optimizer.h> for ember: torch::optim::Optimizer and its param groups.
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
