// <torch/optim/lbfgs.h> for ember: torch::optim::LBFGS and LBFGSOptions.
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
